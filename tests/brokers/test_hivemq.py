"""HiveMQ CE on the native stack, for real: `scripts/stack.sh up --broker
hivemq` starts the embedded broker in the project's launcher (built by
scripts/setup/hivemq.sh) with Telegraf, InfluxDB and node_exporter; p2p at
QoS 1 through it is exact; its Broker internals panels answer with its own
series; `down` stops it (tests/stack/test_loopback_only.py: nothing listens
beyond loopback)."""

import json
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

import grafana_frames as gf
from conftest import RESULTS, ROOT, lib_value, wait_until
from dashboard_answers import bind, broker_panel_queries
from k6_runs import BEHAVIOUR_P99_MS, run_k6, run_p2p
from native_stacks import native_ports

# Ports of its own (the session's stack may hold TEST_PORTS); the launcher's
# metrics port off its default (9399), which a user's stack serves.
PORTS = native_ports("hivemq")
METRICS_PORT = PORTS["HIVEMQ_METRICS_PORT"]


@pytest.fixture(scope="module")
def hivemq(native_stack):
    """The run's one HiveMQ CE stack (tests/native_stacks.py)."""
    lib = Path(lib_value('echo "$CACHE/hivemq/$HIVEMQ_VERSION/lib/hivemq-launcher.jar"'))
    assert lib.is_file(), f"{lib} missing: run scripts/setup.sh hivemq"
    return native_stack("hivemq")


@pytest.fixture(scope="module")
def p2p_qos1(hivemq, k6_bin, tmp_path_factory):
    """p2p at QoS 1 through HiveMQ, its metrics into InfluxDB through Telegraf."""
    start = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    run_id = f"hivemq-p2p-{int(time.time() * 1000)}"
    results = tmp_path_factory.mktemp("res")
    p, _ = run_k6(
        k6_bin,
        ROOT / "k6/scenarios/p2p.js",
        out=hivemq.k6_out,
        env={
            "MQTT_URL": hivemq.mqtt_url,
            "QOS": "1",
            "SCALE": "0.1",
            "DURATION": "5s",
            "P99_MS": BEHAVIOUR_P99_MS,
            "RUN_ID": run_id,
            "RESULTS_DIR": str(results),
        },
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return start, run_id, json.loads((results / f"{run_id}.json").read_text())


def test_up_starts_a_real_hivemq_with_its_metrics(hivemq):
    r = hivemq.run("status")
    assert r.returncode == 0 and "hivemq" in r.stdout, r.stdout
    log = (hivemq.state / "logs/broker.log").read_text()
    assert "Started EmbeddedHiveMQ" in log and " ERROR - " not in log, log[-3000:]
    # HiveMQ's own Dropwizard metrics, as Prometheus text, on loopback.
    text = requests.get(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=10).text
    assert "com_hivemq_messages_incoming_publish_count_total" in text


def test_p2p_qos1_through_hivemq_is_exact(p2p_qos1):
    _, _, result = p2p_qos1
    c = result["counts"]
    assert c["mqtt_publishes"] > 0 and c["mqtt_receives"] == c["mqtt_publishes"], c
    assert (c["mqtt_lost"], c["mqtt_duplicates"], c["mqtt_out_of_order"]) == (0, 0, 0), c


def test_its_broker_internals_panels_answer_with_its_series(hivemq, p2p_qos1):
    start, run_id, result = p2p_qos1
    got = {}

    def answered():
        for _title, query in broker_panel_queries("hivemq"):
            frames = gf.frames(gf.annotated_csv(hivemq, bind(query, start, run_id, "p2p", "hivemq")))
            for _, f in gf.value_fields(frames):
                got[f.name] = [float(v) for v in f.values if v]
        return {"received", "sent", "connected", "dropped"} <= set(got) and any(got["received"])

    # Telegraf reads the launcher every second (the tests' interval) and flushes as often.
    assert wait_until(answered, timeout=30), got
    # Rates of a 100 msg/s run: in and out alike, nothing dropped.
    assert max(got["received"]) > 0 and max(got["sent"]) > 0, got
    assert not any(got["dropped"]), got["dropped"]


# Each listener of config.xml: TLS and mutual TLS with the key stores the
# launcher made from the stack's PEM files, WebSocket at /mqtt.
TRANSPORTS = {
    "tls": f"mqtts://127.0.0.1:{PORTS['MQTTS_PORT']}",
    "mutual-tls": f"mqtts://127.0.0.1:{PORTS['MTLS_PORT']}",
    "websocket": f"ws://127.0.0.1:{PORTS['WS_PORT']}/mqtt",
}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_p2p_qos1_over_each_transport_is_exact(hivemq, k6_bin, tmp_path, transport):
    # The stack's state holds the CA and client certificate the scenarios default to.
    p, r = run_p2p(k6_bin, tmp_path, TRANSPORTS[transport], QOS="1", MQTTBENCH_STATE=str(hivemq.state))
    assert p.returncode == 0 and r is not None, p.stderr[-3000:]
    c = r["counts"]
    assert c["mqtt_publishes"] > 0 and c["mqtt_receives"] == c["mqtt_publishes"] and c["mqtt_lost"] == 0, c


def test_mutual_tls_refuses_a_client_without_a_certificate(hivemq, k6_bin, tmp_path):
    p, r = run_p2p(
        k6_bin, tmp_path, TRANSPORTS["mutual-tls"], QOS="1", MQTTBENCH_STATE=str(tmp_path / "none"),
        TLS_CA=str(hivemq.state / "tls/ca.pem"),
    )  # fmt: skip
    assert p.returncode != 0 and r is not None, p.stderr[-3000:]
    assert r["counts"]["mqtt_connects"] == 0 and r["diagnosis"]["cause"] == "broker_refused", r["diagnosis"]


def test_bench_reports_the_version_of_the_build_it_ran(hivemq):
    # HiveMQ publishes no $SYS version: bench.sh takes broker.toml [native] version's.
    run_id = f"hivemq-bench-{time.time_ns()}"
    args = ["--native", "--broker", "hivemq", "-e", "DURATION=3s", "-e", "SCALE=0.1", "-e", f"RUN_ID={run_id}"]
    args += ["-e", f"P99_MS={BEHAVIOUR_P99_MS}"]  # behaviour, not latency, on a busy host
    env = dict(hivemq.env, K6_WEB_DASHBOARD="false")
    r = subprocess.run([str(ROOT / "scripts/bench.sh"), *args], env=env, text=True, capture_output=True, timeout=600)
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        result = json.loads((RESULTS / f"raw/{run_id}.json").read_text())
        assert result["counts"]["mqtt_lost"] == 0, result["counts"]
        assert (
            "**Software:** broker hivemq 2025.5 (its [native] version command);"
            in (RESULTS / f"{run_id}/report.md").read_text()
        )
    finally:
        (RESULTS / f"raw/{run_id}.json").unlink(missing_ok=True)
        shutil.rmtree(RESULTS / f"{run_id}", ignore_errors=True)


@pytest.mark.stops_stack
def test_down_stops_it(hivemq):
    pid = hivemq.pids()["broker"]
    r = hivemq.run("down")
    assert r.returncode == 0, r.stderr
    assert wait_until(lambda: not Path(f"/proc/{pid}").exists(), timeout=20), "HiveMQ still runs after down"
