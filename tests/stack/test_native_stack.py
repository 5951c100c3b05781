"""The native stack collects host, broker and k6 metrics into a real
InfluxDB through the real Telegraf, with the configs compose mounts."""

import subprocess
import time

import requests

from conftest import ROOT, TEST_PORTS, Stack, loopback_port, wait_until
from host_processes import ended


def measurement_counts(stack, start="-2m"):
    rows = stack.flux(f"""from(bucket:"mqtt-bench") |> range(start:{start})
      |> group(columns:["_measurement"]) |> count() |> keep(columns:["_measurement","_value"])""")
    return {r["_measurement"]: int(r["_value"]) for r in rows}


def test_stack_collects_host_broker_and_node_exporter_metrics(stack):
    # 1,000 messages through the broker.
    lines = "\n".join(str(i) for i in range(1000)) + "\n"
    subprocess.run(
        ["mosquitto_pub", "-h", "127.0.0.1", "-p", TEST_PORTS["MQTT_PORT"], "-q", "1", "-t", "stack-test", "-l"],
        input=lines,
        text=True,
        check=True,
        timeout=30,
    )
    t0 = time.time()

    def collected():
        rec = stack.flux("""from(bucket:"mqtt-bench") |> range(start:-2m)
          |> filter(fn:(r) => r._measurement == "mosquitto_sys" and r.topic == "$SYS/broker/messages/received")
          |> last()""")
        cpu = stack.flux("""from(bucket:"mqtt-bench") |> range(start:-2m)
          |> filter(fn:(r) => r._measurement == "procstat" and r._field == "cpu_usage") |> max()""")
        got = measurement_counts(stack)
        ok = (
            rec
            and float(rec[0]["_value"]) >= 1000
            and cpu
            and float(cpu[0]["_value"]) > 0
            and got.get("cpu")
            and got.get("mem")
            and got.get("prometheus")
        )
        return (rec, cpu, got) if ok else None

    assert wait_until(collected, timeout=20), f"not all metrics arrived: {measurement_counts(stack)}"
    assert time.time() - t0 < 20
    # The host CPU series the reports use: cpu-total usage_idle.
    idle = stack.flux("""from(bucket:"mqtt-bench") |> range(start:-2m)
      |> filter(fn:(r) => r._measurement == "cpu" and r.cpu == "cpu-total" and r._field == "usage_idle") |> last()""")
    assert idle and 0 <= float(idle[0]["_value"]) <= 100
    mem = stack.flux("""from(bucket:"mqtt-bench") |> range(start:-2m)
      |> filter(fn:(r) => r._measurement == "mem" and (r._field == "used" or r._field == "used_percent")) |> last()""")
    assert {r["_field"] for r in mem} == {"used", "used_percent"}
    node = stack.flux("""from(bucket:"mqtt-bench") |> range(start:-2m)
      |> filter(fn:(r) => r._measurement == "prometheus" and r._field == "node_load1") |> last()""")
    assert node, "no node_exporter series"


def test_v1_listener_point_reads_back_with_flux_and_influxql(stack):
    marker = f"probe{int(time.time() * 1000)}"
    r = requests.post(
        f"http://127.0.0.1:{TEST_PORTS['TELEGRAF_K6_PORT']}/write",
        params={"db": "k6"},
        data=f"listener_probe,marker={marker} value=42",
        timeout=10,
    )
    assert r.status_code == 204, r.text

    def flux_rows():
        return stack.flux(f'''from(bucket:"mqtt-bench") |> range(start:-5m)
          |> filter(fn:(r) => r._measurement == "listener_probe" and r.marker == "{marker}")''')

    rows = wait_until(flux_rows, timeout=20)
    assert rows and float(rows[0]["_value"]) == 42

    res = stack.influxql(f"SELECT value FROM listener_probe WHERE marker = '{marker}'")
    values = res["results"][0]["series"][0]["values"]
    assert values[0][1] == 42


def test_series_tags_stay_low_cardinality(stack):
    # No per-client or per-pid tag may reach InfluxDB.
    rows = stack.flux("""import "influxdata/influxdb/schema"
      schema.tagKeys(bucket:"mqtt-bench", start:-10m)""")
    keys = {r["_value"] for r in rows}
    assert not keys & {"pid", "client_id", "clientid", "vu", "iter"}, keys


