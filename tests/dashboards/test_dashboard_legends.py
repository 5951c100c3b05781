"""The dashboards as a person sees them, checked without looking: every
panel's query run against the real InfluxDB after a real k6 run, its answer
turned into what Grafana 12 draws (tests/grafana_frames.py: its frames and
the legend's names), and the panels' own settings (stat text and colours,
line shapes, axes, the broker row)."""

import os
import re
import subprocess
import time
from datetime import UTC, datetime, timedelta

import pytest
import requests

import grafana_frames as gf
from conftest import ROOT
from dashboard_answers import answer, bind, broker_panel_queries, load_dashboards, panels, series
from k6_runs import run_scenario_to_influx
from mqttbench.brokers import facts as broker_facts
from mqttbench.dashboards import broker_queries
from mqttbench.dashboards import flux as grafana_flux

# The brokers whose internals come from Prometheus (Mosquitto's from $SYS):
# every folder of brokers/ that says so, none listed here.
PROMETHEUS_BROKERS = [
    n for n in broker_facts.names() if broker_facts.load(n)["metrics"]["input"] == "inputs.prometheus"
]
# Series that hold a level, not a count: written at 7 rather than rising.
GAUGES = ("connected", "stored messages")
# What each panel's legend is meant to show, natively with Mosquitto after
# a p2p run (the network panels show whichever interfaces carried bytes).
LEGENDS = {
    "TPS in and out (msg/s)": {"published", "received"},
    "Messages by part (msg/s)": {"p2p published", "p2p received"},
    "Pub-to-sub latency p50 / p99 (ms)": {"p50", "p99"},
    "Pub-to-sub latency by part p50 / p99 (ms)": {"p2p p50", "p2p p99"},
    "Connections (generator)": {"publishers", "subscribers"},
    "Host CPU and broker CPU (%)": {"host CPU, % of all cores", "broker CPU, % of one core"},
    "Host memory used (%)": {"host memory used"},
    "Broker memory": {"broker RSS", "broker heap"},
    "Messages received / sent (msg/s)": {
        "received",
        "sent",
        "packets received (every type)",
        "packets sent (every type)",
    },
    "Connected clients and stored messages": {"connected", "stored messages"},
    "Messages dropped (msg/s)": {"dropped"},
    "CPU by mode (% of one core)": {"idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user"},
    "Memory available / total": {"available", "total"},
    "Load": {"1 min", "5 min"},
    "TCP sockets in use / established": {"in use", "established"},
    "File descriptors allocated": {"allocated"},
    # Benchmark overview's disk panels (Host's are per device: below).
    "Disk read / written, host and broker (bytes/s)": {"host read", "host written", "broker read", "broker written"},
    "Host disk IOPS": {"reads", "writes"},
    "Achieved vs target rate (msg/s)": {"achieved", "target"},
    "Send lag p50 / p99 (ms): intended -> actual send": {"p50", "p99"},
    "Latency from intended send p99 (ms)": {"p99"},
    # No reconnect in the run: no series, the panel says so (its noValue).
    "Reconnect delay p50 / p99 / max (ms): drop -> back": set(),
    "Step rate (msg/s)": {"step rate"},
    "Delivery success (%)": {"delivered"},
    "Lost messages": {"lost messages"},
    "Connect failures": {"connect failures"},
    "Publish failures": {"publish failures"},
    "Worst achieved / target ratio": {"worst ratio"},
    "Reconnects": {"reconnects"},
    "Errors": {"errors"},
}
# Stat colours: (colour of the best value, a value just worse, its colour).
RATE_REACHED = float(
    re.search(r"^const RateReached = ([\d.]+)$", (ROOT / "k6/extension/verdict/policy.go").read_text(), re.M)[1]
)
STATS = {
    "Delivery success (%)": [(100, "green"), (99.99, "red"), (0, "red")],
    "Worst achieved / target ratio": [(1.0, "green"), (RATE_REACHED, "green"), (RATE_REACHED - 0.0001, "red")],
    **{t: [(0, "green"), (1, "red"), (1000, "red")] for t in ("Lost messages", "Connect failures")},
    **{t: [(0, "green"), (1, "red")] for t in ("Publish failures", "Reconnects", "Errors")},
}


def colour(thresholds, value):
    """The colour Grafana gives a value: the last step at or below it."""
    steps = thresholds["steps"]
    assert steps[0]["value"] is None and thresholds["mode"] == "absolute"
    return [s["color"] for s in steps if s["value"] is None or value >= s["value"]][-1]


