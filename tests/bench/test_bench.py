"""The main job (README's first command) on the native stack, and its bad input."""

import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import RESULTS, ROOT, loopback_port


def bench(stack, *args):
    return subprocess.run(
        [str(ROOT / "scripts/bench.sh"), *args], env=stack.env, text=True, capture_output=True, timeout=600
    )


def test_bench_runs_a_scenario_and_writes_the_report(stack, tmp_path):
    # The run id as a k6 option (-e RUN_ID=...): bench.sh reports that run;
    # k6's own options, with a value apart or after '=', reach k6.
    run_id = f"bench-test-{time.time_ns()}"
    summary, points = tmp_path / "summary.json", tmp_path / "points.json"
    r = bench(
        stack,
        "--native",
        "-e",
        "DURATION=3s",
        "-e",
        "SCALE=0.1",
        "-e",
        f"RUN_ID={run_id}",
        "--summary-export",
        str(summary),
        f"--out=json={points}",
        "--tag",
        "site=lab",
    )
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        report = RESULTS / f"{run_id}/report.md"
        assert report.exists() and "Workload TPS (In + Out)" in report.read_text()
        assert json.loads((RESULTS / f"raw/{run_id}.json").read_text())["run_id"] == run_id
        assert "mqtt_publishes" in json.loads(summary.read_text())["metrics"]
        point = next(json.loads(line) for line in points.open() if '"Point"' in line)
        assert point["data"]["tags"]["site"] == "lab"
    finally:
        (RESULTS / f"raw/{run_id}.json").unlink(missing_ok=True)
        shutil.rmtree(RESULTS / f"{run_id}", ignore_errors=True)


def test_bench_records_the_version_the_running_broker_reports(stack, tmp_path):
    # Another mosquitto first on PATH (a second install, say) is not the
    # broker that runs: the record is the running broker's own word.
    (tmp_path / "mosquitto").write_text("#!/bin/sh\necho 'mosquitto version 9.9.9'\nexit 3\n")
    (tmp_path / "mosquitto").chmod(0o755)
    sub = f"mosquitto_sub -h 127.0.0.1 -p {stack.env['MQTT_PORT']} -t $SYS/broker/version -C 1 -W 5"
    said = subprocess.run(sub.split(), text=True, capture_output=True).stdout.strip()
    assert said.startswith("mosquitto version "), said
    run_id = f"bench-version-{time.time_ns()}"
    r = subprocess.run(
        [str(ROOT / "scripts/bench.sh"), "--native", "-e", "DURATION=2s", "-e", "SCALE=0.1", "-e", f"RUN_ID={run_id}"],
        env=dict(stack.env, PATH=f"{tmp_path}:{os.environ['PATH']}", K6_WEB_DASHBOARD="false"),
        text=True,
        capture_output=True,
        timeout=600,
    )
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        versions = json.loads((RESULTS / f"raw/{run_id}.json").read_text())["versions"]
        source = "its version_topic (brokers/mosquitto/broker.toml)"
        assert versions["broker"] == said and versions["broker_source"] == source, versions
        assert f"broker mosquitto {said} ({source});" in (RESULTS / f"{run_id}/report.md").read_text()
    finally:
        (RESULTS / f"raw/{run_id}.json").unlink(missing_ok=True)
        shutil.rmtree(RESULTS / f"{run_id}", ignore_errors=True)


