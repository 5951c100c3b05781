"""The dashboards as a workshop reads them (issue 34): what a panel draws
after a real p2p run on Mosquitto, or from points as k6 writes them, must
not mislead a reader who knows nothing of how it was computed: no partial
second drawn as a rate, no two bases on one axis, no series flat on
another's scale, no client of the stack's own counted as the benchmark's,
a variable that filters, a reconnect delay that says when there was
none, and a composite's parts each on its own series."""

import json
import time
from datetime import UTC, datetime, timedelta

import pytest
import requests

import grafana_frames as gf
from conftest import TEST_PORTS, wait_until
from dashboard_answers import answer, bind, load_dashboards, series
from k6_runs import run_scenario_to_influx
from mqttbench.dashboards import flux as grafana_flux

# The p2p_run fixture's steps (msg/s).
STEPS = (100, 200)


def panel(title):
    return next(p for d in load_dashboards().values() for p in d["panels"] if p["title"] == title)


def field_config(p, name):
    """A series' field config: the panel's defaults, then its overrides by name."""
    config = dict(p["fieldConfig"]["defaults"])
    custom = dict(config.get("custom", {}))
    for o in p["fieldConfig"]["overrides"]:
        if o["matcher"] == {"id": "byName", "options": name}:
            for prop in o["properties"]:
                if prop["id"].startswith("custom."):
                    custom[prop["id"].removeprefix("custom.")] = prop["value"]
                else:
                    config[prop["id"]] = prop["value"]
    return config | {"custom": custom}


def scale(p, name):
    """The scale Grafana draws a series on: series share one when their
    unit, range, axis placement and label agree (buildScaleKey)."""
    c = field_config(p, name)
    return (c.get("unit"), c.get("min"), c.get("max"), c["custom"].get("axisPlacement", "auto"),
            c["custom"].get("axisLabel"))  # fmt: skip


@pytest.mark.parametrize("period", ["1s", "2s"])
def test_rates_are_drawn_in_whole_seconds_of_the_run(stack, p2p_run, period):
    # The first window began before the run, the last holds its final
    # partial second (and k6's closing push): drawn, they read as a rate
    # the generator never had (a run at 1,000 msg/s drew 1,205 published
    # and a target of 333 in its last window). Grafana's windows are never
    # under the datasource's timeInterval, 1 s: one k6 push each. A busy
    # host's send lag moves messages from one second into the next (94, then
    # 103 published at 100 msg/s): a window short of the rate passes if the
    # next one makes up for it, one over it if the one before fell short. The
    # target is never late, and a window partly outside the run has no
    # neighbour that makes up for it.
    start, run_id = p2p_run
    drawn = {}
    for title in ("TPS in and out (msg/s)", "Achieved vs target rate (msg/s)", "Messages by part (msg/s)"):
        for t in panel(title)["targets"]:
            q = bind(t["query"], start, run_id, "p2p").replace("windowPeriod: 2s", f"windowPeriod: {period}")
            for fr in gf.frames(gf.annotated_csv(stack, q)):
                drawn[fr.fields[1].name] = [float(v) for v in fr.fields[1].values if v]
    assert set(drawn) == {"published", "received", "achieved", "target", "p2p published", "p2p received"}
    for name, values in drawn.items():
        assert values, name
        low, high = min(STEPS) * 0.95, max(STEPS) * 1.05
        lag = name != "target"
        for i, v in enumerate(values):
            late = lag and i + 1 < len(values) and v + values[i + 1] >= 2 * low
            caught_up = lag and i > 0 and v + values[i - 1] <= 2 * high
            assert (low <= v or late) and (v <= high or caught_up), (name, i, values)


def test_host_and_broker_cpu_each_have_an_axis_that_names_its_base():
    p = panel("Host CPU and broker CPU (%)")
    host, broker = grafana_flux.HOST_CPU_NAME, grafana_flux.BROKER_CPU_NAME
    assert "all cores" in host and "one core" in broker
    assert scale(p, host) != scale(p, broker)
    assert "all cores" in scale(p, host)[4] and "one core" in scale(p, broker)[4]


def test_the_heap_has_an_axis_of_its_own(stack, p2p_run):
    start, run_id = p2p_run
    memory = series(stack, "Broker memory", start, run_id)
    heap, rss = (max(v for _, v in memory[n] if v is not None) for n in ("broker heap", "broker RSS"))
    # Tens of KB beside MB: on one scale the heap lies flat on zero.
    assert heap < rss / 20, (heap, rss)
    p = panel("Broker memory")
    assert scale(p, "broker heap") != scale(p, "broker RSS")
    assert "heap" in scale(p, "broker heap")[4] and "RSS" in scale(p, "broker RSS")[4]
    # Both in bytes: $SYS/broker/heap/current is.
    assert {scale(p, n)[0] for n in memory} == {"bytes"}