def test_stats_show_only_the_value_in_colours_that_mean_what_they_say():
    stats = dict((p["title"], p) for _, p in panels("stat"))
    assert set(stats) == set(STATS)
    for title, p in stats.items():
        # No name beside the number: no `_value` title, no group-key line.
        assert p["options"]["textMode"] == "value", title
        assert p["options"]["colorMode"] == "value", title
        d = p["fieldConfig"]["defaults"]
        assert d["color"] == {"mode": "thresholds"}, title
        got = [(v, colour(d["thresholds"], v)) for v, _ in STATS[title]]
        assert got == STATS[title], title
    # 99.995 % never reads 100 % in green: the query rounds down, to the
    # two decimals the stat shows.
    assert stats["Delivery success (%)"]["fieldConfig"]["defaults"]["decimals"] == 2
    assert "math.floor(x: 10000.0 *" in stats["Delivery success (%)"]["targets"][0]["query"]
    assert stats["Worst achieved / target ratio"]["fieldConfig"]["defaults"]["decimals"] == 2
    assert (
        "math.floor(x: 10000.0 * r._value) / 10000.0" in stats["Worst achieved / target ratio"]["targets"][0]["query"]
    )


def test_rate_ratio_turns_red_where_the_verdict_fails_a_step():
    assert grafana_flux.RATE_REACHED == RATE_REACHED


def shape(p, series):
    d = p["fieldConfig"]
    by_name = [
        prop["value"]
        for o in d["overrides"]
        if o["matcher"] == {"id": "byName", "options": series}
        for prop in o["properties"]
        if prop["id"] == "custom.lineInterpolation"
    ]
    return by_name[-1] if by_name else d["defaults"].get("custom", {}).get("lineInterpolation", "linear")


def test_steps_and_values_published_on_change_are_drawn_as_steps():
    ts = {p["title"]: p for _, p in panels("timeseries")}
    # A step's rate holds from its start to the next step's.
    assert shape(ts["Step rate (msg/s)"], "step rate") == "stepAfter"
    assert shape(ts["Achieved vs target rate (msg/s)"], "target") == "stepAfter"
    assert shape(ts["Achieved vs target rate (msg/s)"], "achieved") == "linear"
    # A $SYS value holds until the next; a rate since the last report covers the span before it.
    assert shape(ts["Connected clients and stored messages"], "connected") == "stepAfter"
    assert shape(ts["Broker memory"], "broker heap") == "stepAfter"
    assert shape(ts["Messages received / sent (msg/s)"], "received") == "stepBefore"
    assert shape(ts["Messages dropped (msg/s)"], "dropped") == "stepBefore"
    for title in ("Messages dropped (msg/s)", "Messages received / sent (msg/s)"):
        # Where absence means 0, the panel says so.
        assert "shows 0" in ts[title]["description"] and "sys_interval" in ts[title]["description"], title


def test_every_axis_starts_at_zero():
    # Rates, counts, bytes and durations: an axis from 0 never zooms into a
    # flat line's noise and prints 4.00 K, 4 K, 4.00 K.
    for board, p in panels("timeseries"):
        assert p["fieldConfig"]["defaults"].get("min") == 0, (board, p["title"])


def test_broker_internals_is_one_row_repeated_by_the_broker_variable():
    ps = load_dashboards()["broker-internals.json"]["panels"]
    rows = [p for p in ps if p["type"] == "row"]
    assert [(r["title"], r["repeat"], r["collapsed"]) for r in rows] == [("$broker", "broker", False)]
    assert ps[0] is rows[0] and all(p["gridPos"]["y"] > rows[0]["gridPos"]["y"] for p in ps[1:])
    names = ("Mosquitto", "EMQX", "NanoMQ", "VerneMQ")
    for p in ps[1:]:
        # Nothing in it is another broker's: its series are the chosen one's.
        assert not any(n in p["title"] for n in names), p["title"]
        for t in p["targets"]:
            assert t["query"].count('r.broker == "${broker}"') >= 1, p["title"]
    # The contract with the broker-capture tests: every panel of the row.
    assert [t for t, _ in broker_panel_queries("emqx")] == [p["title"] for p in ps[1:] for _ in p["targets"]]


# ---- against InfluxDB --------------------------------------------------------


