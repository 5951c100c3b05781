"""The generator's open-files limit is the generator's: a k6 process whose
share of the run's connections does not fit its RLIMIT_NOFILE is refused
before it connects, naming the limit, `ulimit -n` and the processes that
would fit (issue 41's run opened 19,989 of 50,000 connections and then
blamed the broker: broker_refused). EMFILE mid-run is the generator's cause
in the diagnosis: forced in Go (k6/extension/mqtt/open_files_linux_test.go)."""

import json
import shutil
import time

import pytest

from conftest import ROOT
from k6_runs import run_k6
from mqttbench import verdict_policy


@pytest.fixture
def k6_under_20000_files(k6_bin, tmp_path):
    """k6 run with an open-files limit of 20,000, soft and hard."""
    if not shutil.which("prlimit"):
        pytest.skip("prlimit (util-linux) is not installed")
    wrapper = tmp_path / "k6-nofile"
    wrapper.write_text(f'#!/bin/sh\nexec prlimit --nofile=20000:20000 {k6_bin} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def test_connections_over_the_open_files_limit_are_refused_before_any_connects(
    k6_under_20000_files, tmp_path, connection_counter
):
    run_id = f"nofile-{int(time.time() * 1000)}"
    env = {
        "MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}",
        "PUBLISHERS": "25000",
        "SUBSCRIBERS": "25000",
        "CONNECT_RATE": "100000",
        "DURATION": "5s",
        "RESULTS_DIR": str(tmp_path),
        "RUN_ID": run_id,
    }
    p, _ = run_k6(k6_under_20000_files, ROOT / "k6/scenarios/p2p.js", env=env, timeout=60)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-3000:]
    # 50,000 connections and k6's own 64 files, over 20,000: 3 processes fit.
    for said in ("50000 connections at once", "open-files limit of 20000", "`ulimit -n 50064`", "--instances 3"):
        assert said in out, out[-3000:]
    assert connection_counter.accepted == [], "it connected"
    assert not (tmp_path / f"{run_id}.json").exists(), "a result: the run started"
    # Its refusal, as a value its caller reads: the verdict package's cause, never the broker's.
    refusal = json.loads((tmp_path / f"{run_id}.refused.json").read_text())
    assert refusal["cause"] == verdict_policy.CAUSE_GENERATOR_OPEN_FILES, refusal
    assert "--instances 3" in refusal["message"], refusal