def test_connected_counts_the_benchmarks_clients_alone(stack, p2p_run):
    # Mosquitto counts Telegraf's $SYS subscriber too: the panel leaves it
    # out, so it shows the generator's connections, and 0 after the run.
    start, run_id = p2p_run
    generator = series(stack, "Connections (generator)", start, run_id)
    # From the run's first point: the window opens 30 s before it, when the
    # same broker may still have served another test's clients.
    first = min(t for t, _ in generator["publishers"])
    held = series(stack, "Connected clients and stored messages", start, run_id)["connected"]
    connected = [v for t, v in held if t >= first]
    clients = max(v for _, v in generator["publishers"]) + max(v for _, v in generator["subscribers"])
    assert max(connected) == clients, (connected, clients)
    assert connected[-1] == 0, connected[-3:]


def test_packet_counts_say_what_they_count(stack, p2p_run):
    start, run_id = p2p_run
    rates = series(stack, "Messages received / sent (msg/s)", start, run_id)
    peak = {n: max(v for _, v in points if v is not None) for n, points in rates.items()}
    packets = [n for n in peak if n not in ("received", "sent")]
    assert packets and all(n.startswith("packets ") for n in packets), packets
    # At QoS 1 a message is a PUBLISH and a PUBACK: twice the messages, and
    # the panel says why.
    assert peak["packets received (every type)"] == pytest.approx(2 * peak["received"], rel=0.15), peak
    assert "PUBACK" in panel("Messages received / sent (msg/s)")["description"]


def test_the_scenario_variable_lists_its_runs_and_filters_the_k6_series(stack, p2p_run):
    start, run_id = p2p_run
    variables = [v["name"] for v in load_dashboards()["benchmark-overview.json"]["templating"]["list"]]
    assert variables.index("scenario") < variables.index("run_id")  # chosen first, it lists the runs
    run_ids = next(v["query"] for v in load_dashboards()["benchmark-overview.json"]["templating"]["list"]
                   if v["name"] == "run_id")  # fmt: skip

    def runs(scenario):
        return {r["_value"] for r in stack.flux(bind(run_ids, start, run_id, scenario))}

    assert run_id in runs("p2p") and run_id not in runs("fanout")
    k6_panels = [(p["title"], t["query"]) for d in load_dashboards().values() for p in d["panels"]
                 for t in p.get("targets", []) if "${run_id}" in t["query"]]  # fmt: skip
    assert k6_panels
    for title, q in k6_panels:
        assert "${scenario}" in q, title
        assert not stack.flux(bind(q, start, run_id, "fanout")), title