def test_bench_runs_a_tls_scenario_on_the_brokers_tls_listener(stack):
    # The README's path for every scenario: a TLS one measures the broker's
    # TLS listener, not the plain URL bench.sh gives the others.
    run_id = f"bench-tls-{time.time_ns()}"
    r = bench(
        stack,
        "--native",
        "--scenario",
        "conn-tls-10K-100",
        "-e",
        "SCALE=0.005",
        "-e",
        "CONNECT_RATE=50",
        "-e",
        "DURATION=3s",
        "-e",
        f"RUN_ID={run_id}",
    )
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        result = json.loads((RESULTS / f"raw/{run_id}.json").read_text())
        assert result["parameters"]["url"].startswith("mqtts://127.0.0.1:"), result["parameters"]["url"]
        assert result["latency_ms"]["tls_handshake"]["count"] == 50, result["latency_ms"]["tls_handshake"]
        # Toxiproxy forwards the plain listener: no TLS scenario goes through it.
        r = bench(stack, "--native", "--scenario", "conn-tls-10K-100", "--impair", "wan")
        assert r.returncode != 0 and "--impair" in r.stderr and "TLS" in r.stderr, r.stderr
        assert "Toxiproxy" not in r.stdout + r.stderr.split("error:")[0], r.stderr
    finally:
        (RESULTS / f"raw/{run_id}.json").unlink(missing_ok=True)
        shutil.rmtree(RESULTS / f"{run_id}", ignore_errors=True)


def test_bench_rejects_bad_input_before_any_load(stack):
    r = bench(stack, "--broker", "no-such-broker")
    assert r.returncode != 0 and "unknown broker 'no-such-broker'" in r.stderr
    r = subprocess.run(
        [str(ROOT / "scripts/bench.sh"), "--native", "-e", "QOS=3"],
        env=dict(stack.env, RUN_ID="bench-bad-qos"),
        text=True,
        capture_output=True,
        timeout=600,
    )
    # Bad input: exit 2, the scenario's own message, its refusal a file (k6/lib/refusal.js), no result.
    assert r.returncode == 2 and 'QOS="3" is invalid' in r.stderr.replace('\\"', '"'), r.stderr[-3000:]
    refusal = json.loads((RESULTS / "raw/bench-bad-qos.refused.json").read_text())
    assert refusal["cause"] == "bad_input" and 'QOS="3" is invalid' in refusal["message"], refusal
    assert refusal["message"] in r.stderr.splitlines()[-1], r.stderr[-3000:]
    assert not (RESULTS / "raw/bench-bad-qos.json").exists()


