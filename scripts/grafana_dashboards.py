#!/usr/bin/env python3
"""Generates grafana/dashboards/*.json: one place for the Flux queries of all
panels, so that the dashboards stay consistent. Their filters and measurement
names come from flux_filters.py, which the report uses too. Run after editing;
the tests check that the committed JSON is this script's output and run every
query against a real InfluxDB.   Usage: scripts/grafana_dashboards.py [--check]"""

import json
from pathlib import Path

import flux_filters as ff
from flux_filters import measurement
from generated import sync

OUT = Path(__file__).resolve().parent.parent / "grafana" / "dashboards"
DS = {"type": "influxdb", "uid": "mqtt-bench-influxdb"}
# Dashboard JSON schema version. 41 is at or below the latest version of
# Grafana 12.2.1's migrator (41 or 42: see tests/test_grafana_upstream.py),
# and the migrations 40-42 change nothing in these dashboards (refresh is a
# string, no timepicker.time_options, no hideFrom overrides).
SCHEMA_VERSION = 41
RANGE = "from(bucket: v.defaultBucket)\n  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n"
# Grafana's template variables, bound when a panel is drawn. run_id holds a
# run id or a capacity search's id (ff.run(): then every trial of the search).
RUN = "${run_id}"
HOST = "${broker}"
PER_SECOND = (
    "  |> map(fn: (r) => ({r with _value: float(v: r._value) / (float(v: int(v: v.windowPeriod)) / 1000000000.0)}))\n"
)


def where(predicate):
    return RANGE + f"  |> filter(fn: (r) => {predicate})\n"


def window(fn):
    return f"  |> aggregateWindow(every: v.windowPeriod, fn: {fn}, createEmpty: false)"


def k6_rate(name, label):
    """msg/s of a k6 counter (pushed as per-second deltas) over all its series."""
    return (
        where(ff.k6_value(name, RUN))
        + '  |> group(columns: ["_measurement"])\n'
        + window("sum")
        + "\n"
        + PER_SECOND
        + f'  |> set(key: "_field", value: "{label}")'
    )


def k6_sum(name):
    return where(ff.k6_value(name, RUN)) + '  |> group(columns: ["_measurement"])\n  |> sum()'


def k6_stats(name, stats, fn="max"):
    return where(ff.k6_stats(name, RUN, stats)) + '  |> group(columns: ["stat"])\n' + window(fn)


def k6_gauge(name, group="_measurement", fn="last"):
    return where(ff.k6_value(name, RUN)) + f'  |> group(columns: ["{group}"])\n' + window(fn)


def prom(field, source, derive=False, group=None):
    q = where(ff.prometheus(source, field, HOST))
    if derive:
        q += "  |> derivative(unit: 1s, nonNegative: true)\n"
    if group is not None:
        q += f"  |> group(columns: {json.dumps(group)})\n"
    return q + window("mean")


def node(field, derive=False, group=None):
    return prom(field, ff.NODE_EXPORTER, derive, group)


def sys_topic(topic, derive=False):
    q = where(ff.mosquitto_sys(topic, HOST))
    if derive:
        q += "  |> derivative(unit: 1s, nonNegative: true)\n"
    return q + window("mean")