@pytest.fixture(scope="module")
def reconnects(stack):
    """A run's reconnect delay gauges as the extension writes them
    (mqtt_reconnect_duration_<stat>, the run so far, each second once there
    was a reconnect), through Telegraf's k6 listener."""
    run_id = f"reconnects-{int(time.time())}"
    now = time.time_ns() // 10**9 * 10**9
    start = datetime.fromtimestamp(now / 1e9 - 60, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    values = {"p50": 120.0, "p99": 480.0, "max": 510.0}
    lines = [
        f"mqtt_reconnect_duration_{stat},run_id={run_id},scenario=p2p value={v} {now - (10 - s) * 10**9}"
        for stat, v in values.items()
        for s in range(5)
    ]
    k6_listener = f"http://127.0.0.1:{TEST_PORTS['TELEGRAF_K6_PORT']}/write"
    requests.post(k6_listener, params={"db": "k6"}, data="\n".join(lines), timeout=10).raise_for_status()
    seen = f'from(bucket: "mqtt-bench") |> range(start: {start}) |> filter(fn: (r) => r.run_id == "{run_id}")'
    assert wait_until(lambda: stack.flux(seen), timeout=30), "no reconnect gauges in InfluxDB"
    return start, run_id, values


def test_reconnect_delay_shows_p50_p99_and_max_or_says_there_was_none(stack, p2p_run, reconnects):
    p = panel("Reconnect delay p50 / p99 / max (ms): drop -> back")
    assert p["fieldConfig"]["defaults"]["unit"] == "ms"
    start, run_id, values = reconnects
    texts = [answer(stack, t["query"], start, run_id) for t in p["targets"]]
    assert sorted(gf.legend(texts)) == sorted(values)
    drawn = series(stack, p["title"], start, run_id)
    assert {n: {v for _, v in points} for n, points in drawn.items()} == {n: {v} for n, v in values.items()}
    # The p2p run had no reconnect: no series, and the panel says why.
    start, run_id = p2p_run
    assert not series(stack, p["title"], start, run_id)
    assert p["fieldConfig"]["defaults"]["noValue"] == "no reconnects"


# ---- A composite's parts -----------------------------------------------------
# Its traffic parts (k6/lib/composite.js); the background is a flow too, one
# that sends nothing.
PARTS = ("p2p", "fanout", "fanin")
PART_LATENCY = "Pub-to-sub latency by part p50 / p99 (ms)"


@pytest.fixture(scope="module")
def composite_run(stack, k6_bin, tmp_path_factory):
    """A real composite run, as small as tests/scenarios/test_composite.py runs it but
    long enough for whole 2 s windows of every part: (start, run id, the
    run's result)."""
    start = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    run_id = f"parts-{int(time.time())}"
    res = tmp_path_factory.mktemp("res")
    p, _ = run_scenario_to_influx(stack, k6_bin, "composite", run_id, res, SCALE="0.05", DURATION="8s")
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    time.sleep(3)  # Telegraf flushes every second
    return start, run_id, json.loads((res / f"{run_id}.json").read_text())


def drawn_parts(stack, title, start, run_id, flow=".*"):
    """{legend name: [values]} of a panel after the composite run, with the
    parts chosen in flow (Grafana's regex of them; All: .*)."""
    out = {}
    for t in panel(title)["targets"]:
        text = gf.annotated_csv(stack, bind(t["query"], start, run_id, "composite", flow=flow))
        for fr, f in gf.value_fields(gf.frames(text)):
            # The legend names the series: no label or frame name beside it.
            assert not f.labels and not fr.name, (title, f.labels, fr.name)
            out[f.name] = [float(v) for v in f.values if v]
    return out


def test_the_flow_variable_lists_the_parts_of_the_run_chosen(stack, composite_run):
    start, run_id, result = composite_run
    variables = load_dashboards()["benchmark-overview.json"]["templating"]["list"]
    names = [v["name"] for v in variables]
    assert names.index("run_id") < names.index("flow")  # a run's parts: the run is chosen first
    flow = variables[names.index("flow")]
    # Every part at first, or those chosen, as a regex the queries match.
    assert flow["includeAll"] and flow["multi"] and flow["allValue"] == ".*"
    assert flow["current"]["value"] == ["$__all"]
    parts = {r["_value"] for r in stack.flux(bind(flow["query"], start, run_id, "composite"))}
    assert parts == {f["name"] for f in result["flows"]} == {"background", *PARTS}
    assert not stack.flux(bind(flow["query"], start, "no-such-run", "composite"))


def test_each_part_has_its_own_latency_named_by_part_and_statistic(stack, composite_run):
    start, run_id, result = composite_run
    assert panel(PART_LATENCY)["fieldConfig"]["defaults"]["unit"] == "ms"
    latency = drawn_parts(stack, PART_LATENCY, start, run_id)
    # The background sends nothing: it has no latency.
    assert set(latency) == {f"{part} {stat}" for part in PARTS for stat in ("p50", "p99")}
    for part in PARTS:
        p50, p99 = latency[f"{part} p50"], latency[f"{part} p99"]
        assert p50 and len(p50) == len(p99), (part, p50, p99)
        assert all(0 < a <= b for a, b in zip(p50, p99, strict=True)), (part, p50, p99)
        # The part's own messages: no window's p99 beyond the slowest of them.
        assert max(p99) <= result["delivery"][part]["latency"]["max"] * 1.01, (part, p99)
    # The flow variable chooses the parts drawn: one, or several.
    assert set(drawn_parts(stack, PART_LATENCY, start, run_id, "fanout")) == {"fanout p50", "fanout p99"}
    assert set(drawn_parts(stack, PART_LATENCY, start, run_id, "(p2p|fanin)")) == {
        "p2p p50", "p2p p99", "fanin p50", "fanin p99"
    }  # fmt: skip


def test_messages_by_part_are_each_parts_own_and_chosen_by_flow(stack, composite_run):
    start, run_id, result = composite_run
    rates = drawn_parts(stack, "Messages by part (msg/s)", start, run_id)
    assert set(rates) == {f"{part} {what}" for part in PARTS for what in ("published", "received")}
    flows = {f["name"]: f for f in result["flows"]}
    for part in PARTS:
        # 1 msg/s a publisher (the parts' rates differ: fan-out has one);
        # each message to `fanout` subscribers. Loose: a 2 s window holds
        # each publisher's 1 to 3 messages as its sends fall.
        published = flows[part]["publishers"]
        for what, rate in (("published", published), ("received", published * flows[part]["fanout"])):
            values = rates[f"{part} {what}"]
            assert values and all(0.5 * rate <= v <= 1.5 * rate for v in values), (part, what, rate, values)
    assert set(drawn_parts(stack, "Messages by part (msg/s)", start, run_id, "p2p")) == {
        "p2p published",
        "p2p received",
    }
