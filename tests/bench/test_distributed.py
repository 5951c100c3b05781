"""A test split over several k6 processes by k6's own execution segments,
against a real Mosquitto, and merged by `k6 x mqtt-merge`: the merged
counts equal the broker's own, and one verdict judges the whole run."""

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import ROOT, wait_until
from k6_runs import SCENARIOS, finish, launch, logs, merge
from loopback_brokers import sys_counters
from mqttbench.brokers import counters as broker_counters
from mqttbench.k6.command import run_argv


@pytest.mark.parametrize(
    "scenario, env",
    [
        ("p2p", {"PUBLISHERS": "40", "SUBSCRIBERS": "40", "RATE": "400", "QOS": "1"}),
        ("fanin", {"PUBLISHERS": "200", "SUBSCRIBERS": "20", "RATE": "400", "QOS": "1"}),
    ],
)
def test_four_instances_merge_into_the_brokers_own_counts(k6_bin, tmp_path, fresh_mosquitto, scenario, env):
    url, port = fresh_mosquitto
    run_id = f"dist-{scenario}-{int(time.time() * 1000)}"
    results = tmp_path / "raw"
    results.mkdir()
    codes = finish(
        launch(k6_bin, SCENARIOS / f"{scenario}.js", 4, dict(env, MQTT_URL=url, DURATION="4s", RUN_ID=run_id), results)
    )
    assert codes == [0, 0, 0, 0], logs(results)
    assert sorted(p.name for p in results.glob(f"{run_id}.seg-*.json")) == [
        f"{run_id}.seg-{i}-of-4.json" for i in range(1, 5)
    ]
    m = merge(k6_bin, run_id, results)
    assert m.returncode == 0, m.stdout + m.stderr
    merged = json.loads((results / f"{run_id}.json").read_text())
    c = merged["counts"]
    sys = sys_counters(port)
    # Every PUBLISH the broker took is one the instances published (or a
    # shared-subscription probe), every one it sent one they received.
    probes_in, probes_out = broker_counters.probes(merged)
    assert sys["received"] == c["mqtt_publishes"] + probes_in, (sys, c, probes_in)
    assert sys["sent"] == c["mqtt_receives"] + probes_out, (sys, c, probes_out)
    assert c["mqtt_publishes"] > 0 and c["mqtt_lost"] == 0 and c["mqtt_receives"] == c["mqtt_publishes"]
    assert merged["passed"] is True and len(merged["merge"]["instances"]) == 4 and not merged["merge"]["incomplete"]
    # The instances' shares add up to the whole, exactly.
    pubs = sum(
        sum(len(f["publishers"]) for f in json.loads(p.read_text())["streams"].values())
        for p in results.glob(f"{run_id}.seg-*.json")
    )
    assert pubs == int(env["PUBLISHERS"])
    assert merged["latency_ms"]["pub_to_sub"]["count"] == c["mqtt_receives"]


@pytest.mark.parametrize(
    "scenario, env",
    [
        # Shared-subscription groups that straddle the instances' boundary:
        # a group's members in both instances receive one publisher's stream.
        ("fanin", {"PUBLISHERS": "63", "SUBSCRIBERS": "15", "RATE": "63"}),
        # More instances than publishers: one instance has subscribers only.
        ("fanout-1-1K-1-1K", {"PUBLISHERS": "1", "SUBSCRIBERS": "4", "RATE": "10"}),
    ],
)
def test_streams_split_across_two_instances_merge_without_loss(k6_bin, tmp_path, fresh_mosquitto, scenario, env):
    url, port = fresh_mosquitto
    run_id = f"dist-split-{scenario}-{int(time.time() * 1000)}"
    results = tmp_path / "raw"
    results.mkdir()
    env = dict(env, MQTT_URL=url, DURATION="6s", RUN_ID=run_id, QOS="1")
    assert finish(launch(k6_bin, SCENARIOS / f"{scenario}.js", 2, env, results)) == [0, 0], logs(results)
    m = merge(k6_bin, run_id, results)
    assert m.returncode == 0, m.stdout + m.stderr
    c = json.loads((results / f"{run_id}.json").read_text())["counts"]
    assert c["mqtt_lost"] == 0 and c["mqtt_receives"] > 0, c


def test_an_instance_that_k6_gives_no_vu_stops_before_any_connection(k6_bin, tmp_path, fresh_mosquitto):
    """k6 stripes the scenario's MAX_INSTANCES VUs over the sequence: a
    small segment can get none, and would run none of its share."""
    url, _ = fresh_mosquitto
    results = tmp_path / "raw"
    results.mkdir()
    env = dict(
        os.environ,
        K6_NO_USAGE_REPORT="true",
        RESULTS_DIR=str(results),
        MQTT_URL=url,
        RUN_ID="dist-novu",
        MAX_INSTANCES="3",
        PUBLISHERS="20",
        SUBSCRIBERS="20",
        RATE="20",
        DURATION="3s",
    )
    args = run_argv(SCENARIOS / "p2p.js", k6=k6_bin, quiet=True, segment=("1/10:2/10", "0,1/10,2/10,1"))
    p = subprocess.run(args, env=env, text=True, capture_output=True, timeout=120)
    assert p.returncode != 0 and "gets none of the scenario's MAX_INSTANCES=3 VUs" in p.stdout + p.stderr, p.stderr
    # No result: its refusal, as a file its caller reads (k6/lib/refusal.js).
    assert [f.name for f in results.glob("*.json")] == ["dist-novu.refused.json"]
    assert "gets none of the scenario's" in json.loads((results / "dist-novu.refused.json").read_text())["message"]


