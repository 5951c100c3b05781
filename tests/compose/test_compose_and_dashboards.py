"""compose.yaml validates for every profile with the real compose
plugin; its structure is checked; every dashboard query runs against the
real InfluxDB of the native stack after a real k6 run, and the run_id
variable, the panels and the annotations against the trials of a capacity
search."""

import json
import math
import re
import socket
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from conftest import ROOT, TEST_PORTS, wait_until
from dashboard_answers import bind, dashboard_queries, load_dashboards
from k6_runs import run_scenario_to_influx
from mqttbench import flux_filters as ff
from mqttbench import settings
from mqttbench.brokers import facts as broker_facts

# Every folder of brokers/ (none is listed here).
BROKERS = broker_facts.names()


def compose(*args):
    return subprocess.run(
        [str(settings.compose_bin()), "--project-directory", str(ROOT), "-f", str(ROOT / "compose.yaml"), *args],
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("profile", BROKERS + ["k6"])
def test_compose_config_is_valid(profile):
    r = compose("--profile", profile, "config", "-q")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("broker", BROKERS)
def test_secrets_are_files_generated_by_init_never_environment(broker):
    services = json.loads(compose("--profile", broker, "config", "--format", "json").stdout)["services"]
    for name, svc in services.items():
        # No service is given a secret's value, nor needs a file made before `up`.
        for key in svc.get("environment") or {}:
            assert not re.search(r"PASSWORD$|TOKEN$|COOKIE$", key), f"{name}: {key} in the environment"
        for f in svc.get("env_file", []) or []:
            assert f["path"].endswith(".env") or f.get("required") is False, f"{name} requires {f['path']}"
        mounts = [v for v in svc.get("volumes", []) if v.get("source") == "secrets"]
        # init writes the secrets, init-tls the TLS files (scripts/init/tls.sh).
        if mounts and name not in ("init", "init-tls"):
            assert all(v.get("read_only") for v in mounts), name
            assert svc["depends_on"]["init"]["condition"] == "service_completed_successfully", name
    # The broker reads its certificates: it starts once they exist.
    assert services[broker]["depends_on"]["init-tls"]["condition"] == "service_completed_successfully"
    assert services["init"]["depends_on"]["influxdb"]["condition"] == "service_healthy"


@pytest.mark.parametrize("broker", BROKERS)
def test_broker_profile_structure(broker):
    r = compose("--profile", broker, "config", "--format", "json")
    assert r.returncode == 0, r.stderr
    services = json.loads(r.stdout)["services"]
    # The observability core runs in every profile, with one Telegraf for the broker.
    assert {"influxdb", "grafana", "node-exporter", broker, f"telegraf-{broker}"} <= set(services)
    others = set(BROKERS) - {broker}
    assert not others & set(services)
    b = services[broker]
    assert b.get("healthcheck", {}).get("test"), "broker without healthcheck"
    assert float(b["cpus"]) > 0 and int(b["mem_limit"]) > 0, "broker without resource limits"
    limits = {s: (float(services[s]["cpus"]), int(services[s]["mem_limit"])) for s in services if s in BROKERS}
    assert limits[broker] == (2.0, 4 * 1024**3)
    tel = services[f"telegraf-{broker}"]
    assert tel["depends_on"][broker]["condition"] == "service_healthy"
    assert tel["depends_on"]["init"]["condition"] == "service_completed_successfully"
    for name, svc in services.items():
        image = svc.get("image", "")
        assert re.search(r":[\w.\-]+$", image) and not image.endswith(":latest"), f"{name}: unpinned image {image}"
        for port in svc.get("ports", []):
            assert port["host_ip"] == "127.0.0.1", f"{name} publishes {port} beyond loopback"
        for vol in svc.get("volumes", []):
            if vol["type"] == "bind" and vol["source"].startswith(str(ROOT)):
                assert Path(vol["source"]).exists(), f"{name} mounts missing {vol['source']}"
        if "healthcheck" not in svc and name not in ("k6", "init"):  # k6 and init run once
            raise AssertionError(f"{name} has no healthcheck")


def test_images_are_pinned_once_in_env():
    text = (ROOT / "compose.yaml").read_text()
    assert not re.search(r"image:\s*[\w./-]+:(?!\$)", text), "an image tag is written in compose.yaml, not .env"
    env = (ROOT / ".env").read_text()
    for key in [
        "INFLUXDB_IMAGE",
        "TELEGRAF_IMAGE",
        "GRAFANA_IMAGE",
        "NODE_EXPORTER_IMAGE",
        "TOXIPROXY_IMAGE",
        # each broker's, as its broker.toml names it
        *(broker_facts.load(n)["image"] for n in BROKERS),
    ]:
        assert re.search(rf"^{key}=\S+:\S+$", env, re.M), key


def test_no_secret_in_repo_files():
    for path in [
        ROOT / "compose.yaml",
        ROOT / ".env",
        *(p for p in ROOT.glob("brokers/*/**/*") if p.is_file()),
        *ROOT.glob("grafana/**/*.yaml"),
    ]:
        text = path.read_text()
        assert "admin/admin" not in text and "=public" not in text.lower().replace(" ", ""), path
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert ".env.local" not in tracked


def test_dashboards_lint():
    subprocess.run(["python3", "-m", "mqttbench.dashboards", "--check"], check=True)
    boards = load_dashboards()
    uids = [d["uid"] for d in boards.values()]
    assert sorted(uids) == [
        "mqtt-bench-broker",
        "mqtt-bench-generator",
        "mqtt-bench-history",
        "mqtt-bench-host",
        "mqtt-bench-overview",
    ]
    for name, d in boards.items():
        assert d["id"] is None, name
        history = name == "history.json"
        want = {"broker", "scenario", "reports"} if history else {"run_id", "broker", "scenario"}
        if name == "benchmark-overview.json":  # its panels by part
            want |= {"flow"}
        assert {v["name"] for v in d["templating"]["list"]} == want
        ds = (ROOT / "grafana/provisioning/datasources/influxdb.yaml").read_text()
        assert "uid: mqtt-bench-influxdb" in ds
        for p in (p for p in d["panels"] if p["type"] != "row"):
            assert p["datasource"] == {"type": "influxdb", "uid": "mqtt-bench-influxdb"}, (name, p["title"])
            for t in p["targets"]:
                assert t["datasource"]["uid"] == "mqtt-bench-influxdb"
                if history:  # a run's summary points, by broker (several) and scenario
                    assert "/^${broker:regex}$/" in t["query"] and "${scenario}" in t["query"], p["title"]
                    continue
                assert "${run_id}" in t["query"] or "${broker}" in t["query"], (name, p["title"])
                # Every run filter takes a run id or a capacity search's id.
                n = t["query"].count("${run_id}")
                assert n == 2 * t["query"].count('(r.run_id == "${run_id}" or r.search == "${run_id}")'), (
                    name,
                    p["title"],
                )


@pytest.fixture(scope="module")
def filled_run(stack, k6_bin, tmp_path_factory):
    """A real scenario run through k6 -> Telegraf -> InfluxDB, with steps."""
    start = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    run_id = f"dash-{int(time.time())}"
    p, _ = run_scenario_to_influx(stack, k6_bin, "p2p", run_id, tmp_path_factory.mktemp("res"), STEPS="100:3s,200:3s")
    assert p.returncode == 0, p.stderr[-3000:]
    time.sleep(8)  # Telegraf flushes every second; host inputs every second
    return start, run_id


def test_every_dashboard_query_runs_and_core_panels_have_data(stack, filled_run):
    start, run_id = filled_run

    def answers():
        empty, errors = [], []
        for board, title, query in dashboard_queries():
            if board == "history.json":  # runs' summary points: test_dashboard_legends' history test
                continue
            try:
                rows = stack.flux(bind(query, start, run_id, "p2p"))
            except Exception as e:  # noqa: BLE001 - report every failing query at once
                errors.append(f"{board} / {title}: {e}")
                continue
            # Only a capacity search has trials: see test_capacity_trials_annotation.
            search_only = title == "annotation Capacity trials"
            # A panel that says what no data means (no reconnects): its noValue.
            if not rows and not search_only and not no_value(board, title):
                empty.append(f"{board} / {title}")
        return empty, errors

    # Until every panel answers: the broker's $SYS series come every few
    # seconds through Telegraf, later on a busy host.
    empty, errors = answers()
    deadline = time.time() + 30
    while empty and not errors and time.time() < deadline:
        time.sleep(2)
        empty, errors = answers()
    assert not errors, "\n".join(errors)
    # Every panel shows the run (Broker internals: Mosquitto's; a drop
    # Mosquitto never published is drawn as 0).
    assert not empty, "panels without data:\n" + "\n".join(empty)


def no_value(board, title):
    """What a panel says where it has no data, or None."""
    ps = [p for p in load_dashboards()[board]["panels"] if p["title"] == title]
    return ps[0]["fieldConfig"]["defaults"].get("noValue") if ps else None


def query(board, where, target=None):
    """The Flux text of a panel (its only or its target-th query), a variable
    ("variable run_id") or an annotation ("annotation Run steps")."""
    found = [q for b, w, q in dashboard_queries() if (b, w) == (board, where)]
    if target is not None:
        return found[target]
    assert len(found) == 1, f"{board} has {len(found)} queries for {where!r}"
    return found[0]


OVERVIEW = "benchmark-overview.json"
# Two trials of one capacity search, as mqttbench/capacity runs them: run ids
# <search>-tNN-r<rate>, every sample tagged search=<search>. Trial 2 ran on
# two k6 instances, each pushing its step start. Counts per trial: lost,
# received (a delivery success of 99.7 % and 98 %, 98.5667 % together).
TRIALS = [
    {"t": "t01", "rate": 1000, "lost": 3, "received": 997, "instances": 1},
    {"t": "t02", "rate": 2000, "lost": 40, "received": 1960, "instances": 2},
]


@pytest.fixture(scope="module")
def search_trials(stack):
    """The k6 samples of two trials of a search (and of a run outside any
    search), in k6's line protocol through Telegraf's k6 listener, the way
    `k6 run --out influxdb=... --tag search=<id>` sends them."""
    search = f"cap-p2p-mosquitto-{int(time.time())}-dash"
    now = time.time_ns() // 10**9 * 10**9
    start = datetime.fromtimestamp(now / 1e9 - 120, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines, trials = [], []
    for i, t in enumerate(TRIALS):
        run_id = f"{search}-{t['t']}-r{t['rate']}"
        t0 = now - (90 - 40 * i) * 10**9  # 90 s and 50 s ago; 6 s each
        tags = f"run_id={run_id},scenario=p2p,search={search}"
        for k in range(t["instances"]):  # each instance pushes its step start, the first at t0
            lines.append(f"{ff.STEP_RATE},{tags},instance={k} value={t['rate']} {t0 + k * 10**8}")
        lines.append(f"{ff.STEP_RATE},{tags} value=0 {t0 + 6 * 10**9}")
        for s in range(1, 6):  # per-second deltas of the counters
            lines.append(f"{ff.PUBLISHES},{tags},role=publisher value={t['rate']} {t0 + s * 10**9}")
        lines.append(f"{ff.RECEIVES},{tags},role=subscriber value={t['received']} {t0 + 5 * 10**9}")
        lines.append(f"{ff.LOST},{tags},role=subscriber value={t['lost']} {t0 + 5 * 10**9}")
        trials.append({**t, "run_id": run_id, "t0": t0, "t_end": t0 + 6 * 10**9})
    single = f"single-{int(time.time())}"
    lines.append(f"{ff.STEP_RATE},run_id={single},scenario=p2p value=300 {now - 30 * 10**9}")
    lines.append(f"{ff.PUBLISHES},run_id={single},scenario=p2p,role=publisher value=300 {now - 29 * 10**9}")
    lines.append(f"{ff.LOST},run_id={single},scenario=p2p,role=subscriber value=5 {now - 29 * 10**9}")
    r = requests.post(
        f"http://127.0.0.1:{TEST_PORTS['TELEGRAF_K6_PORT']}/write",
        params={"db": "k6"},
        data="\n".join(lines),
        timeout=10,
    )
    r.raise_for_status()
    seen = (
        f'from(bucket: "mqtt-bench") |> range(start: {start})'
        f' |> filter(fn: (r) => r._measurement == "{ff.PUBLISHES}" and r.search == "{search}") |> group() |> count()'
    )
    total = 5 * len(TRIALS)
    assert wait_until(lambda: [r["_value"] for r in stack.flux(seen)] == [str(total)], timeout=30), (
        "no trials in InfluxDB"
    )
    return start, search, trials, single


def rows_of(stack, q, start, run_id):
    rows = stack.flux(bind(q, start, run_id, "p2p"))
    assert all(r.get("result") != "result" for r in rows), "more than one table"
    return rows


def test_run_id_variable_lists_search_and_its_trials(stack, search_trials):
    start, search, trials, single = search_trials
    values = [r["_value"] for r in rows_of(stack, query(OVERVIEW, "variable run_id"), start, search)]
    assert search in values and single in values
    assert all(t["run_id"] in values for t in trials)
    # One table of distinct values, newest (highest) first.
    assert len(values) == len(set(values)) and values == sorted(values, reverse=True)
    for board, where, q in dashboard_queries():
        if where == "variable run_id":
            assert q == query(OVERVIEW, "variable run_id"), board


def test_panels_show_every_trial_of_a_search_or_one_trial(stack, search_trials):
    start, search, trials, single = search_trials

    def stat(title, run_id):
        rows = rows_of(stack, query(OVERVIEW, title), start, run_id)
        assert len(rows) == 1, (title, run_id, rows)
        # A stat's one column, named (grafana_dashboards.stat_named).
        values = [v for k, v in rows[0].items() if k not in ("", "result", "table")]
        assert len(values) == 1, rows
        return float(values[0])

    # Counts add up over the trials of a search; one trial's id, that trial.
    assert stat("Lost messages", search) == sum(t["lost"] for t in TRIALS)
    for t in trials:
        assert stat("Lost messages", t["run_id"]) == t["lost"]
    assert stat("Lost messages", single) == 5
    assert stat("Delivery success (%)", trials[0]["run_id"]) == pytest.approx(99.7)
    # Rounded down to 0.01 %, as the stat shows it.
    assert stat("Delivery success (%)", search) == pytest.approx(math.floor(10000.0 * 2957 / 3000) / 100)

    def span(run_id):
        """Which trials' time spans the TPS-in series of run_id falls in."""
        rows = rows_of(stack, query(OVERVIEW, "TPS in and out (msg/s)", 0), start, run_id)
        assert rows and all(float(r["_value"]) > 0 for r in rows), (run_id, rows)
        times = [datetime.fromisoformat(r["_time"].replace("Z", "+00:00")).timestamp() * 1e9 for r in rows]
        return {t["t"] for t in trials for x in times if t["t0"] <= x <= t["t_end"] + 2e9}

    assert span(search) == {"t01", "t02"}
    assert span(trials[0]["run_id"]) == {"t01"}
    assert span(trials[1]["run_id"]) == {"t02"}


def test_capacity_trials_annotation(stack, search_trials):
    start, search, trials, single = search_trials
    for board, d in load_dashboards().items():
        if not d["annotations"]["list"]:  # History: runs, not their steps
            continue
        rows = rows_of(stack, query(board, "annotation Capacity trials"), start, search)
        # One event per trial, at its first step start, naming the trial and its rate.
        assert [set(r) - {"", "result", "table"} for r in rows] == [{"_time", "text", "tags"}] * len(trials), rows
        assert [r["text"] for r in rows] == [f"trial {t['run_id']}: {t['rate']} msg/s" for t in trials]
        assert [r["tags"] for r in rows] == [t["run_id"] for t in trials]
        got = [datetime.fromisoformat(r["_time"].replace("Z", "+00:00")).timestamp() for r in rows]
        assert got == pytest.approx([t["t0"] / 1e9 for t in trials], abs=1e-3)
        # A run or a single trial chosen: no trial annotations, its steps instead.
        assert rows_of(stack, query(board, "annotation Capacity trials"), start, trials[0]["run_id"]) == []
        assert rows_of(stack, query(board, "annotation Capacity trials"), start, single) == []
        steps = rows_of(stack, query(board, "annotation Run steps"), start, trials[0]["run_id"])
        assert [r["text"] for r in steps] == ["step: 1000 msg/s", "end of the last step"]
        assert [r["text"] for r in rows_of(stack, query(board, "annotation Run steps"), start, single)] == [
            "step: 300 msg/s"
        ]
        assert rows_of(stack, query(board, "annotation Run steps"), start, search) == []


def test_nanomq_healthcheck_passes_on_a_live_broker_only(stack):
    # NanoMQ cannot run here; its healthcheck speaks plain MQTT (CONNECT,
    # CONNACK), so it is run as compose writes it against the real Mosquitto
    # of the native stack, and against a closed and a silent port.
    services = json.loads(compose("--profile", "nanomq", "config", "--format", "json").stdout)["services"]
    test = services["nanomq"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "bash", "-c"]
    script = test[3].replace("$$", "$")
    port = stack.mqtt_url.rsplit(":", 1)[1]

    def check(p):
        return subprocess.run(
            ["bash", "-c", script.replace("/dev/tcp/127.0.0.1/1883", f"/dev/tcp/127.0.0.1/{p}")], timeout=10
        )

    assert check(port).returncode == 0
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        free = closed.getsockname()[1]
    assert check(free).returncode != 0
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        assert check(silent.getsockname()[1]).returncode != 0