HOST_CPU = (
    where(ff.host_cpu("usage_idle", HOST))
    + window("mean")
    + '\n  |> map(fn: (r) => ({r with _value: 100.0 - r._value, _field: "host CPU (1 - idle)"}))'
)
HOST_MEM = where(ff.host_mem("used_percent", HOST)) + window("mean")
BROKER_CPU = (
    where(ff.broker_cpu(HOST))
    + '  |> group(columns: ["_measurement"])\n'
    + window("mean")
    + '\n  |> set(key: "_field", value: "broker process CPU")'
)
BROKER_MEM = (
    where(ff.broker_rss(HOST))
    + '  |> group(columns: ["_measurement"])\n'
    + window("mean")
    + '\n  |> set(key: "_field", value: "broker RSS")'
)
DELIVERY = (
    where(
        f"{ff.run(RUN)} and {ff.field('value')} and "
        f"({measurement(ff.RECEIVES)} or {measurement(ff.LOST)} or {measurement(ff.DUPLICATES)})"
    )
    + "  |> group()\n"
    + "  |> reduce(identity: {rec: 0.0, lost: 0.0, dup: 0.0}, fn: (r, accumulator) => ({\n"
    + f'      rec: accumulator.rec + (if r._measurement == "{ff.RECEIVES}" then float(v: r._value) else 0.0),\n'
    + f'      lost: accumulator.lost + (if r._measurement == "{ff.LOST}" then float(v: r._value) else 0.0),\n'
    + f'      dup: accumulator.dup + (if r._measurement == "{ff.DUPLICATES}" then float(v: r._value) else 0.0)}}))\n'
    + "  |> map(fn: (r) => ({_value: if r.rec - r.dup + r.lost > 0.0 "
    + "then 100.0 * (r.rec - r.dup) / (r.rec - r.dup + r.lost) else 100.0}))"
)


def variable(name, tags, source):
    """A query variable listing the values of the given tags on source. With
    several tags, one table of their distinct values (Grafana reads a
    variable's values from the first string field of each frame), newest
    first for run ids (the sort option sorts them again)."""
    values = [
        f'schema.tagValues(bucket: v.defaultBucket, tag: "{tag}", predicate: (r) => {measurement(source)}, start: -30d)'
        for tag in tags
    ]
    q = 'import "influxdata/influxdb/schema"\n'
    if len(values) == 1:
        q += values[0]
    else:
        q += "union(tables: [\n" + "".join(f"  {v},\n" for v in values) + "])\n"
        q += "  |> group()\n  |> unique()\n  |> sort(desc: true)"
    return {
        "name": name,
        "label": name,
        "type": "query",
        "datasource": DS,
        "query": q,
        "definition": q,
        "refresh": 2,
        "sort": 2 if name == "run_id" else 1,
        "current": {},
        "options": [],
        "hide": 0,
        "includeAll": False,
        "multi": False,
    }


VARIABLES = [
    # Run ids and capacity search ids: choosing a search shows all its trials.
    variable("run_id", ["run_id", "search"], ff.PUBLISHES),
    variable("broker", ["broker"], ff.CPU),
    variable("scenario", ["scenario"], ff.CONNECTS),
]


def annotation(name, color, query):
    return {
        "name": name,
        "datasource": DS,
        "enable": True,
        "iconColor": color,
        "target": {"refId": "Anno", "query": query},
    }


def events(text, tags="r.run_id"):
    """The last step of an annotation query: one table of _time, text and
    tags and no _value. Grafana's Flux backend makes a table without _value
    a frame whose fields are its columns (with _value it is a time series,
    its other columns labels, and there is no text field); the annotation
    then takes the first time field as time, the field `text` as text and
    `tags` split on commas as tags (see tests/test_grafana_upstream.py)."""
    return (
        "  |> group()\n"
        '  |> sort(columns: ["_time"])\n'
        f"  |> map(fn: (r) => ({{_time: r._time, text: {text}, tags: {tags}}}))"
    )


RATE_TEXT = 'string(v: r._value) + " msg/s"'
ANNOTATIONS = [
    # The steps of a single run, or of one trial chosen by its own run id.
    annotation(
        "Run steps",
        "orange",
        where(ff.run_steps(RUN)) + events(f'if r._value > 0.0 then "step: " + {RATE_TEXT} else "end of the last step"'),
    ),
    # A capacity search chosen in run_id: one annotation per trial, at its
    # first step start (k6 instances of one trial each push the gauge).
    annotation(
        "Capacity trials",
        "purple",
        where(ff.trial_starts(RUN))
        + '  |> group(columns: ["run_id"])\n'
        + "  |> first()\n"
        + events(f'"trial " + r.run_id + ": " + {RATE_TEXT}'),
    ),
]