@pytest.mark.slow
def test_generator_benchmark_script_runs(stack, tmp_path):
    """The generator benchmark (delivered messages per CPU-second, RSS per connection) in its quick
    form: it runs, and its figures hang together."""
    out, page = tmp_path / "bench.json", tmp_path / "benchmarks.md"
    r = subprocess.run(
        [
            "python3",
            "-m",
            "mqttbench",
            "generator-bench",
            "--quick",
            "--rounds",
            "2",
            "--url",
            stack.mqtt_url,
            "--json",
            str(out),
            "--docs",
            str(page),
        ],
        env=stack.env,
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=600,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    figures = json.loads(out.read_text())
    readers = {t["reader"] for t in figures["throughput"]}
    assert readers == {"poller", "goroutines"}
    for t in figures["throughput"]:
        assert t["delivered"] > 0 and t["lost"] == 0 and t["delivered_per_cpu_second"] > 0, t
        assert 0 < t["latency_p50_ms"] <= t["latency_p99_ms"], t
    # The docs page it writes carries the same figures, with date, machine and command.
    text = page.read_text()
    # The command that reproduces it: the transports' URLs are the stack's (MQTTS_PORT, WS_PORT).
    tls, ws = f"mqtts://127.0.0.1:{stack.env['MQTTS_PORT']}", f"ws://127.0.0.1:{stack.env['WS_PORT']}/mqtt"
    command = f"- command: `python -m mqttbench generator-bench --quick --rounds 2 --url {stack.mqtt_url}"
    command += f" --tls-url {tls} --ws-url {ws}"
    for line in ("- date: ", "- machine: ", command, f"--docs {page}`", "RSS per idle connection"):
        assert line in text, text
    assert f"{figures['throughput'][0]['delivered']:,}" in text
    assert 0 < figures["idle"]["kb_per_connection"] < 20
    assert "msg per CPU-second" in r.stdout and "KB per connection" in r.stdout
    # The QoS matrix (p2p without --full): every level at both payloads, exact, with its ratio to QoS 0.
    qos = figures["qos"]
    cells = {(t["topology"], t["payload_bytes"], t["qos"]) for t in qos["matrix"]}
    assert cells == {("p2p", size, level) for size in (16, 4096) for level in (0, 1, 2)}, cells
    for t in qos["matrix"]:
        assert t["delivered"] > 0 and t["lost"] == 0 and t["of_qos0"] > 0 and t["rss_mb"] > 0, t
        # The kernel's share bounds the ratio from above: the extension's own code costs something.
        assert 0 < t["system_cpu_seconds"] < t["generator_cpu_seconds"], t
        assert t["of_qos0"] < t["of_qos0_at_most"], t
        # Two rounds: the cell shows the lower of its two runs, and both.
        assert len(t["each_run"]) == 2 and t["delivered_per_cpu_second"] == min(t["each_run"]), t
    assert sorted(t["qos"] for t in qos["latency"]) == [0, 1, 2]
    assert "| p2p | 4,096 B | 2 |" in text and "### Latency at 1,000 msg/s" in text
    if shutil.which("perf"):
        # System calls by kind: they add up to all of them, and every p2p row
        # writes (its publishers' PUBLISHes) and reads (its subscribers'
        # sockets), each call for one socket or, through io_uring, for many.
        assert "### System calls per delivered message, by kind" in text
        for t in qos["matrix"]:
            by = t["syscalls_by_kind"]
            assert by["all"] == t["syscalls_per_delivered"] > 0, t
            assert abs(sum(v for k, v in by.items() if k != "all") - by["all"]) < 0.05, by
            assert all(v >= 0 for v in by.values()), by
            assert by["write"] + by.get("io_uring", 0) > 0 and by["read"] + by.get("io_uring", 0) > 0, by
            # Own code and kernel told apart by perf's samples (cpu.py), not by the scheduler tick.
            assert t["cpu_split_by"].startswith("perf cpu-clock samples"), t


def test_bench_splits_a_run_over_instances_merges_and_reports_it(stack):
    run_id = f"bench-instances-{time.time_ns()}"
    r = bench(stack, "--native", "--instances", "2", "-e", "DURATION=3s", "-e", "SCALE=0.1", "-e", f"RUN_ID={run_id}")
    raw = RESULTS / "raw"
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        assert sorted(p.name for p in raw.glob(f"{run_id}.seg-*")) == [
            f"{run_id}.seg-1-of-2.json",
            f"{run_id}.seg-2-of-2.json",
            f"{run_id}.seg-2-of-2.log",
        ]
        merged = json.loads((raw / f"{run_id}.json").read_text())
        assert merged["passed"] and len(merged["merge"]["instances"]) == 2, merged.get("diagnosis")
        # Each from its own loopback source address.
        addrs = {json.loads(p.read_text())["parameters"]["local_address"] for p in raw.glob(f"{run_id}.seg-*.json")}
        assert addrs == {"127.0.0.2", "127.0.0.3"}
        report = (RESULTS / f"{run_id}/report.md").read_text()
        assert "**Load generators:** 2 k6 instances" in report, report[-2000:]
    finally:
        for p in raw.glob(f"{run_id}*"):
            p.unlink()
        shutil.rmtree(RESULTS / f"{run_id}", ignore_errors=True)


def test_bench_refuses_instances_that_are_not_a_count(stack):
    r = bench(stack, "--native", "--instances", "0")
    assert r.returncode != 0 and "--instances takes a whole number >= 1, got '0'" in r.stderr


@pytest.mark.slow
def test_instances_benchmark_script_runs(tmp_path):
    """The split-run benchmark (connections over 4 processes, merged; RSS per
    connection; merge time), small: it runs, and its figures hang together."""
    page = tmp_path / "benchmarks-instances.md"
    r = subprocess.run(
        [
            "python3",
            "-m",
            "mqttbench",
            "generator-bench",
            "instances",
            "--connections",
            "400",
            "--duration",
            "3s",
            "--docs",
            str(page),
        ],
        env=dict(os.environ, MQTTBENCH_INSTANCES_PORT=str(loopback_port(11899))),
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=600,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    text = page.read_text()
    assert "| connections opened (merged) | 400 of 400 |" in text, text
    assert "| merged verdict | passed (4 instances) |" in text, text
