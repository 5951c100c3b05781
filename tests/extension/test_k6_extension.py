"""The k6 extension, run by the real k6 build against real Mosquitto."""

import socket
import time
from pathlib import Path

import pytest

from conftest import ROOT, TEST_PORTS, wait_until
from delay_proxy import DelayProxy
from k6_runs import run_k6

HERE = Path(__file__).parent / "k6"


def metric(summary, name, key):
    return summary["metrics"][name][key]


def test_qos1_messages_received_exactly_once(stack, k6_bin, tmp_path):
    p, s = run_k6(
        k6_bin, HERE / "p2p_exact.js", env={"MQTT_URL": stack.mqtt_url, "N": "5000"}, summary=tmp_path / "s.json"
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert metric(s, "mqtt_receives", "count") == 5000
    assert metric(s, "mqtt_lost", "count") == 0
    assert metric(s, "mqtt_duplicates", "count") == 0


def test_qos2_messages_received_exactly_once(stack, k6_bin, tmp_path):
    p, s = run_k6(
        k6_bin,
        HERE / "p2p_exact.js",
        env={"MQTT_URL": stack.mqtt_url, "N": "3000", "QOS": "2"},
        summary=tmp_path / "s.json",
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert metric(s, "mqtt_receives", "count") == 3000


def test_threshold_failure_fails_the_run_with_exit_code_99(stack, k6_bin, tmp_path):
    # The same delivery judged twice: with the right expectation the run
    # passes; with a wrong one its thresholds fail, which k6 reports with its
    # exit code for failed thresholds (99), not as an error of the script.
    env = {"MQTT_URL": stack.mqtt_url, "N": "1000", "RATE": "2000"}
    p, _ = run_k6(k6_bin, HERE / "p2p_exact.js", env=env, summary=tmp_path / "ok.json")
    assert p.returncode == 0, p.stderr[-3000:]
    p, s = run_k6(k6_bin, HERE / "p2p_exact.js", env={**env, "EXPECT": "1001"}, summary=tmp_path / "bad.json")
    assert p.returncode == 99, (p.returncode, p.stderr[-3000:])
    # Every message arrived: the thresholds, not the delivery, failed the run.
    assert metric(s, "mqtt_receives", "count") == 1000


def test_shared_subscription_spreads_without_duplicates(stack, k6_bin, tmp_path):
    p, s = run_k6(k6_bin, HERE / "shared.js", env={"MQTT_URL": stack.mqtt_url}, summary=tmp_path / "s.json")
    assert p.returncode == 0, p.stderr[-3000:]
    assert metric(s, "mqtt_receives", "count") == 4000
    assert metric(s, "mqtt_duplicates", "count") == 0


@pytest.mark.quiet
def test_known_added_delay_is_measured_within_5_percent(stack, k6_bin, tmp_path):
    # Baseline: the same path without the proxy.
    direct = stack.mqtt_url
    p, base = run_k6(
        k6_bin, HERE / "delay.js", env={"SUB_URL": direct, "PUB_URL": direct}, summary=tmp_path / "base.json"
    )
    assert p.returncode == 0, p.stderr[-3000:]
    delay_ms = 40.0
    with DelayProxy(int(TEST_PORTS["MQTT_PORT"]), delay_ms / 1000) as proxy:
        p, s = run_k6(
            k6_bin,
            HERE / "delay.js",
            env={"SUB_URL": direct, "PUB_URL": f"mqtt://127.0.0.1:{proxy.listen_port}"},
            summary=tmp_path / "s.json",
        )
    assert p.returncode == 0, p.stderr[-3000:]
    baseline = metric(base, "mqtt_latency_p50", "value")
    measured = metric(s, "mqtt_latency_p50", "value")
    expected = baseline + delay_ms
    print(f"baseline p50 {baseline:.3f} ms, with {delay_ms} ms proxy: {measured:.3f} ms (expected {expected:.3f})")
    assert abs(measured - expected) <= 0.05 * expected


def test_invalid_options_fail_before_any_connection(k6_bin, connection_counter):
    p, _ = run_k6(
        k6_bin, HERE / "invalid.js", env={"MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}", "QOS": "3"}
    )
    connection_counter.close()
    assert p.returncode != 0
    assert 'option "qos" must be between 0 and 2' in p.stderr.replace('\\"', '"'), p.stderr
    assert connection_counter.accepted == [], "a connection was made before the options were validated"


def test_unreachable_broker_names_the_fix(k6_bin):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p, _ = run_k6(k6_bin, HERE / "invalid.js", env={"MQTT_URL": f"mqtt://127.0.0.1:{port}", "QOS": "1"})
    assert p.returncode != 0
    assert "nothing listens on" in p.stderr, p.stderr[-2000:]


def test_per_second_series_reach_influxdb_with_low_cardinality_tags(stack, k6_bin, tmp_path):
    run_id = f"influx-{int(time.time())}"
    p, _ = run_k6(
        k6_bin,
        HERE / "p2p_exact.js",
        env={"MQTT_URL": stack.mqtt_url, "N": "3000", "RUN_ID": run_id},
        out=stack.k6_out,
        summary=tmp_path / "s.json",
    )
    assert p.returncode == 0, p.stderr[-3000:]

    def published():
        rows = stack.flux(f'''from(bucket:"mqtt-bench") |> range(start:-10m)
          |> filter(fn:(r) => r._measurement == "mqtt_publishes" and r.run_id == "{run_id}")
          |> group() |> sum()''')
        return rows and float(rows[0]["_value"]) == 3000 and rows

    assert wait_until(published, timeout=20), "k6 counters did not reach InfluxDB"
    rows = stack.flux("""import "influxdata/influxdb/schema"
      schema.measurementTagKeys(bucket:"mqtt-bench", measurement:"mqtt_publishes", start:-10m)""")
    keys = {r["_value"] for r in rows}
    assert {"run_id", "role", "qos", "scenario"} <= keys, keys
    assert not keys & {"client_id", "clientid", "vu", "iter"}, keys
    p99 = stack.flux(f'''from(bucket:"mqtt-bench") |> range(start:-10m)
      |> filter(fn:(r) => r._measurement == "mqtt_latency_1s" and r.stat == "p99" and r.run_id == "{run_id}")''')
    assert p99, "no per-second latency series"


@pytest.mark.quiet
def test_examples_run(stack, k6_bin):
    examples = ROOT / "k6/extension/examples"
    scripts = sorted(examples.glob("*.js"))
    assert scripts, f"no examples in {examples}"
    for script in scripts:
        p, _ = run_k6(k6_bin, script, env={"MQTT_URL": stack.mqtt_url, "DURATION": "2s"})
        assert p.returncode == 0, f"{script.name}: {p.stderr[-2000:]}"
    assert "greeting: Hello MQTT!" in run_k6(k6_bin, examples / "hello.js", env={"MQTT_URL": stack.mqtt_url})[0].stderr


def test_setup_links_our_k6_as_bin_k6(k6_bin):
    # README: `export PATH="$PWD/bin:$PATH"` puts our k6 on the user's PATH.
    assert (ROOT / "bin/k6").resolve() == Path(k6_bin).resolve()
