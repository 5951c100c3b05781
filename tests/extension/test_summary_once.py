"""One renderer of the text summary (k6/extension/result.Text): what k6
prints at the end of a run and what `k6 x mqtt-merge` prints of the same
run split over two instances read the same on the same counts; the merge
only adds what a merge knows (its instances, clocks, notes)."""

import os
import re
import subprocess
import time

import pytest

from conftest import loopback_port
from k6_runs import BEHAVIOUR_P99_MS, SCENARIOS, finish, launch, logs, merge
from loopback_brokers import mosquitto
from mqttbench.k6.command import run_argv

# What only a merge of several instances adds to a summary.
MERGE_ONLY = ("instance", "clock skew", "start spread", "note", "missing")
ENV = {"PUBLISHERS": "4", "SUBSCRIBERS": "4", "RATE": "40", "QOS": "1", "DURATION": "3s"}


@pytest.fixture
def broker(tmp_path):
    """A Mosquitto of its own for both runs."""
    port = loopback_port(11897)
    with mosquitto(tmp_path / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n") as url:
        yield url


def summary(text):
    """The summary's lines from its header on: (label, rest), a
    threshold's label being its mark."""
    lines = text[text.index("mqtt-bench p2p on ") :].splitlines()
    out = [("header", re.sub(r" \(run .*", "", lines[0]))]
    for line in lines[1:]:
        if not line.startswith("  ") or not line.strip():
            break
        label, rest = line[2:16].strip(), line[16:]
        out.append((label, rest))
    return out


def verdicts(lines):
    """Each threshold line without what a merge adds of how it judged it."""
    return sorted(re.sub(r" \((merged: .*|no samples|.* verdicts?)\)$", "", v) for k, v in lines if k in ("ok", "FAIL"))


def test_a_run_and_its_merge_in_two_instances_print_one_summary(k6_bin, tmp_path, broker):
    url = broker
    results = tmp_path / "raw"
    results.mkdir()
    stamp = int(time.time() * 1000)
    env = dict(os.environ, K6_NO_USAGE_REPORT="true", RESULTS_DIR=str(results), P99_MS=BEHAVIOUR_P99_MS)
    env |= dict(ENV, MQTT_URL=url, RUN_ID=f"once-single-{stamp}")
    single = subprocess.run(
        run_argv(SCENARIOS / "p2p.js", k6=k6_bin, quiet=True),
        env=env,
        text=True,
        capture_output=True,
        timeout=240,
    )
    assert single.returncode == 0, (single.stdout + single.stderr)[-3000:]
    run_id = f"once-split-{stamp}"
    codes = finish(launch(k6_bin, SCENARIOS / "p2p.js", 2, dict(ENV, MQTT_URL=url, RUN_ID=run_id), results))
    assert codes == [0, 0], logs(results)
    m = merge(k6_bin, run_id, results)
    assert m.returncode == 0, m.stdout + m.stderr

    one, merged = summary(single.stdout), summary(m.stdout)
    assert one[0] == merged[0] == ("header", "mqtt-bench p2p on mosquitto: PASSED"), (one, merged)
    # Line for line the same kinds, in the same order, but what only a
    # merge of several instances knows.
    assert [k for k, _ in one] == [k for k, _ in merged if k not in MERGE_ONLY], (single.stdout, m.stdout)
    said = {k: v for k, v in one}
    again = {k: v for k, v in merged}
    # The same counts read the same.
    for k in ("connections", "messages"):
        assert said[k] == again[k], (said[k], again[k])
    assert said["messages"].startswith("120 published, 120 received, 0 lost"), said["messages"]
    # Each threshold by the same verdict (a merge adds how it judged it).
    assert verdicts(one) == verdicts(merged), (single.stdout, m.stdout)
