"""scripts/compare.sh: the same scenario on several brokers, one report with a
column per broker. Two native Mosquitto processes with different config files
stand in for two brokers; a broker that does not start and a target that
cannot be reached are marked in the report, and the others still run."""

import json
import os
import subprocess
import time

import pytest

from compare_runs import REPORTS, cleanup, compare, table
from conftest import ROOT, lib_value, loopback_port, wait_until
from loopback_brokers import listening


@pytest.fixture
def two_mosquittos(tmp_path):
    """Two Mosquitto processes on loopback, one near its defaults, one with
    a short queue and Nagle off: two configurations standing in for two brokers."""
    configs = {
        "plain": [],
        "tuned": ["max_queued_messages 100", "set_tcp_nodelay true", "max_inflight_messages 1000"],
    }
    ports = {"plain": loopback_port(11931), "tuned": loopback_port(11932)}
    procs = []
    for name, lines in configs.items():
        assert not listening(ports[name]), f"port {ports[name]} is taken"
        conf = tmp_path / f"{name}.conf"
        conf.write_text(
            "\n".join([f"listener {ports[name]} 127.0.0.1", "allow_anonymous true", "persistence false", *lines]) + "\n"
        )
        procs.append(
            subprocess.Popen(
                ["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=(tmp_path / f"{name}.log").open("w")
            )
        )
    try:
        for port in ports.values():
            assert wait_until(lambda p=port: listening(p), timeout=10), f"mosquitto on {port} did not start"
        yield {name: f"mqtt://127.0.0.1:{port}" for name, port in ports.items()}
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


def test_compare_two_mosquitto_configs_marks_the_brokers_that_cannot_run(stack, two_mosquittos):
    compare_id = f"cmp-test-{time.time_ns()}"
    closed = loopback_port(11933)
    assert not listening(closed)
    r = compare(
        "--native",
        "--broker",
        "nanomq",  # no native build: marked, not fatal
        "--target",
        f"plain={two_mosquittos['plain']}",
        "--target",
        f"tuned={two_mosquittos['tuned']}",
        "--target",
        f"closed=mqtt://127.0.0.1:{closed}",  # nothing listens: marked, not fatal
        "--scenario",
        "p2p",
        "--id",
        compare_id,
        "-e",
        "DURATION=3s",
        "-e",
        "SCALE=0.1",
        env=stack.env,
    )
    out = REPORTS / f"compare-{compare_id}"
    try:
        # Some broker was marked: exit 1, after the report was written.
        assert r.returncode == 1, (r.stdout + r.stderr)[-4000:]
        md = (out / "compare.md").read_text()
        results = json.loads((out / "results.json").read_text())
        by_name = {b["name"]: b for b in results["brokers"]}
        assert [b["name"] for b in results["brokers"]] == ["nanomq", "plain", "tuned", "closed"]
        assert by_name["plain"]["status"] == by_name["tuned"]["status"] == "ran"
        assert by_name["nanomq"]["status"] == by_name["closed"]["status"] == "not run"
        assert "no native build" in by_name["nanomq"]["reason"]
        assert "unreachable" in by_name["closed"]["reason"] and str(closed) in by_name["closed"]["reason"]

        # One table per metric, a column per broker, the marked ones with their reason in the header.
        rates = table(md, "Actual message rate (msg/s)")
        header = rates[0]  # the brokers in the order they ran
        assert header[0] == "" and header[2:4] == ["plain", "tuned"], header
        assert header[1].startswith("nanomq — not run: ") and "no native build" in header[1], header
        assert header[4].startswith("closed — not run: unreachable"), header
        for row in rates[1:]:
            assert row[1] == row[4] == "not run", row
        ran = slice(2, 4)  # plain, tuned (after the label)
        delivery = {row[0]: row[ran] for row in table(md, "Delivery")[1:]}
        assert delivery["delivery success %"] == ["100.000", "100.000"], delivery
        assert delivery["lost"] == ["0", "0"]
        latency = {row[0]: row[ran] for row in table(md, "Latency (ms)")[1:]}
        assert {"avg", "p50", "p75", "p90", "p95", "p99"} <= latency.keys()
        assert all(float(v) > 0 for v in latency["p99"]), latency
        # Host CPU: this host's Telegraf measured it (the targets are on loopback);
        # the targets' own processes are not this stack's: n/a, named.
        cpu = {row[0]: row[ran] for row in table(md, "CPU (%)")[1:]}
        assert all(float(v) >= 0 for v in cpu["host avg (1 - idle)"]), cpu
        assert cpu["broker process avg"] == ["n/a", "n/a"], cpu
        assert "Connections" in md and "Memory" in md

        # Same scenario and parameters on each, with its own run id and report.
        for name in ("plain", "tuned"):
            run_id = f"{compare_id}-{name}"
            result = json.loads((REPORTS / f"raw/{run_id}.json").read_text())
            assert result["broker"] == name and result["parameters"]["url"] == two_mosquittos[name]
            assert result["parameters"]["duration"] == "3s"
            assert (REPORTS / run_id / "report.md").exists()
            assert f"../{run_id}/report.md" in md
            # The version, read from the target's $SYS topics.
            assert by_name[name]["version"].startswith("mosquitto version"), by_name[name]
        # Charts, side by side.
        for png in results["charts"].values():
            assert (out / png).stat().st_size > 1000
        assert "![" in md

        # The disclosure, per broker.
        disclosure = md.split("## Disclosure", 1)[1]
        assert "not managed" in disclosure and two_mosquittos["tuned"] in disclosure
        assert "no native build" in disclosure and "unreachable" in disclosure
        assert "**Thresholds:** passed" in disclosure
    finally:
        cleanup(compare_id)


@pytest.mark.parametrize(
    "args, words",
    [
        ([], ["--broker", "--target"]),
        (
            ["--broker", "mosquitto,no-such-broker"],
            ["--broker", "unknown broker 'no-such-broker'", "--target no-such-broker="],
        ),
        (["--target", "emqx"], ["--target", "NAME=URL"]),
        (["--target", "emqx=http://10.0.0.5:1883"], ["--target", "mqtt://"]),
        (["--target", "a=mqtt://127.0.0.1:1", "--target", "a=mqtt://127.0.0.1:2"], ["'a'", "twice"]),
        (["--target", "a=mqtt://127.0.0.1:1", "-e", "RUN_ID=x"], ["-e RUN_ID", "per broker"]),
        (["--target", "a=mqtt://127.0.0.1:1", "--scenario", "nope"], ["--scenario", "unknown scenario 'nope'"]),
        (["--target", "a=mqtt://127.0.0.1:1", "--qos", "1"], ["--qos", "-e NAME=VALUE"]),
    ],
)
def test_compare_rejects_bad_input_before_anything_starts(args, words):
    r = compare(*args, "--id", "cmp-bad-input")
    try:
        assert r.returncode == 2, (r.stdout + r.stderr)[-2000:]
        for w in words:
            assert w in r.stderr, r.stderr
        assert not (REPORTS / "compare-cmp-bad-input").exists()
    finally:
        cleanup("cmp-bad-input")


def write_capacity(search_id, broker, recommended, limit, limit_text):
    d = REPORTS / f"capacity-{search_id}"
    d.mkdir(parents=True, exist_ok=True)
    trials = [
        {
            "run_id": f"{search_id}-r{rate}",
            "rate": rate,
            "achieved_rate": rate * 0.99,
            "good": rate <= 2000,
            "reasons": [] if rate <= 2000 else ["p99 60 ms > 50 ms"],
            "broker_cpu_pct": rate / 40,
            "host_cpu_pct": rate / 30,
            "mem_pct": 20.0,
            "latency_p50": 1.0,
            "latency_p99": 5.0 if rate <= 2000 else 60.0,
            "lost": 0,
            "generator_cpu_pct": 40.0,
        }
        for rate in (1000, 2000, 4000)
    ]
    (d / "capacity.json").write_text(
        json.dumps(
            {
                "search_id": search_id,
                "broker": broker,
                "scenario": "p2p",
                "qos": 1,
                "cpu_target": 75,
                "cpu_basis": "broker CPU as % of BROKER_CPUS=2",
                "p99_ms": 50,
                "wall_s": 321.0,
                "recommended": recommended,
                "limit": limit,
                "limit_text": limit_text,
                "trials": trials,
            }
        )
    )


def test_search_comparison_tabulates_capacity_files(tmp_path):
    """The --search report from capacity.sh's files (its contract): the
    recommended rate per broker, and the reason where a search found none."""
    compare_id = f"cmp-search-{time.time_ns()}"
    out = REPORTS / f"compare-{compare_id}"
    out.mkdir(parents=True)
    rec = {
        "rate": 2000,
        "run_id": f"{compare_id}-a-r2000",
        "tps": 4000,
        "broker_cpu_pct": 50.0,
        "host_cpu_pct": 66.7,
        "mem_pct": 20.0,
        "broker_rss_mb": 12.5,
        "latency_p50": 1.0,
        "latency_p99": 5.0,
        "success_pct": 100.0,
    }
    write_capacity(f"{compare_id}-a", "a", rec, "broker_latency", "The broker was slow to deliver: p99 62 ms")
    write_capacity(f"{compare_id}-b", "b", None, "generator", "the generator could not send 1000 msg/s")
    entry = {"kind": "target", "mode": "target", "influx": False, "host_tag": None, "version": None}
    manifest = {
        "compare_id": compare_id,
        "scenario": "p2p",
        "search": True,
        "mode": "target",
        "cpu_target": 75,
        "env": ["QOS=1"],
        "started_at": "2026-01-01T00:00:00Z",
        "limits": None,
        "brokers": [
            {**entry, "name": "a", "url": "mqtt://h:1", "search_id": f"{compare_id}-a", "status": "ran"},
            {
                **entry,
                "name": "b",
                "url": "mqtt://h:2",
                "search_id": f"{compare_id}-b",
                "status": "no result",
                "short": "generator-limited",
                "reason": "the generator could not send 1000 msg/s",
            },
        ],
    }
    (out / "manifest.json").write_text(json.dumps(manifest))
    py = lib_value('echo "$CACHE/venv/current/bin/python"')
    try:
        r = subprocess.run(
            [py, "-m", "mqttbench.report.comparison.write", str(out / "manifest.json")],
            cwd=ROOT,
            text=True,
            capture_output=True,
        )
        assert r.returncode == 0, r.stderr
        md = (out / "compare.md").read_text()
        rec_rows = dict((row[0], row[1:]) for row in table(md, "Recommended workload")[1:])
        header = table(md, "Recommended workload")[0]
        assert header[1] == "a" and header[2].startswith("b — no result: generator-limited"), header
        assert rec_rows["rate (msg/s)"] == ["2,000", "no result"], rec_rows
        # The search that found no rate still shows why it stopped.
        search = dict((row[0], row[1:]) for row in table(md, "Search")[1:])
        assert search["limit"][1] == "the generator could not send 1000 msg/s", search
        assert "The broker was slow to deliver: p99 62 ms" in md and "broker CPU as % of BROKER_CPUS=2" in md
        assert f"../capacity-{compare_id}-a/" in md
        assert (out / "search.png").exists()
    finally:
        cleanup(compare_id)


@pytest.mark.skipif(not (ROOT / "scripts/capacity.sh").exists(), reason="scripts/capacity.sh is not written yet")
def test_compare_search_runs_capacity_per_broker(stack):
    """--search: scripts/capacity.sh on the native stack's Mosquitto (short
    trials, a low ceiling), and a target that cannot be reached, marked."""
    compare_id = f"cmp-search-run-{time.time_ns()}"
    r = compare(
        "--search",
        "--native",
        "--broker",
        "mosquitto",
        "--target",
        f"closed=mqtt://127.0.0.1:{loopback_port(11933)}",
        "--scenario",
        "p2p",
        "--id",
        compare_id,
        *("--trial", "3s", "--start-rate", "200", "--max-rate", "400", "--budget", "2m", "--p99-ms", "1000"),
        *("--cpu-target", "90", "-e", "SCALE=0.1"),
        env=stack.env,
        timeout=900,
    )
    try:
        assert r.returncode == 1, (r.stdout + r.stderr)[-4000:]
        out = REPORTS / f"compare-{compare_id}"
        results = json.loads((out / "results.json").read_text())
        by_name = {b["name"]: b for b in results["brokers"]}
        assert "unreachable" in by_name["closed"]["reason"]
        cap = json.loads((REPORTS / f"capacity-{compare_id}-mosquitto/capacity.json").read_text())
        assert by_name["mosquitto"]["status"] == "ran", (by_name["mosquitto"], cap["limit_text"])
        md = (out / "compare.md").read_text()
        rec = {row[0]: row[1:] for row in table(md, "Recommended workload")[1:]}
        assert rec["rate (msg/s)"] == [f"{cap['recommended']['rate']:,.0f}", "not run"], rec
        assert f"../capacity-{compare_id}-mosquitto/capacity.md" in md
        assert "brokers/mosquitto/broker.toml" in md  # the managed broker's disclosure
    finally:
        cleanup(compare_id)


def test_under_compose_each_profile_is_started_then_stopped_and_one_that_fails_is_marked(tmp_path):
    """Compose mode, with a stand-in `docker` whose profiles never become
    healthy: each broker is marked with compose's reason, its own services
    are stopped before the next, and the core is never taken down."""
    calls = tmp_path / "calls"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "docker").write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {calls}\n'
        'case "$*" in\n'
        '  *" up "*) echo "dependency failed to start: container mqtt-bench-$5-1 is unhealthy" >&2; exit 1 ;;\n'
        "esac\n"
        "exit 0\n"
    )
    (bindir / "docker").chmod(0o755)
    # A cache without our compose build, so that lib.sh's compose runs `docker compose`.
    cache = tmp_path / "cache"
    (cache / "venv").mkdir(parents=True)
    (cache / "venv/current").symlink_to(lib_value('readlink -f "$CACHE/venv/current"'))
    compare_id = f"cmp-compose-{time.time_ns()}"
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", MQTTBENCH_CACHE=str(cache))
    r = compare("--broker", "emqx,vernemq", "--id", compare_id, "-e", "DURATION=3s", env=env)
    try:
        assert r.returncode == 1, (r.stdout + r.stderr)[-3000:]
        assert "under compose" in r.stderr
        log = calls.read_text().splitlines()
        ups = [c for c in log if " up " in c]
        stops = [c for c in log if " stop " in c]
        assert [c.split("--profile ")[1].split()[0] for c in ups] == ["emqx", "vernemq"], log
        assert [c.split(" stop ")[1] for c in stops] == ["emqx telegraf-emqx", "vernemq telegraf-vernemq"], log
        assert not [c for c in log if " down" in c], log
        results = json.loads((REPORTS / f"compare-{compare_id}/results.json").read_text())
        for b in results["brokers"]:
            assert b["status"] == "not run" and b["short"] == "did not start under compose", b
            assert f"container mqtt-bench-{b['name']}-1 is unhealthy" in b["reason"], b
        md = (REPORTS / f"compare-{compare_id}/compare.md").read_text()
        assert "BROKER_CPUS=" in md and "BROKER_MEMORY=" in md
    finally:
        cleanup(compare_id)
