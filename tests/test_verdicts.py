"""Verdicts that agree with the counts, and a diagnosis that names the real
cause: real k6 against real Mosquitto brokers started per test on their own
ports (a fresh one each time: Mosquitto 2.0's max_connections drifts after
refusals), killed and restarted where the test needs an outage."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import ROOT, loopback_port, run_k6, wait_until
from test_scenarios import SCENARIOS, mosquitto


def run(k6_bin, tmp_path, scenario, url, **env):
    """A scenario run; returns (process, result file or None)."""
    run_id = f"verdict-{scenario}-{int(time.time() * 1000)}"
    full = {"MQTT_URL": url, "DURATION": "3s", "RESULTS_DIR": str(tmp_path), "RUN_ID": run_id, **env}
    p, _ = run_k6(k6_bin, SCENARIOS / f"{scenario}.js", env=full, timeout=180)
    f = Path(tmp_path) / f"{run_id}.json"
    return p, (json.loads(f.read_text()) if f.exists() else None)


def test_a_threshold_whose_metric_has_no_samples_fails_the_run(k6_bin, tmp_path):
    # Publishers and no subscriber: nothing is timed, so the p99 bound has
    # no sample; k6 alone passes such a threshold.
    port = loopback_port(11890)
    with mosquitto(tmp_path / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n") as url:
        p, r = run(k6_bin, tmp_path, "fanout", url, PUBLISHERS="2", SUBSCRIBERS="0", QOS="0", RATE="40")
    assert p.returncode == 99, (p.stdout + p.stderr)[-3000:]
    assert r["counts"]["mqtt_publishes"] > 0 and r["counts"]["mqtt_receives"] == 0
    assert r["thresholds"]["mqtt_latency_p99 value<100"] is False
    assert r["thresholds"]["mqtt_thresholds_without_samples count==0"] is False
    assert r["without_samples"] == ["mqtt_latency_p99"] and not r["passed"]
    assert r["diagnosis"]["cause"] == "no_data", r["diagnosis"]


def test_a_refused_initial_connection_fails_the_connection_thresholds(k6_bin, tmp_path):
    # A broker that takes about 5 connections (Mosquitto's count also sees
    # the fixture's readiness probe): some of the 8 planned never open.
    port = loopback_port(11891)
    text = f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_connections 5\n"
    with mosquitto(tmp_path / "m.conf", port, text) as url:
        p, r = run(k6_bin, tmp_path, "conn", url, SUBSCRIBERS="8", CONNECT_RATE="100")
    assert p.returncode == 99, (p.stdout + p.stderr)[-3000:]
    c = r["counts"]
    failed = c["mqtt_connect_failures"]
    assert failed >= 1 and c["mqtt_connects"] + failed == 8 and c["mqtt_reconnect_attempts"] == 0, c
    assert r["thresholds"]["mqtt_connect_failures count==0"] is False
    assert r["thresholds"]["mqtt_connects_missing count==0"] is False
    assert r["metrics"]["mqtt_connects_missing"]["values"]["count"] == 8 - c["mqtt_connects"]
    d = r["diagnosis"]
    assert d["cause"] == "broker_refused" and f"{failed} of 8 connections" in d["text"], d


def test_failed_connections_are_counted_when_a_group_opens_none(k6_bin, tmp_path):
    # About 5 connections allowed: the subscribers take them, no publisher
    # gets one, and the run aborts at once: the publishers' failures must
    # still reach k6 before it judges mqtt_connect_failures.
    port = loopback_port(11894)
    text = f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_connections 5\n"
    with mosquitto(tmp_path / "m.conf", port, text) as url:
        p, r = run(k6_bin, tmp_path, "p2p", url, SUBSCRIBERS="8", PUBLISHERS="8", RATE="80")
    assert p.returncode != 0
    c = r["counts"]
    assert c["mqtt_connects"] + c["mqtt_connect_failures"] == 16 and c["mqtt_connect_failures"] >= 10, c
    assert r["thresholds"]["mqtt_connect_failures count==0"] is False, r["thresholds"]
    # Aborted before a message went out: the p99 bound judged nothing.
    assert r["thresholds"]["mqtt_latency_p99 value<100"] is False and "mqtt_latency_p99" in r["without_samples"]
    assert r["diagnosis"]["cause"] == "broker_refused", r["diagnosis"]


def test_failed_connections_are_counted_when_none_opened(k6_bin, tmp_path):
    # Nothing listens: the run aborts on the first group, and its failed
    # connections must still reach k6 before it judges the thresholds.
    url = f"mqtt://127.0.0.1:{loopback_port(11893)}"
    p, r = run(k6_bin, tmp_path, "conn", url, SUBSCRIBERS="10", CONNECT_RATE="100")
    assert p.returncode != 0
    assert r["counts"]["mqtt_connect_failures"] == 10 and r["counts"]["mqtt_connects"] == 0
    assert r["thresholds"]["mqtt_connect_failures count==0"] is False, r["thresholds"]
    d = r["diagnosis"]
    assert d["cause"] == "broker_unreachable" and "connection refused" in d["text"], d


def established(port):
    """Established TCP connections whose local port is port (the broker's side)."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                n += state == "01" and int(local.rsplit(":", 1)[1], 16) == port
    return n


def test_a_broker_killed_mid_run_is_an_outage_not_the_generator(k6_bin, tmp_path):
    port = loopback_port(11892)
    conf = tmp_path / "m.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")

    def up():
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    def start():
        proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_until(up, timeout=10)
        return proc

    broker = start()
    out = {}

    def load():
        url = f"mqtt://127.0.0.1:{port}"
        env = {"PUBLISHERS": "5", "SUBSCRIBERS": "5", "RATE": "100", "QOS": "1", "DURATION": "15s"}
        out["p"], out["r"] = run(k6_bin, tmp_path, "p2p", url, **env)

    k6 = threading.Thread(target=load)
    try:
        k6.start()
        # Every client connected (publishers last), then publishing a while.
        assert wait_until(lambda: established(port) >= 10, timeout=60), established(port)
        time.sleep(2)
        os.kill(broker.pid, signal.SIGKILL)
        broker.wait(10)
        down = time.time()
        time.sleep(3)
        broker = start()
        downtime = time.time() - down
        k6.join(120)
    finally:
        broker.terminate()
        broker.wait(10)
    p, r = out["p"], out["r"]
    assert p.returncode == 99, (p.stdout + p.stderr)[-3000:]
    c = r["counts"]
    assert c["mqtt_connect_failures"] == 0
    assert c["mqtt_disconnects"] == c["mqtt_reconnects"] == 10, c
    assert c["mqtt_reconnect_attempts"] >= c["mqtt_reconnects"]
    assert len(r["outages"]) == 1, r["outages"]
    o = r["outages"][0]
    # From the kill to the last reconnect: the downtime, plus at most one
    # backoff interval (0.1 s doubling, here up to ~3.2 s); the run lasts long
    # enough (15 s of publishing) for the slowest redial schedule (~6.3 s).
    assert o["end_ms"] is not None and o["max_down"] == 10
    assert downtime - 0.5 <= o["duration_s"] <= downtime + 4, (o, downtime)
    assert abs(o["end_ms"] - o["start_ms"] - 1000 * o["duration_s"]) < 1
    d = r["diagnosis"]
    assert d["cause"] == "broker_outage", d
    assert d["evidence"]["outages"] == 1 and d["evidence"]["disconnects"] == 10
    assert "generator" not in d["cause"]
    # The publisher's shortfall warning blames the missing connections too.
    assert "had no open connection to go out on" in p.stderr and "CPU-bound" not in p.stderr, p.stderr[-2000:]
    # The report shows the same diagnosis (no InfluxDB here: broker CPU unknown).
    rep = subprocess.run(
        [
            sys.executable,
            "-m",
            "report",
            r["run_id"],
            "--results",
            str(tmp_path),
            "--out",
            str(tmp_path),
            "--no-influx",
        ],
        cwd=ROOT / "scripts",
        text=True,
        capture_output=True,
    )
    assert rep.returncode == 0, rep.stderr
    md = (tmp_path / r["run_id"] / "report.md").read_text()
    # Every client reconnected: the connection success rate (first
    # connections) is whole, not diluted by the redials.
    t = json.loads((tmp_path / r["run_id"] / "results.json").read_text())
    assert t["connections"]["success_pct"] == 100.0 and t["diagnosis"]["cause"] == "broker_outage"
    assert f"**Diagnosis (`broker_outage`):** {d['text']} Broker process CPU: not in InfluxDB." in md
