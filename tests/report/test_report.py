"""The report, against a real InfluxDB holding a real run."""

import json
import os
import re
import shutil
import subprocess
import time
from datetime import UTC, datetime

import pytest

from compare_runs import report
from conftest import ROOT, TEST_PORTS, lib_value
from k6_runs import run_scenario_to_influx
from mqttbench.brokers import facts as broker_facts
from mqttbench.report import tables


@pytest.fixture(scope="module")
def step_run(stack, k6_bin, tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    run_id = f"report-steps-{int(time.time())}"
    p, _ = run_scenario_to_influx(stack, k6_bin, "p2p", run_id, raw, STEPS="300:4s,1000:4s,2500:4s")
    assert p.returncode == 0, p.stderr[-3000:]
    time.sleep(4)  # Telegraf's last flush
    env = dict(os.environ, INFLUX_URL=stack.influx, INFLUX_TOKEN=stack.token)
    return {
        "raw": raw,
        "run_id": run_id,
        "env": env,
        "out": tmp_path_factory.mktemp("reports"),
        "result": json.loads((raw / f"{run_id}.json").read_text()),
    }


def make_report(step_run, *extra):
    r = report(
        [step_run["run_id"], "--results", str(step_run["raw"]), "--out", str(step_run["out"]), *extra], step_run["env"]
    )
    assert r.returncode == 0, r.stderr
    d = step_run["out"] / step_run["run_id"]
    return d, json.loads((d / "results.json").read_text()), (d / "report.md").read_text()


def iso(ms):
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def flux_mean(stack, start, end, predicate):
    rows = stack.flux(
        f'from(bucket: "mqtt-bench") |> range(start: {iso(start)}, stop: {iso(end)})'
        f" |> filter(fn: (r) => {predicate}) |> group() |> mean()"
    )
    return float(rows[0]["_value"])


def test_tables_agree_with_result_file_and_influxdb(stack, step_run):
    d, t, md = make_report(step_run)
    raw = step_run["result"]
    c = raw["counts"]
    assert t["success"]["published"] == c["mqtt_publishes"] and t["success"]["received"] == c["mqtt_receives"]
    assert t["success"]["lost"] == c["mqtt_lost"] == 0
    for k in ("p50", "p75", "p90", "p95", "p99"):
        assert t["mqttbs"]["percentiles"][k] == raw["latency_ms"]["pub_to_sub"][k]
    assert [s["rate"] for s in t["steps"]] == [300, 1000, 2500]
    for row, step in zip(t["steps"], raw["steps"], strict=True):
        assert row["achieved_rate"] == pytest.approx(step["achieved_rate"])
        # Average CPU (1 - idle) of the step, computed here straight from InfluxDB.
        idle = flux_mean(
            stack,
            step["start"],
            step["end"],
            'r._measurement == "cpu" and r.cpu == "cpu-total" and r._field == "usage_idle" and r.broker == "mosquitto"',
        )
        assert row["cpu_avg"] == pytest.approx(100 - idle, abs=0.5)
        mem = flux_mean(
            stack,
            step["start"],
            step["end"],
            'r._measurement == "mem" and r._field == "used_percent" and r.broker == "mosquitto"',
        )
        assert row["mem_avg"] == pytest.approx(mem, abs=0.05)
        assert row["tps_in"] == pytest.approx(step["sent"] / ((step["end"] - step["start"]) / 1000))
    # The markdown shows the same numbers, rounded.
    assert f"{t['steps'][0]['cpu_avg']:,.2f}" in md
    assert f"{raw['latency_ms']['pub_to_sub']['p99']:,.3f}" in md
    assert "Workload TPS (In + Out) | Average CPU Usage % (1 - Idle)" in md
    assert "Actual msg rate" in md and "| p50 | p75 | p90 | p95 | p99 |" in md
    assert "## Full disclosure" in md and "net.core.somaxconn" in md and "v1.8.1" in md
    # The broker's facts, as its README shows them (one source: brokers/mosquitto/broker.toml).
    assert broker_facts.markdown(broker_facts.load("mosquitto")) in md
    assert t["generator"]["shares_broker_host"] and "load generator ran on the broker's host" in md
    # How many messages carry a later message's receive time (the poller's bound), from the result file.
    shared = c["mqtt_receives_shared_read"]
    assert t["generator"]["shared_read_pct"] == pytest.approx(100 * shared / c["mqtt_receives"])
    assert f"Timing: {t['generator']['shared_read_pct']:,.1f}% of received messages" in md


def test_capacity_search_picks_the_right_step(stack, step_run):
    _, t, md = make_report(step_run)
    # Judged on the broker's own CPU (procstat natively), over the host's cores.
    cores = step_run["result"]["host"]["cpus"]
    assert f"judged on the broker process's CPU as a share of the broker host's {cores} cores" in md, md
    for s in t["steps"]:
        assert s["cpu_judged"] == pytest.approx(s["broker_cpu_avg"] / cores)
    cpus = [s["cpu_judged"] for s in t["steps"]]
    # A bound between the step CPUs: the answer is the highest-TPS step
    # whose CPU is under it, computed here independently.
    target = sorted(cpus)[1] + 0.001
    _, t2, md = make_report(step_run, "--cpu-target", str(target))
    fits = [s for s in t2["steps"] if s["cpu_judged"] <= target and s["passed"]]
    expected = max(fits, key=lambda s: s["tps"])
    assert t2["capacity"]["recommended"]["rate"] == expected["rate"]
    assert f"at step {expected['rate']:,.1f} msg/s" in md
    _, t3, md3 = make_report(step_run, "--cpu-target", str(min(cpus) - 1))
    assert t3["capacity"]["recommended"] is None and "no step stayed at or under" in md3


def test_basic_set_summary_has_the_reports_figures(step_run, tmp_path):
    """scripts/bench-basic-set.sh's summary: one row per result file, with the
    report's success and latency figures; other JSON files are skipped."""
    raw = step_run["result"]
    (tmp_path / "run.json").write_text(json.dumps(raw))
    (tmp_path / "other.json").write_text("[]")
    py = lib_value('echo "$CACHE/venv/current/bin/python"')
    r = subprocess.run(
        [py, "-m", "mqttbench.report.basic_set", str(tmp_path)], cwd=ROOT, text=True, capture_output=True
    )
    assert r.returncode == 0, r.stderr
    (row,) = json.loads((tmp_path / "basic-set.json").read_text())
    lat = raw["latency_ms"]["pub_to_sub"]
    assert row["scenario"] == raw["scenario"] and row["passed"] == raw["passed"]
    assert row["published"] == raw["counts"]["mqtt_publishes"] and row["lost"] == 0
    assert row["delivery_success_pct"] == 100.0 and row["connection_success_pct"] == 100.0
    assert (row["latency_avg_ms"], row["latency_p99_ms"]) == (lat["avg"], lat["p99"])
    assert row["achieved_rate"] == pytest.approx(sum(s["achieved_rate"] for s in raw["steps"]))
    assert f"{raw['scenario']:24} PASS" in r.stdout and f"results: {tmp_path}/basic-set.json" in r.stdout


def test_capacity_rule():
    def row(rate, cpu, ok=True, broker=None):
        return {"rate": rate, "tps": 2 * rate, "cpu_avg": cpu, "broker_cpu_avg": broker, "passed": ok}

    rows = [row(1000, 30), row(2000, 55), row(3000, 74.9), row(4000, 80), row(5000, 95)]
    assert tables.capacity(rows, 75, True)["recommended"]["rate"] == 3000
    assert tables.capacity(rows, 75, True)["cpu"].startswith("host CPU (1 - idle): every process on the host")
    rows[2]["passed"] = False  # a step failing its checks is not recommended
    assert tables.capacity(rows, 75, True)["recommended"]["rate"] == 2000
    none = [row(1, None), row(2, None)]
    assert tables.capacity(none, 75, True)["reason"] == "host CPU is missing from InfluxDB for every step"


def test_one_step_has_no_capacity():
    """One load level shows no limit: a capacity needs steps."""
    assert (
        tables.capacity([{"rate": 1000, "tps": 2000, "cpu_avg": 72.0, "broker_cpu_avg": 8.0, "passed": True}], 75, True)
        is None
    )


def test_capacity_is_judged_on_the_broker_and_warns_when_others_dominate():
    # A 2-core host: the broker process at 8% of one core is 4% of the
    # host; the host at 72% busy is other programs.
    rows = [
        {"rate": 1000, "tps": 2000, "cpu_avg": 72.0, "broker_cpu_avg": 8.0, "passed": True},
        {"rate": 2000, "tps": 4000, "cpu_avg": 80.0, "broker_cpu_avg": 16.0, "passed": True},
    ]
    c = tables.capacity(rows, 75, True, cores=2)
    assert c["cpu"] == "the broker process's CPU as a share of the broker host's 2 cores"
    assert [r["cpu_judged"] for r in rows] == [4.0, 8.0] and c["recommended"]["rate"] == 2000
    assert c["warning"].startswith("other processes used more of the host's CPU than the broker"), c["warning"]
    assert "the host was 80.0% busy, the broker 8.0%" in c["warning"]
    # Without the broker's CPU for every step, the host's is judged, and said to be.
    rows[0]["broker_cpu_avg"] = None
    c = tables.capacity(rows, 75, True, cores=2)
    assert c["recommended"]["rate"] == 1000 and "host CPU (1 - idle)" in c["cpu"] and not c["warning"]


def test_a_single_step_runs_report_has_no_capacity_line(stack, k6_bin, tmp_path, step_run):
    raw = tmp_path / "raw"
    raw.mkdir()
    run_id = f"report-one-step-{int(time.time())}"
    p, _ = run_scenario_to_influx(stack, k6_bin, "p2p", run_id, raw, DURATION="3s")
    assert p.returncode == 0, p.stderr[-2000:]
    r = report([run_id, "--results", str(raw), "--out", str(tmp_path)], step_run["env"])
    assert r.returncode == 0, r.stderr
    md = (tmp_path / run_id / "report.md").read_text()
    assert "Capacity (" not in md and "One load level: no capacity" in md, md
    t = json.loads((tmp_path / run_id / "results.json").read_text())
    assert t["capacity"] is None and "knee" not in t["charts"]


def test_charts_are_non_empty_images(step_run):
    import matplotlib.image as mpimg

    d, t, _ = make_report(step_run)
    assert set(t["charts"]) == {"throughput", "latency", "cpu", "memory", "knee"}
    for name in t["charts"].values():
        p = d / name
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000, name
        img = mpimg.imread(p)
        assert img.std() > 0.01, f"{name} is blank"


def without_written_time(md):
    """report.md less the time it was written (its last line says when)."""
    return re.sub(r"Report written \S+", "Report written <time>", md)


def test_unreachable_influxdb_renders_from_the_saved_series_or_keeps_a_complete_report(step_run):
    """With InfluxDB down later, a report renders again from its folder's
    series.json, the same figures; a folder without one (a report made
    before series were saved) keeps its complete report rather than replace
    it with one full of n/a: its host and broker figures exist nowhere else."""
    d, t, md = make_report(step_run)
    assert t["missing"] == [], t["missing"]
    assert (d / "series.json").is_file() and (d / f"{step_run['run_id']}.json").is_file(), sorted(d.iterdir())
    env = dict(step_run["env"], INFLUX_URL="http://127.0.0.1:9")
    args = [step_run["run_id"], "--results", str(step_run["raw"]), "--out", str(step_run["out"])]
    r = report(args, env)
    assert r.returncode == 0, r.stderr
    assert without_written_time((d / "report.md").read_text()) == without_written_time(md)
    (d / "series.json").unlink()
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    r = report(args, env)
    assert r.returncode == 3, r.stderr
    assert f"kept {d / 'report.md'}, a complete report" in r.stderr
    assert "InfluxDB at http://127.0.0.1:9" in r.stderr and "Connection refused" in r.stderr, r.stderr
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before, "the complete report was changed"


def test_a_run_folder_copied_elsewhere_renders_the_same_report_without_influxdb(step_run, tmp_path):
    d, t, md = make_report(step_run)
    copy = tmp_path / "from-another-machine"
    shutil.copytree(d, copy)
    (copy / "report.md").unlink()
    # No InfluxDB answers there, and no token: the folder alone.
    env = {k: v for k, v in step_run["env"].items() if k != "INFLUX_TOKEN"} | {"INFLUX_URL": "http://127.0.0.1:9"}
    r = report([str(copy)], env)
    assert r.returncode == 0, r.stderr
    again = (copy / "report.md").read_text()
    assert without_written_time(again) == without_written_time(md)
    t2 = json.loads((copy / "results.json").read_text())
    assert t2["missing"] == [] and t2["mqttbs"] == t["mqttbs"] and t2["io"] == t["io"]
    # Two saved folders side by side, nothing run, InfluxDB not asked.
    other = tmp_path / "second"
    shutil.copytree(copy, other)
    rid = f"{step_run['run_id']}-copy"
    result = json.loads((other / f"{step_run['run_id']}.json").read_text()) | {"run_id": rid}
    (other / f"{step_run['run_id']}.json").write_text(json.dumps(result))
    c = subprocess.run(
        [str(ROOT / "scripts/compare.sh"), "--run", str(copy), "--run", str(other), "--out", str(tmp_path)],
        env=env, text=True, capture_output=True,
    )  # fmt: skip
    assert c.returncode == 0, c.stderr
    cmp_dir = next(tmp_path.glob("compare-*"))
    cmd = (cmp_dir / "compare.md").read_text()
    assert f"|  | {step_run['run_id']} | {rid} |" in cmd, cmd
    columns = json.loads((cmp_dir / "results.json").read_text())["brokers"]
    assert [b["missing"] for b in columns] == [[], []], columns
    assert columns[0]["figures"]["host_cpu_avg"] == columns[1]["figures"]["host_cpu_avg"] is not None


def test_missing_influxdb_is_named_in_a_new_report(step_run, tmp_path):
    env = dict(step_run["env"], INFLUX_URL="http://127.0.0.1:9")
    r = report([step_run["run_id"], "--results", str(step_run["raw"]), "--out", str(tmp_path)], env)
    assert r.returncode == 0, r.stderr
    assert "InfluxDB at http://127.0.0.1:9" in r.stderr and "missing" in r.stderr
    md = (tmp_path / step_run["run_id"] / "report.md").read_text()
    assert "Missing data" in md and "n/a" in md and "Connection refused" in md
    # The tables are still there, from the result file.
    assert md.count("| 300.0 (16 B) |") == 1 and "| p50 | p75 |" in md
    # Rerun with InfluxDB back: the incomplete report is replaced by a complete one.
    r = report([step_run["run_id"], "--results", str(step_run["raw"]), "--out", str(tmp_path)], step_run["env"])
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / step_run["run_id"] / "results.json").read_text())["missing"] == []