class Dashboard:
    def __init__(self, uid, title, description):
        self.uid, self.title, self.description = uid, title, description
        self.panels, self.x, self.y = [], 0, 0

    def panel(self, title, queries, unit="short", kind="timeseries", w=12, h=8, description=""):
        if self.x + w > 24:
            self.x, self.y = 0, self.y + h
        targets = [{"refId": chr(65 + i), "datasource": DS, "query": q} for i, q in enumerate(queries)]
        p = {
            "id": len(self.panels) + 1,
            "type": kind,
            "title": title,
            "description": description,
            "datasource": DS,
            "gridPos": {"h": h, "w": w, "x": self.x, "y": self.y},
            "targets": targets,
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {},
        }
        if kind == "stat":
            p["options"] = {
                "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                "colorMode": "value",
                "graphMode": "none",
                "textMode": "value_and_name",
            }
        self.panels.append(p)
        self.x += w
        return self

    def json(self):
        return {
            "id": None,
            "uid": self.uid,
            "title": self.title,
            "description": self.description,
            "tags": ["mqtt-bench"],
            "timezone": "browser",
            "editable": True,
            "schemaVersion": SCHEMA_VERSION,
            "version": 1,
            "refresh": "5s",
            "time": {"from": "now-30m", "to": "now"},
            "graphTooltip": 1,
            "templating": {"list": VARIABLES},
            "annotations": {"list": ANNOTATIONS},
            "panels": self.panels,
        }


SEARCH_SUM = " With a capacity search chosen in run_id: the sum over all its trials."


