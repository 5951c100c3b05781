"""The publishers' limits, with the real k6 build against the test stack's
Mosquitto: a rate beyond reach ends on its own with the verdict, bounded
memory and the result file; a signal stops a run within 5 s, writing it."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT
from k6_runs import run_k6
from mqttbench.k6.command import run_argv

P2P = ROOT / "k6/scenarios/p2p.js"


def p2p_env(stack, tmp_path, run_id, **extra):
    return {"MQTT_URL": stack.mqtt_url, "SCALE": "0.2", "RESULTS_DIR": str(tmp_path), "RUN_ID": run_id, **extra}


@pytest.mark.parametrize("qos", ["0", "1"])
def test_rate_at_the_ceiling_ends_on_its_own_with_the_verdict(stack, k6_bin, tmp_path, qos):
    env = p2p_env(stack, tmp_path, f"ceiling-q{qos}", RATE="10000000", DURATION="5s", QOS=qos)
    p, _ = run_k6(k6_bin, P2P, env=env, timeout=200)
    r = json.loads((tmp_path / f"ceiling-q{qos}.json").read_text())
    assert p.returncode == 99, (p.stdout + p.stderr)[-3000:]
    # The publishing ends at DURATION + max_lag (1 s) + at most one bounded
    # flush (2 s); what Mosquitto accepted meanwhile may take its
    # subscribers longer to receive (the drain: at most 120 s).
    step = r["steps"][0]
    assert (step["end"] - step["start"]) / 1000 <= 5 + 1 + 2 + 1, step
    assert step["missed"] > 0 and r["counts"]["mqtt_missed_sends"] == step["missed"]
    assert r["thresholds"]["mqtt_missed_sends count==0"] is False
    assert r["thresholds"]["mqtt_rate_shortfalls count==0"] is False
    assert r["rate_verdict"].startswith("target rate not reached")
    assert "target rate not reached" in p.stdout
    if qos == "0":  # no window: the scheduler could not send that fast
        assert "generator cannot reach the target rate" in r["rate_verdict"]
        assert r["diagnosis"]["cause"] == "generator", r["diagnosis"]
        assert "The generator cannot reach the target rate" in r["diagnosis"]["text"]
    else:  # the window binds first: the broker acknowledges far fewer
        assert r["diagnosis"]["cause"] == "broker_slow_acks", r["diagnosis"]
    assert r["generator"]["max_rss_kb"] < 1024 * 1024, r["generator"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_run_within_5_s_with_its_result_file(stack, k6_bin, tmp_path, sig):
    env = p2p_env(stack, tmp_path, f"signal-{sig.name}", DURATION="60s")
    args = run_argv(P2P, k6=k6_bin, quiet=True)
    proc = subprocess.Popen(
        args,
        env=dict(os.environ, K6_NO_USAGE_REPORT="true", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(6)  # connected and publishing (40 connections open in well under a second)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert took <= 5, f"{sig.name} took {took:.1f} s to end the run"
    # k6's exit code for a run aborted by a signal (ExternalAbort).
    assert proc.returncode == 105, (out + err)[-2000:]
    r = json.loads(Path(tmp_path / f"signal-{sig.name}.json").read_text())
    assert r["counts"]["mqtt_publishes"] > 0 and not r["passed"]