def test_every_legend_names_its_series_and_nothing_else(stack, p2p_run):
    start, run_id = p2p_run
    wrong = []
    for board, p in panels():
        if p["type"] == "row" or board == "history.json":  # History: test_history_*
            continue
        texts = [answer(stack, t["query"], start, run_id) for t in p["targets"]]
        frames = [fr for text in texts for fr in gf.frames(text)]
        names = gf.legend(texts)
        if not names and not p["fieldConfig"]["defaults"].get("noValue"):
            wrong.append(f"{board} / {p['title']}: no data")
        for fr, f in gf.value_fields(frames):
            # No label to print beside a name, no frame name before it.
            if f.labels or fr.name:
                wrong.append(f"{board} / {p['title']}: {gf.display_name(fr, f, frames)!r}")
        expected = LEGENDS.get(p["title"])
        if p["title"].startswith("Network "):
            direction = p["title"].split()[1]
            expected = {n for n in names if re.fullmatch(rf"[\w.-]+ {direction}", n)}
        if board == "host.json" and p["title"].startswith("Disk "):  # every device that had I/O
            words = "read|written" if "bytes" in p["title"] else "reads|writes"
            expected = {n for n in names if re.fullmatch(rf"[\w/.-]+ ({words})", n)}
        if set(names) != expected or len(names) != len(set(names)):
            wrong.append(f"{board} / {p['title']}: legend {names}, meant {sorted(expected or [])}")
        if p["type"] == "stat" and len(names) != 1:
            wrong.append(f"{board} / {p['title']}: {len(names)} values")
    assert not wrong, "\n".join(wrong)


def test_sys_values_hold_until_the_next_and_zero_shows_where_nothing_was_dropped(stack, p2p_run):
    start, run_id = p2p_run
    now = datetime.now(UTC)
    held = series(stack, "Connected clients and stored messages", start, run_id)
    # Mosquitto said the count when it changed, at the end of the run at the
    # latest; the line goes on to now, one point per 2 s window.
    for name in ("connected", "stored messages"):
        points = held[name]
        assert now - points[-1][0] < timedelta(seconds=5), (name, points[-3:])
        gaps = [b[0] - a[0] for a, b in zip(points, points[1:], strict=False)]
        assert max(gaps) <= timedelta(seconds=2), (name, max(gaps))
    # p2p: 10 publishers and 10 subscribers at least, at some point
    # (Telegraf's $SYS client left out: tests/dashboards/test_dashboard_reading.py).
    assert max(v for _, v in held["connected"]) >= 20
    dropped = series(stack, "Messages dropped (msg/s)", start, run_id)["dropped"]
    # Nothing dropped: Mosquitto never published the topic, and 0 is drawn
    # through the run and after.
    assert dropped and all(v == 0 for _, v in dropped)
    assert now - dropped[-1][0] < timedelta(seconds=3 * grafana_flux.SYS_INTERVAL_S)
    rates = series(stack, "Messages received / sent (msg/s)", start, run_id)
    assert max(v for _, v in rates["received"]) > 50
    # After the run, the counter stopped changing: 0, not the last rate held.
    assert rates["received"][-1][1] == 0


def test_network_panels_show_loopback_received_and_sent_apart(stack, p2p_run):
    start, run_id = p2p_run
    received = series(stack, "Network received (bytes/s)", start, run_id)
    sent = series(stack, "Network sent (bytes/s)", start, run_id)
    # Broker and generator share this host: the benchmark is on lo.
    assert max(v for _, v in received["lo received"]) > 10_000
    assert max(v for _, v in sent["lo sent"]) > 10_000
    assert all(n.endswith(" received") for n in received) and all(n.endswith(" sent") for n in sent)