def test_a_killed_instance_leaves_the_run_incomplete_and_failed(k6_bin, tmp_path, fresh_mosquitto):
    url, _ = fresh_mosquitto
    run_id = f"dist-killed-{int(time.time() * 1000)}"
    results = tmp_path / "raw"
    results.mkdir()
    procs = launch(
        k6_bin,
        SCENARIOS / "p2p.js",
        4,
        {
            "MQTT_URL": url,
            "DURATION": "6s",
            "RUN_ID": run_id,
            "PUBLISHERS": "20",
            "SUBSCRIBERS": "20",
            "RATE": "200",
        },
        results,
    )
    victim = procs[2]
    claim = results / f"{run_id}.seg-3-of-4.json"
    assert wait_until(claim.exists, timeout=60), logs(results)
    time.sleep(2)
    victim.send_signal(signal.SIGKILL)
    codes = finish(procs)
    assert codes[2] == -signal.SIGKILL and codes[:2] + codes[3:] == [0, 0, 0], logs(results)
    m = merge(k6_bin, run_id, results)
    assert m.returncode == 99, m.stdout + m.stderr
    out = m.stdout + m.stderr
    assert "3/4" in out and "3 of 4" in out, out
    merged = json.loads((results / f"{run_id}.json").read_text())
    assert merged["passed"] is False and merged["merge"]["incomplete"] is True
    assert any("3/4" in x for x in merged["merge"]["missing_instances"]), merged["merge"]


def test_every_scenario_archives_and_an_archive_runs_segmented(k6_bin, tmp_path, fresh_mosquitto):
    """k6-operator runs archives: every scenario must archive with our k6,
    and an archive must run as one instance of several."""
    url, _ = fresh_mosquitto
    for script in sorted(SCENARIOS.glob("*.js")):
        p = subprocess.run(
            [k6_bin, "archive", "--quiet", "-O", str(tmp_path / f"{script.stem}.tar"), str(script)],
            text=True,
            capture_output=True,
            timeout=120,
            env=dict(os.environ, K6_NO_USAGE_REPORT="true"),
        )
        assert p.returncode == 0, f"{script.name}: {p.stdout}{p.stderr}"
    results = tmp_path / "raw"
    results.mkdir()
    run_id = f"dist-archive-{int(time.time() * 1000)}"
    # The parameters that shape the load go to k6 archive, which fixes the
    # options (deploy/k6-operator/README.md); the rest are read at run time.
    shape = ["-e", "DURATION=3s", "-e", "PUBLISHERS=10", "-e", "SUBSCRIBERS=10", "-e", "RATE=100"]
    archive = [k6_bin, "archive", "--quiet", *shape, "-O", str(tmp_path / "p2p-run.tar"), str(SCENARIOS / "p2p.js")]
    subprocess.run(archive, check=True, timeout=120, env=dict(os.environ, K6_NO_USAGE_REPORT="true"))
    env = {"MQTT_URL": url, "RUN_ID": run_id}
    codes = finish(launch(k6_bin, tmp_path / "p2p-run.tar", 2, env, results))
    assert codes == [0, 0], logs(results)
    m = merge(k6_bin, run_id, results)
    assert m.returncode == 0, m.stdout + m.stderr


def test_a_segmented_instance_without_run_id_stops_before_any_connection(k6_bin, tmp_path, fresh_mosquitto):
    url, _ = fresh_mosquitto
    results = tmp_path / "raw"
    results.mkdir()
    env = {"MQTT_URL": url, "DURATION": "3s", "PUBLISHERS": "4", "SUBSCRIBERS": "4", "RATE": "10"}
    env.pop("RUN_ID", None)
    os.environ.pop("RUN_ID", None)
    codes = finish(launch(k6_bin, SCENARIOS / "p2p.js", 2, env, results))
    assert all(c != 0 for c in codes), logs(results)
    assert "RUN_ID is required with --execution-segment" in logs(results)
    assert not list(results.glob("*.json"))


def test_the_report_merges_a_split_run_and_names_its_instances(k6_bin, tmp_path, fresh_mosquitto):
    url, _ = fresh_mosquitto
    results = tmp_path / "raw"
    results.mkdir()
    run_id = f"dist-report-{int(time.time() * 1000)}"
    env = {"MQTT_URL": url, "DURATION": "3s", "RUN_ID": run_id, "PUBLISHERS": "10", "SUBSCRIBERS": "10", "RATE": "100"}
    assert finish(launch(k6_bin, SCENARIOS / "p2p.js", 2, env, results)) == [0, 0], logs(results)
    args = [str(ROOT / "scripts/report.sh"), run_id, "--results", str(results), "--out", str(tmp_path / "out")]
    r = subprocess.run([*args, "--no-influx"], text=True, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    report = (tmp_path / "out" / run_id / "report.md").read_text()
    assert "**Load generators:** 2 k6 instances (execution segments 0:1/2, 1/2:1) on 1 host" in report, report
    # --merge merges again, and judges again: a lost instance file fails it.
    (results / f"{run_id}.seg-2-of-2.json").unlink()
    r = subprocess.run([*args, "--no-influx", "--merge"], text=True, capture_output=True, timeout=300)
    assert r.returncode == 99, r.stdout + r.stderr
    assert "Incomplete" in (tmp_path / "out" / run_id / "report.md").read_text()