def test_port_in_use_is_named(tmp_path):
    busy = Stack(tmp_path / "busy")
    busy.env["INFLUXDB_PORT"] = TEST_PORTS["INFLUXDB_PORT"]  # held by the session stack
    r = busy.run("up", check=False)
    assert r.returncode != 0
    assert "already running" in r.stderr or "INFLUXDB_PORT" in r.stderr


def test_unknown_broker_is_refused(tmp_path):
    r = Stack(tmp_path / "x").run("up", "--broker", "no-such-broker", check=False)
    assert r.returncode != 0 and "unknown broker 'no-such-broker'" in r.stderr


def test_down_stops_exactly_what_up_started(tmp_path):
    s = Stack(tmp_path / "lifecycle")
    ports = {
        "INFLUXDB_PORT": str(loopback_port(28086)),
        "TELEGRAF_K6_PORT": str(loopback_port(27186)),
        "NODE_EXPORTER_PORT": str(loopback_port(29100)),
        "MQTT_PORT": str(loopback_port(21883)),
        "MQTTS_PORT": str(loopback_port(24841)),
        "MTLS_PORT": str(loopback_port(24842)),
        "WS_PORT": str(loopback_port(24843)),
    }
    s.env.update(ports)
    r = s.run("up", check=False)
    assert r.returncode == 0, r.stderr
    pids = s.pids()
    assert set(pids) == {"influxd", "node_exporter", "broker", "telegraf"}
    s.run("down")
    for name, pid in pids.items():
        assert ended(pid), f"{name} (pid {pid}) still running after down"
    assert not list((s.state / "pids").glob("*.pid"))
    assert (s.state / "influxdb" / "influxd.bolt").exists(), "down must keep the data"
    assert s.run("status", check=False).returncode != 0


def test_setup_second_run_is_a_cache_hit():
    t0 = time.time()
    r = subprocess.run([str(ROOT / "scripts/setup.sh")], text=True, capture_output=True)
    took = time.time() - t0
    assert r.returncode == 0, r.stderr
    print(f"setup cache hit took {took:.1f}s\n{r.stderr}")
    assert took < 60, f"second setup run took {took:.0f}s"
    assert "FAILED" not in r.stderr


def answers(url, status):
    """Whether url answers with status (a service that is not listening yet does not)."""
    try:
        return requests.get(url, timeout=5).status_code == status
    except requests.ConnectionError:
        return False


def test_metrics_survive_an_influxdb_outage_and_a_telegraf_restart(stack):
    """The disk buffer: a point written while InfluxDB is down, then a
    Telegraf restart, still reaches InfluxDB once it is back. InfluxDB is
    stopped, not frozen: a frozen one would still take the write Telegraf had
    already sent when it thaws, and the test would pass without the buffer."""
    marker = f"outage{int(time.time() * 1000)}"
    r = stack.run("stop", "influxd", check=False)
    assert r.returncode == 0, r.stderr
    try:
        r = requests.post(
            f"http://127.0.0.1:{TEST_PORTS['TELEGRAF_K6_PORT']}/write",
            params={"db": "k6"},
            data=f"outage_probe,marker={marker} value=7",
            timeout=10,
        )
        assert r.status_code == 204
        time.sleep(2)  # accepted into Telegraf's buffer; its writes fail (connection refused)
        r = stack.run("restart", "telegraf", check=False)
        assert r.returncode == 0, r.stderr
    finally:
        r = stack.run("start", "influxd", check=False)
    assert r.returncode == 0, r.stderr
    assert wait_until(lambda: answers(f"{stack.influx}/health", 200), timeout=60), "InfluxDB did not come back"

    def arrived():
        return stack.flux(f'''from(bucket:"mqtt-bench") |> range(start:-10m)
          |> filter(fn:(r) => r._measurement == "outage_probe" and r.marker == "{marker}")''')

    assert wait_until(arrived, timeout=60), "the buffered point was lost"
    assert wait_until(lambda: answers(f"http://127.0.0.1:{TEST_PORTS['TELEGRAF_K6_PORT']}/ping", 204), timeout=30)
