"""A real p2p run into the test stack (p2p_run, for the dashboards' tests);
a dashboard panel's query asked of the test stack's InfluxDB, bound to a
run, and read as Grafana's legends would name its series (grafana_frames).
A pytest plugin of conftest.py."""

import json
import time
from datetime import UTC, datetime, timedelta

import pytest

import grafana_frames as gf
from conftest import ROOT, wait_until
from k6_runs import run_scenario_to_influx
from mqttbench.dashboards import flux as grafana_flux


def panels(kind=None):
    for board, d in load_dashboards().items():
        for p in d["panels"]:
            if kind is None or p["type"] == kind:
                yield board, p


def answer(stack, query, start, run_id, broker="mosquitto", stop=None):
    q = bind(query, start, run_id, "p2p", broker)
    if stop:  # a time range of the past
        q = q.replace("timeRangeStop: now()", f"timeRangeStop: {stop}")
    return gf.annotated_csv(stack, q)


def series(stack, title, start, run_id, broker="mosquitto"):
    """{legend name: [(time, value)]} of a panel."""
    p = next(p for _, p in panels() if p["title"] == title)
    out = {}
    for t in p["targets"]:
        for fr in gf.frames(answer(stack, t["query"], start, run_id, broker)):
            times, values = fr.fields[0].values, fr.fields[1].values
            out[fr.fields[1].name] = [
                (datetime.fromisoformat(x.replace("Z", "+00:00")), float(v) if v else None)
                for x, v in zip(times, values, strict=True)
            ]
    return out


@pytest.fixture(scope="module")
def p2p_run(stack, k6_bin, tmp_path_factory):
    """A real p2p run with two steps, then time for Mosquitto's last $SYS
    counter change (one sys_interval) and a SYS_QUIET window without one
    to close after it (up to two more). The second step outlasts a whole
    sys_interval, so one of Mosquitto's counter changes is 200 msg/s
    however the steps fall between its updates (a 3 s step drew 46 msg/s
    when most of the run fell into one update and the rest was averaged
    over the quiet time before it)."""

    # The session's Mosquitto serves the tests before this one (in a worker,
    # any module): until it says none of their clients is left, its
    # connected count is not this run's alone.
    def others_gone():
        since = (datetime.now(UTC) - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
        held = series(stack, "Connected clients and stored messages", since, "none").get("connected")
        return held and held[-1][1] == 0

    assert wait_until(others_gone, timeout=60, every=2), "Mosquitto still counts another test's clients"
    start = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    run_id = f"legend-{int(time.time())}"
    steps = f"100:3s,200:{2 * grafana_flux.SYS_INTERVAL_S}s"
    p, _ = run_scenario_to_influx(stack, k6_bin, "p2p", run_id, tmp_path_factory.mktemp("res"), STEPS=steps)
    assert p.returncode == 0, p.stderr[-3000:]
    time.sleep(5 * grafana_flux.SYS_INTERVAL_S + 1)
    return start, run_id


def load_dashboards():
    """The provisioned dashboards, by file name."""
    return {p.name: json.loads(p.read_text()) for p in sorted((ROOT / "grafana/dashboards").glob("*.json"))}


def dashboard_queries():
    """Every Flux text Grafana runs: (board, where, query) of panel targets,
    variables and annotations."""
    for name, d in load_dashboards().items():
        for p in d["panels"]:
            for t in p.get("targets", []):  # a row has none
                yield name, p["title"], t["query"]
        for v in d["templating"]["list"]:
            if v["type"] == "query":  # not a textbox's default (History's reports)
                yield name, f"variable {v['name']}", v["query"]
        for a in d["annotations"]["list"]:
            yield name, f"annotation {a['name']}", a["target"]["query"]


def broker_panel_queries(broker):
    """(panel title, Flux query) of every Broker internals panel that one
    broker (a folder of brokers/) fills: the panels of the row
    repeated by the broker variable, the same for every broker (each query
    takes the broker's own series: bind it with broker=)."""
    from mqttbench.brokers import facts as broker_facts

    assert broker in broker_facts.names(), broker
    in_row = False
    for p in load_dashboards()["broker-internals.json"]["panels"]:
        if p["type"] == "row":
            in_row = p.get("repeat") == "broker"
        elif in_row:
            for t in p["targets"]:
                yield p["title"], t["query"]


def bind(query, start, run_id, scenario, broker="mosquitto", flow=".*"):
    """What Grafana does: the v record and the template variables (flow: the
    regex Grafana writes for the parts chosen, .* for All)."""
    q = query.replace("${run_id}", run_id).replace("${broker}", broker).replace("${scenario}", scenario)
    q = q.replace("${flow:regex}", flow)
    q = q.replace("${broker:regex}", broker)  # History's brokers, several or all: one here
    lines = q.split("\n")
    imports = [line for line in lines if line.startswith("import ")]
    rest = [line for line in lines if not line.startswith("import ")]
    v = (
        f"v = {{timeRangeStart: {start}, timeRangeStop: now(), windowPeriod: 2s, "
        f'defaultBucket: "mqtt-bench", organization: "mqtt-bench"}}'
    )
    return "\n".join(imports + [v] + rest)
