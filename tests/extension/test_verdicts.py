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

import pytest

from conftest import ROOT, loopback_port, wait_until
from delay_proxy import DelayProxy
from k6_runs import SCENARIOS, run, run_k6
from loopback_brokers import mosquitto


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
            "mqttbench.report",
            r["run_id"],
            "--results",
            str(tmp_path),
            "--out",
            str(tmp_path),
            "--no-influx",
        ],
        cwd=ROOT,
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


# The figures: 20 publishers at 400 msg/s in all send 20 msg/s each,
# 30 in flight per client at 1.5 s: far below the inflight window.
SLOW_ACKS = {"QOS": "1", "PUBLISHERS": "20", "SUBSCRIBERS": "20", "RATE": "400", "DURATION": "10s"}


@pytest.mark.slow
def test_a_broker_slow_to_acknowledge_is_named_latency_never_the_generator(k6_bin, tmp_path):
    # Every byte from Mosquitto to the clients is held 1.5 s: PUBACKs and
    # deliveries are late, while every message leaves on time.
    port = loopback_port(11960)
    with mosquitto(tmp_path / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n"):
        with DelayProxy(port, 1.5, listen_port=loopback_port(11961), to_client_only=True) as proxy:
            url = f"mqtt://127.0.0.1:{proxy.listen_port}"
            p, r = run(k6_bin, tmp_path, "p2p", url, P99_MS="5000", **SLOW_ACKS)
            p2, r2 = run(k6_bin, tmp_path, "p2p", url, P99_MS="1000", **{**SLOW_ACKS, "DURATION": "5s"})
    out = p.stdout + p.stderr
    c = r["counts"]
    assert c["mqtt_publishes"] == c["mqtt_receives"] == 4000 and c["mqtt_missed_sends"] == 0, c
    # Sent on schedule: the rate was reached, whenever the acks came.
    step = r["steps"][0]
    assert step["achieved_rate"] >= 0.99 * step["target_rate"], step
    assert step["ack_seconds"] >= 11, step
    assert r["passed"] and p.returncode == 0, out[-3000:]
    d = r["diagnosis"]
    assert d["cause"] == "none" and "generator" not in d["text"], d
    assert "PUBACK p99 1" in d["text"] and "broker" in d["text"], d
    assert "could not keep up" not in out and "target rate not reached" not in out, out[-3000:]
    # Bounded at 1 s, the same broker fails on its latency, with its figures.
    assert p2.returncode == 99 and not r2["passed"], (p2.stdout + p2.stderr)[-3000:]
    d2 = r2["diagnosis"]
    assert d2["cause"] == "broker_latency", d2
    e = d2["evidence"]
    assert e["puback_p99_ms"] >= 1500 and e["latency_p99_ms"] >= 1500, e
    assert f"PUBACK p99 {e['puback_p99_ms']} ms" in d2["text"], d2
    assert f"latency p99 {e['latency_p99_ms']} ms" in d2["text"], d2
    assert r2["thresholds"]["mqtt_rate_shortfalls count==0"] and r2["thresholds"]["mqtt_missed_sends count==0"]


@pytest.mark.slow
def test_a_generator_throttled_to_a_sliver_of_a_core_is_named_against_a_fast_broker(k6_bin, tmp_path, throttled_k6):
    wrapper = tmp_path / "k6-throttled"
    wrapper.write_text(f'#!/bin/sh\nexec {throttled_k6} {k6_bin} "$@"\n')
    wrapper.chmod(0o755)
    port = loopback_port(11962)
    with mosquitto(tmp_path / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n") as url:
        p, r = run(str(wrapper), tmp_path, "p2p", url, **{**SLOW_ACKS, "RATE": "5000", "DURATION": "5s"})
    assert p.returncode == 99, (p.stdout + p.stderr)[-3000:]
    d = r["diagnosis"]
    assert d["cause"] == "generator", d


def test_a_local_address_not_of_this_host_is_refused_by_name_before_any_connection(
    k6_bin, tmp_path, connection_counter
):
    # The case: 10.0.0.5 passed validation and ended as
    # broker_unreachable after every bind failed.
    env = {"MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}", "DURATION": "2s", "RESULTS_DIR": str(tmp_path)}
    p, _ = run_k6(k6_bin, SCENARIOS / "p2p.js", env={**env, "LOCAL_ADDRESS": "127.0.0.2,198.51.100.7"})
    connection_counter.close()
    assert p.returncode != 0
    err = p.stderr.replace('\\"', '"')
    assert 'LOCAL_ADDRESS="127.0.0.2,198.51.100.7" is invalid' in err, err[-2000:]
    assert "198.51.100.7 is not an address of this host" in err, err[-2000:]
    assert connection_counter.accepted == []
