"""The composite scenario (mqttbs "Composite"): background connections beside
point-to-point, fan-out and fan-in parts, each part a flow with its own
accounting, latency and verdict; against Debian's Mosquitto, in one process
and split over two instances merged by `k6 x mqtt-merge`."""

import json
import os
import subprocess
import time

from conftest import ROOT, lib_value
from k6_runs import finish, launch, logs, merge, run_k6, run_scenario

PARTS = ("p2p", "fanout", "fanin")
SMALL = {"SCALE": "0.05", "DURATION": "4s"}


def check_parts(r):
    """Background all open and none dropped; each part exact, with its own
    latency and a passing verdict of the extension's."""
    flows = {f["name"]: f for f in r["flows"]}
    assert set(flows) == {"background", *PARTS}, flows
    bg = r["delivery"]["background"]
    planned = flows["background"]["subscribers"]
    assert planned > 0 and bg["clients"] == planned and bg["connected"] == planned, bg
    assert bg["disconnects"] == 0, bg
    total = 0
    for name in PARTS:
        d = r["delivery"][name]
        assert d["sent"] > 0 and d["lost"] == 0 and d["duplicates"] == 0, (name, d)
        assert d["unique"] == d["expected"] == d["sent"] * flows[name]["fanout"], (name, d)
        assert d["latency"]["count"] == d["unique"], (name, d)
        total += d["latency"]["count"]
    assert total == r["latency_ms"]["pub_to_sub"]["count"]
    verdicts = r["flow_verdicts"]
    assert set(verdicts) == {"background", *PARTS}
    assert all(v["passed"] for v in verdicts.values()), verdicts


def test_composite_passes_with_background_open_and_each_part_exact(stack, k6_bin, tmp_path):
    p, r = run_scenario(k6_bin, stack, tmp_path, "composite", **SMALL)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert r and r["passed"], r and r["thresholds"]
    check_parts(r)
    # The summary gives each part its line, with the extension's verdict.
    for name in ("background", *PARTS):
        assert f"part {name}" in p.stdout, p.stdout
    # The report has a table per part.
    py = lib_value('echo "$CACHE/venv/current/bin/python"')
    out = tmp_path / "reports"
    rep = subprocess.run(
        [py, "-m", "mqttbench.report", r["run_id"], "--results", str(tmp_path), "--out", str(out), "--no-influx"],
        cwd=ROOT,
        env=dict(os.environ, INFLUX_URL="http://127.0.0.1:9"),
        text=True,
        capture_output=True,
    )
    assert rep.returncode == 0, rep.stdout + rep.stderr
    md = (out / r["run_id"] / "report.md").read_text()
    for name in ("background", *PARTS):
        assert f"### Part `{name}`" in md, md


def test_composite_merges_exactly_over_two_instances(k6_bin, tmp_path, fresh_mosquitto):
    url, _ = fresh_mosquitto
    run_id = f"dist-composite-{int(time.time() * 1000)}"
    results = tmp_path / "raw"
    results.mkdir()
    env = dict(SMALL, MQTT_URL=url, RUN_ID=run_id, DURATION="6s")
    script = ROOT / "k6/scenarios/composite.js"
    assert finish(launch(k6_bin, script, 2, env, results)) == [0, 0], logs(results)
    m = merge(k6_bin, run_id, results)
    assert m.returncode == 0, m.stdout + m.stderr
    r = json.loads((results / f"{run_id}.json").read_text())
    assert r["passed"], r["thresholds"]
    assert r["thresholds"]["mqtt_parts_failed count==0"]
    check_parts(r)
    for name in ("background", *PARTS):
        assert f"part {name}" in m.stdout, m.stdout


def test_a_bad_background_count_stops_before_any_connection(tmp_path, k6_bin):
    p, _ = run_k6(k6_bin, ROOT / "k6/scenarios/composite.js", env={"BACKGROUND": "lots", "RESULTS_DIR": str(tmp_path)})
    assert p.returncode != 0
    out = (p.stdout + p.stderr).replace('\\"', '"')
    assert 'BACKGROUND="lots" is invalid: expected a whole number' in out, out


def test_a_part_over_its_p99_bound_fails_the_run_by_its_own_verdict(k6_bin, tmp_path, fresh_mosquitto):
    """k6's exit code says what flow_verdicts say: mqtt_parts_failed counts
    the parts the extension's verdict fails."""
    url, _ = fresh_mosquitto
    run_id = f"composite-p99-{int(time.time() * 1000)}"
    env = dict(SMALL, MQTT_URL=url, RUN_ID=run_id, RESULTS_DIR=str(tmp_path), P99_MS="0.001")
    p, _ = run_k6(k6_bin, ROOT / "k6/scenarios/composite.js", env=env, timeout=240)
    assert p.returncode == 99, (p.stdout + p.stderr)[-3000:]
    r = json.loads((tmp_path / f"{run_id}.json").read_text())
    assert not r["passed"] and not r["thresholds"]["mqtt_parts_failed count==0"]
    v = r["flow_verdicts"]
    assert v["background"]["passed"] and not any(v[name]["passed"] for name in PARTS), v
    assert all("over the 0.001 ms bound" in "; ".join(v[name]["failures"]) for name in PARTS), v
    assert "part p2p        FAIL:" in p.stdout, p.stdout