@pytest.fixture(scope="module")
def other_brokers(stack):
    """Prometheus points of EMQX, NanoMQ and VerneMQ as Telegraf writes
    them (measurement prometheus, a field per series, tags broker and
    source; VerneMQ's counters once per MQTT version), every second for 4 s:
    counters up by 100 a second, gauges at 7. An hour ago: outside the time
    range of every other test of this stack (tests/brokers/test_broker_captures.py
    counts these brokers' series)."""
    now = time.time_ns() // 10**9 * 10**9 - 3600 * 10**9
    start, stop = (datetime.fromtimestamp(now / 1e9 + s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") for s in (-60, 60))
    lines = []
    for broker in PROMETHEUS_BROKERS:
        for name, per_broker in broker_queries.BROKER_SERIES.items():
            if broker not in per_broker:
                continue
            kind, field = per_broker[broker]
            versions = ["4", "5"] if broker == "vernemq" and name != "connected" else [None]
            for version in versions:
                tags = f"broker={broker},source={broker},host=test" + (f",mqtt_version={version}" if version else "")
                for s in range(5):
                    value = 7 if name in GAUGES else 100 * s
                    lines.append(f"prometheus,{tags} {field}={value} {now - (10 - s) * 10**9}")
    r = requests.post(
        f"{stack.influx}/api/v2/write",
        params={"org": "mqtt-bench", "bucket": "mqtt-bench", "precision": "ns"},
        headers={"Authorization": f"Token {stack.token}"},
        data="\n".join(lines),
        timeout=10,
    )
    r.raise_for_status()
    return start, stop


@pytest.mark.parametrize("broker", PROMETHEUS_BROKERS)
def test_the_broker_row_shows_each_brokers_own_series_under_the_same_names(stack, other_brokers, broker):
    start, stop = other_brokers
    got = {}
    for title, query in broker_panel_queries(broker):
        text = answer(stack, query, start, "no-run", broker, stop)
        assert gf.frames(text), (broker, title, "no data")
        for fr, f in gf.value_fields(gf.frames(text)):
            assert not f.labels and not fr.name, (broker, title, f.labels, fr.name)
            got[f.name] = [float(v) for v in f.values if v]
    assert set(got) == set(broker_facts.load(broker)["metrics"]["series"]), got
    # 100 a second each, VerneMQ's two versions added up.
    rate = 200 if broker == "vernemq" else 100
    assert {round(v) for v in got["received"]} == {rate}, got["received"]
    assert {round(v) for v in got["connected"]} == {7}, got["connected"]


@pytest.fixture(scope="module")
def history_runs(stack, k6_bin, tmp_path_factory):
    """Two runs of the stack's Mosquitto as two versions (BROKER_VERSION), each reported
    (scripts/report.sh writes its summary point): (start, versions, run ids)."""
    start = (datetime.now(UTC) - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    res, out = tmp_path_factory.mktemp("res"), tmp_path_factory.mktemp("out")
    tag = int(time.time())
    versions = [f"hist-{tag}-1.0", f"hist-{tag}-1.1"]
    run_ids = [f"history-{tag}-{i}" for i in range(2)]
    for run_id, version in zip(run_ids, versions, strict=True):
        p, _ = run_scenario_to_influx(
            stack, k6_bin, "p2p", run_id, res, BROKER_VERSION=version, SCALE="0.1", DURATION="2s"
        )
        assert p.returncode == 0, p.stderr[-3000:]
    time.sleep(3)  # Telegraf's last flush: the report's broker CPU and RSS
    for run_id in run_ids:
        r = subprocess.run(
            [str(ROOT / "scripts/report.sh"), run_id, "--results", str(res), "--out", str(out)],
            env=stack.env, text=True, capture_output=True, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
    # Reported again: the same point, not a second one.
    again = [str(ROOT / "scripts/report.sh"), run_ids[0], "--results", str(res), "--out", str(out / "again")]
    r = subprocess.run(again, env=stack.env, text=True, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return start, versions, run_ids, res


def test_history_plots_each_metric_per_broker_version_and_lists_the_runs(stack, history_runs):
    start, versions, run_ids, _ = history_runs
    wrong = []
    for board, p in panels():
        if board != "history.json":
            continue
        texts = [answer(stack, t["query"], start, "", "mosquitto") for t in p["targets"]]
        if p["type"] == "table":
            rows = [r for t in p["targets"] for r in stack.flux(bind(t["query"], start, "", "p2p"))]
            assert [r["run_id"] for r in rows] == run_ids[::-1], rows  # newest first, one row a run
            assert [r["broker_version"] for r in rows] == versions[::-1]
            assert all(float(r["p99"]) > 0 and float(r["rate"]) > 0 and r["passed"] == "true" for r in rows), rows
            assert all(float(r["broker_cpu_per_msg"]) >= 0 and float(r["rss_mb"]) > 0 for r in rows), rows
            # A row links to its run's report (the row's run_id).
            assert p["fieldConfig"]["defaults"]["links"][0]["url"] == "${reports}/${__data.fields.run_id}/report.md"
            continue
        names = gf.legend(texts)
        if sorted(names) != [f"mosquitto {v}" for v in versions]:
            wrong.append(f"{p['title']}: legend {names}")
        for fr, f in gf.value_fields([fr for text in texts for fr in gf.frames(text)]):
            if f.labels or fr.name or len(f.values) != 1:  # one point per run, named by broker and version
                wrong.append(f"{p['title']}: {f.labels} {fr.name} {f.values}")
    assert not wrong, "\n".join(wrong)


def test_history_report_from_the_result_files_alone(history_runs, tmp_path):
    start, versions, run_ids, res = history_runs
    args = ["--history", "mosquitto", "p2p", "--results", str(res), "--out", str(tmp_path)]
    # No InfluxDB asked: the environment has no token, the result files are enough.
    r = subprocess.run([str(ROOT / "scripts/report.sh"), *args], env=dict(os.environ, INFLUXDB_PORT="1"),
                       text=True, capture_output=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "history-mosquitto-p2p" / "history.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| 20")]
    assert [v for v in versions if v in md] == versions and len(rows) == 2, md
    assert (
        all(run_ids[i] in rows[i] for i in range(2)) and (tmp_path / "history-mosquitto-p2p/history.png").stat().st_size
    )