def test_missing_token_is_named(step_run, tmp_path):
    env = {k: v for k, v in step_run["env"].items() if k != "INFLUX_TOKEN"}
    r = report([step_run["run_id"], "--results", str(step_run["raw"]), "--out", str(tmp_path)], env)
    assert r.returncode == 0 and "INFLUX_TOKEN is not set" in r.stderr


def test_refused_token_is_named_not_a_crash(step_run, tmp_path):
    # Another stack's token (say the native one's, with compose's InfluxDB up).
    env = dict(step_run["env"], INFLUX_TOKEN="another-stacks-token")
    r = report([step_run["run_id"], "--results", str(step_run["raw"]), "--out", str(tmp_path)], env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert f"InfluxDB at {step_run['env']['INFLUX_URL']} refuses INFLUX_TOKEN" in r.stderr, r.stderr
    assert "Missing data" in (tmp_path / step_run["run_id"] / "report.md").read_text()


def test_unknown_run_is_a_clear_error(step_run):
    r = report(["no-such-run", "--results", str(step_run["raw"])], step_run["env"])
    assert r.returncode == 2 and "no result file for run 'no-such-run'" in r.stderr and "Traceback" not in r.stderr


def test_compare_mode(stack, k6_bin, step_run):
    other = f"report-qos0-{int(time.time())}"
    p, _ = run_scenario_to_influx(stack, k6_bin, "p2p", other, step_run["raw"], QOS="0", DURATION="4s")
    assert p.returncode == 0
    r = report(
        [step_run["run_id"], other, "--results", str(step_run["raw"]), "--out", str(step_run["out"])], step_run["env"]
    )
    assert r.returncode == 0, r.stderr
    cmp_dir = sorted(step_run["out"].glob("compare-*"))[-1]
    md = (cmp_dir / "compare.md").read_text()
    # The one comparison format (scripts/compare.sh's): a column per run,
    # and first what the runs differ in.
    assert f"|  | {step_run['run_id']} | {other} |" in md, md
    params = md.split("## Parameters")[1].split("##")[0]
    assert "| qos | 1 | 0 |" in params and "| scenario | p2p | p2p |" in params, params
    assert "| broker | mosquitto | mosquitto |" in params, params
    assert "## Latency (ms)" in md and "**Broker:** `mosquitto`, as the run's result records it" in md, md
    assert (cmp_dir / "bars.png").stat().st_size > 5000


def test_connection_scenario_report(stack, k6_bin, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    run_id = f"report-conn-{int(time.time())}"
    p, _ = run_scenario_to_influx(stack, k6_bin, "conn", run_id, raw, SCALE="0.1", CONNECT_RATE="200", DURATION="3s")
    assert p.returncode == 0, p.stderr[-2000:]
    env = dict(os.environ, INFLUX_URL=stack.influx, INFLUX_TOKEN=stack.token)
    r = report([run_id, "--results", str(raw), "--out", str(tmp_path)], env)
    assert r.returncode == 0, r.stderr
    t = json.loads((tmp_path / run_id / "results.json").read_text())
    assert t["connections"]["established"] == 100 and t["connections"]["success_pct"] == 100.0
    assert t["connections"]["rate"] and t["connections"]["connect_p99_ms"] > 0
    md = (tmp_path / run_id / "report.md").read_text()
    assert "No publish steps" in md and "| 100 | 0 | 100.000% |" in md


def test_the_broker_cpu_per_new_connection_tells_tls_from_tcp(stack, k6_bin, tmp_path):
    # A 4 s connect ramp (the test stack samples the broker every second):
    # the same 200 clients over TCP and over TLS, reported side by side.
    raw = tmp_path / "raw"
    raw.mkdir()
    env = dict(os.environ, INFLUX_URL=stack.influx, INFLUX_TOKEN=stack.token)
    cost = {}
    for scenario, url in [
        ("conn-tcp-10K-100", stack.mqtt_url),
        ("conn-tls-10K-100", f"mqtts://127.0.0.1:{TEST_PORTS['MQTTS_PORT']}"),
    ]:
        run_id = f"report-{scenario}-{int(time.time() * 1000)}"
        p, _ = run_scenario_to_influx(
            stack,
            k6_bin,
            scenario,
            run_id,
            raw,
            MQTT_URL=url,
            MQTTBENCH_STATE=str(stack.state),
            SCALE="0.02",
            CONNECT_RATE="50",
            DURATION="6s",
        )
        assert p.returncode == 0, p.stderr[-2000:]
        time.sleep(2)  # Telegraf's last flush
        r = report([run_id, "--results", str(raw), "--out", str(tmp_path)], env)
        assert r.returncode == 0, r.stderr
        c = json.loads((tmp_path / run_id / "results.json").read_text())["connections"]
        assert c["established"] == 200 and 3 <= c["connect_ramp_s"] <= 6, c
        assert c["broker_cpu_ms_per_connect"] and c["broker_cpu_ms_per_connect"] > 0, c
        md = (tmp_path / run_id / "report.md").read_text()
        assert f"Broker CPU per new connection: {c['broker_cpu_ms_per_connect']:,.3f} ms" in md, md
        cost[scenario] = c["broker_cpu_ms_per_connect"]
    # A TLS handshake costs Mosquitto more than a plain CONNECT (7x here).
    assert cost["conn-tls-10K-100"] > cost["conn-tcp-10K-100"], cost
