"""Fan-in on a broker without shared subscriptions: the real k6 build stops
before load, naming the scenario and the filter, instead of reporting 100%
loss at the end. The broker is the test-only mochi-mqtt program
k6/extension/internal/testbroker, which takes $share/... literally."""

import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, loopback_port, wait_until
from k6_runs import run_k6
from loopback_brokers import listening, mochi_broker

SHAREDSUB = ROOT / "k6/scenarios/sharedsub-1K-5-1K-1K.js"


@pytest.fixture(scope="module")
def literal_share_broker(tmp_path_factory):
    with mochi_broker(tmp_path_factory.mktemp("testbroker"), loopback_port(11891), "-literal-share") as url:
        yield url


def run_sharedsub(k6_bin, tmp_path, url, **env):
    run_id = f"test-probe-{int(time.time() * 1000)}"
    p, _ = run_k6(
        k6_bin,
        SHAREDSUB,
        env={"MQTT_URL": url, "SCALE": "0.05", "DURATION": "3s", "RESULTS_DIR": str(tmp_path), "RUN_ID": run_id, **env},
    )
    files = list(Path(tmp_path).glob(f"{run_id}.json"))
    return p, (json.loads(files[0].read_text()) if files else None)


def test_fan_in_on_a_broker_without_shared_subscriptions_stops_before_load(k6_bin, tmp_path, literal_share_broker):
    p, r = run_sharedsub(k6_bin, tmp_path, literal_share_broker, MQTT_VERSION="3.1.1")
    err = p.stderr.replace('\\"', '"')
    assert p.returncode != 0, err[-3000:]
    for want in (
        "sharedsub-1K-5-1K-1K:",
        "seems not to support shared subscriptions over MQTT 3.1.1",
        '"$share/benchmark/test/#"',
        "MQTT_VERSION=5",
    ):
        assert want in err, (want, err[-3000:])
    assert r and not r["passed"] and r["counts"]["mqtt_publishes"] == 0


def test_fan_in_under_3_1_1_on_mosquitto_passes_the_probe(k6_bin, tmp_path):
    port = loopback_port(11892)
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
    broker = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: listening(port), timeout=10)
        p, r = run_sharedsub(k6_bin, tmp_path, f"mqtt://127.0.0.1:{port}", MQTT_VERSION="3.1.1")
    finally:
        broker.terminate()
        broker.wait(10)
    assert p.returncode == 0, p.stderr[-3000:]
    c = r["counts"]
    # The probe's message counts nowhere: receives are the benchmark's own.
    assert c["mqtt_receives"] == c["mqtt_publishes"] > 0 and c["mqtt_lost"] == 0