def dashboards():
    ov = Dashboard(
        "mqtt-bench-overview",
        "Benchmark overview",
        "TPS, pub-to-sub latency, success, connections, host and broker CPU and memory of one run, or of every "
        "trial of a capacity search (run_id lists both; the Capacity trials annotation marks each trial).",
    )
    ov.panel(
        "TPS in and out (msg/s)",
        [k6_rate(ff.PUBLISHES, "in (published)"), k6_rate(ff.RECEIVES, "out (received)")],
        "short",
    )
    ov.panel("Pub-to-sub latency p50 / p99 (ms)", [k6_stats(ff.LATENCY_1S, ["p50", "p99"])], "ms")
    ov.panel(
        "Delivery success (%)",
        [DELIVERY],
        "percent",
        "stat",
        w=6,
        h=5,
        description="Received (less duplicates) of expected messages. With a capacity search chosen in run_id: "
        "over all its trials together.",
    )
    ov.panel("Lost messages", [k6_sum(ff.LOST)], "short", "stat", w=6, h=5, description="Lost messages." + SEARCH_SUM)
    ov.panel(
        "Connect failures",
        [k6_sum(ff.CONNECT_FAILURES)],
        "short",
        "stat",
        w=6,
        h=5,
        description="Failed connection attempts." + SEARCH_SUM,
    )
    ov.panel(
        "Publish failures",
        [k6_sum(ff.PUBLISH_FAILURES)],
        "short",
        "stat",
        w=6,
        h=5,
        description="Publishes that failed." + SEARCH_SUM,
    )
    ov.panel("Connections (generator)", [k6_gauge(ff.CONNECTIONS, "role")], "short")
    ov.panel("Host CPU (1 - idle) and broker CPU (%)", [HOST_CPU, BROKER_CPU], "percent")
    ov.panel("Host memory used (%)", [HOST_MEM], "percent")
    ov.panel("Broker memory (RSS)", [BROKER_MEM], "bytes")

    br = Dashboard("mqtt-bench-broker", "Broker internals", "What each broker reports about itself.")
    br.panel(
        "Mosquitto: messages received / sent (msg/s)",
        [sys_topic("$SYS/broker/messages/received", True), sys_topic("$SYS/broker/messages/sent", True)],
    )
    br.panel("Mosquitto: clients connected", [sys_topic("$SYS/broker/clients/connected")])
    br.panel("Mosquitto: publish messages dropped (msg/s)", [sys_topic("$SYS/broker/publish/messages/dropped", True)])
    br.panel(
        "Mosquitto: stored messages and heap",
        [sys_topic("$SYS/broker/store/messages/count"), sys_topic("$SYS/broker/heap/current")],
    )
    br.panel(
        "EMQX: messages received / sent (msg/s)",
        [prom("emqx_messages_received", "emqx", True), prom("emqx_messages_sent", "emqx", True)],
    )
    br.panel(
        "EMQX: connections and dropped",
        [prom("emqx_connections_count", "emqx"), prom("emqx_messages_dropped", "emqx", True)],
    )
    br.panel(
        "NanoMQ: messages received / sent (msg/s)",
        [prom("nanomq_messages_received", "nanomq", True), prom("nanomq_messages_sent", "nanomq", True)],
    )
    br.panel(
        "NanoMQ: connections and dropped",
        [prom("nanomq_connections_count", "nanomq"), prom("nanomq_messages_dropped", "nanomq", True)],
    )
    br.panel(
        "VerneMQ: publishes received / sent (msg/s)",
        [prom("mqtt_publish_received", "vernemq", True), prom("mqtt_publish_sent", "vernemq", True)],
    )
    br.panel(
        "VerneMQ: connections and queue drops",
        [prom("active_mqtt_connections", "vernemq"), prom("queue_message_drop", "vernemq", True)],
    )

    host = Dashboard("mqtt-bench-host", "Host (node-exporter)", "The broker host, from node_exporter.")
    host.panel(
        "CPU by mode (% of one core)",
        [node("node_cpu_seconds_total", True, ["mode"]) + "\n  |> map(fn: (r) => ({r with _value: r._value * 100.0}))"],
        "percent",
    )
    host.panel(
        "Memory available / total",
        [node("node_memory_MemAvailable_bytes"), node("node_memory_MemTotal_bytes")],
        "bytes",
    )
    host.panel("Load", [node("node_load1"), node("node_load5")])
    host.panel(
        "Network received / sent (bytes/s)",
        [
            node("node_network_receive_bytes_total", True, ["device"]),
            node("node_network_transmit_bytes_total", True, ["device"]),
        ],
        "Bps",
    )
    host.panel(
        "TCP sockets in use / established", [node("node_sockstat_TCP_inuse"), node("node_netstat_Tcp_CurrEstab")]
    )
    host.panel("File descriptors allocated", [node("node_filefd_allocated")])

    gen = Dashboard(
        "mqtt-bench-generator",
        "Load generator health",
        "Is the generator keeping up? Achieved against target rate, send lag, reconnects.",
    )
    gen.panel(
        "Achieved vs target rate (msg/s)", [k6_rate(ff.PUBLISHES, "achieved"), k6_gauge(ff.TARGET_RATE, fn="mean")]
    )
    gen.panel("Send lag p50 / p99 (ms): intended -> actual send", [k6_stats(ff.SEND_LAG_1S, ["p50", "p99"])], "ms")
    gen.panel(
        "Worst achieved / target ratio",
        [k6_gauge(ff.RATE_ACHIEVED_RATIO, fn="min")],
        "percentunit",
        "stat",
        w=8,
        h=5,
        description="The lowest achieved / target rate ratio. With a capacity search chosen in run_id: "
        "the worst over all its trials.",
    )
    gen.panel("Reconnects", [k6_sum(ff.RECONNECTS)], "short", "stat", w=8, h=5, description="Reconnects." + SEARCH_SUM)
    gen.panel("Errors", [k6_sum(ff.ERRORS)], "short", "stat", w=8, h=5, description="Errors." + SEARCH_SUM)
    gen.panel("Latency from intended send p99 (ms)", [k6_stats(ff.LATENCY_INTENDED_1S, ["p99"])], "ms")
    gen.panel("Step rate (msg/s)", [k6_gauge(ff.STEP_RATE)])
    return [ov, br, host, gen]


def render():
    return {f"{d.uid.removeprefix('mqtt-bench-')}.json": json.dumps(d.json(), indent=2) + "\n" for d in dashboards()}


def main():
    files = render()
    names = {
        "overview.json": "benchmark-overview.json",
        "broker.json": "broker-internals.json",
        "host.json": "host.json",
        "generator.json": "load-generator.json",
    }
    sync({OUT / names[name]: text for name, text in files.items()}, "dashboards", "scripts/grafana_dashboards.py")


if __name__ == "__main__":
    main()
