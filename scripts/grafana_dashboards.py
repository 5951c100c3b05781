#!/usr/bin/env python3
"""Generates grafana/dashboards/*.json: one place for the Flux queries of all
panels, the names their series show in a legend, their colours and their
shapes, so that the dashboards stay consistent. Their filters and measurement
names come from flux_filters.py, which the report uses too. Run after editing;
the tests check that the committed JSON is this script's output, run every
query against a real InfluxDB and check what Grafana makes of each answer
(tests/grafana_frames.py).   Usage: scripts/grafana_dashboards.py [--check]"""

import json
import re
from pathlib import Path

import flux_filters as ff
from flux_filters import measurement
from generated import sync

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "grafana" / "dashboards"
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
# The share of its target rate a step must reach (k6/extension/verdict/
# policy.go RateReached; tests/test_dashboard_legends.py holds them equal).
RATE_REACHED = 0.95
# Mosquitto publishes each $SYS topic every sys_interval, and only when its
# value changed (brokers/mosquitto/mosquitto.conf).
SYS_INTERVAL_S = int(
    re.search(r"^sys_interval (\d+)$", (ROOT / "brokers/mosquitto/mosquitto.conf").read_text(), re.M)[1]
)


def where(predicate):
    return RANGE + f"  |> filter(fn: (r) => {predicate})\n"


def window(fn, every="v.windowPeriod", empty=False):
    return f"  |> aggregateWindow(every: {every}, fn: {fn}, createEmpty: {str(empty).lower()})"


def named(name):
    """The last step of every time-series query: one table per series whose
    only columns are _time, _value and _field, the group key, holding the
    name the legend shows (a Flux expression of r). Grafana's Flux backend
    makes each table a frame, its group key the labels; with _time and
    _value the only other columns it names the value by _field, else it
    names it `_value` and keeps _start and _stop as labels, which the legend
    prints (pkg/tsdb/influxdb/flux/builder.go; tests/grafana_frames.py)."""
    return (
        f"\n  |> map(fn: (r) => ({{r with _field: {name}}}))\n"
        '  |> keep(columns: ["_time", "_value", "_field"])\n'
        '  |> group(columns: ["_field"])'
    )


def text(s):
    return json.dumps(s)


def k6_rate(name, label):
    """msg/s of a k6 counter (pushed as per-second deltas) over all its series."""
    return (
        where(ff.k6_value(name, RUN))
        + '  |> group(columns: ["_measurement"])\n'
        + window("sum")
        + "\n"
        + PER_SECOND.rstrip("\n")
        + named(text(label))
    )


def stat_named(label):
    """The last step of a stat's query: its one value, under a name (a stat
    shows the value alone, but a name is what Grafana would show)."""
    return f'\n  |> keep(columns: ["_value"])\n  |> rename(columns: {{_value: {text(label)}}})'


def k6_sum(name, label):
    return where(ff.k6_value(name, RUN)) + "  |> group()\n  |> sum()" + stat_named(label)


def k6_stats(name, stats, fn="max"):
    return where(ff.k6_stats(name, RUN, stats)) + '  |> group(columns: ["stat"])\n' + window(fn) + named("r.stat")


def k6_gauge(name, label, group="_measurement", fn="last"):
    return where(ff.k6_value(name, RUN)) + f'  |> group(columns: ["{group}"])\n' + window(fn) + named(label)


# What the extension tags each client with (k6/extension/load: role "pub",
# "sub", or "client" for connection-only scenarios), as a legend says it.
ROLE_NAME = 'if r.role == "pub" then "publishers" else if r.role == "sub" then "subscribers" else r.role + " clients"'


def node(field, label, derive=False):
    """A node_exporter series."""
    q = where(ff.prometheus(ff.NODE_EXPORTER, field, HOST))
    if derive:
        q += "  |> derivative(unit: 1s, nonNegative: true)\n"
    return q + window("mean") + named(label)


# ---- Broker internals --------------------------------------------------------
# One row, repeated by the broker variable, of panels every broker fills:
# each series below is named once per broker, ("sys", topic) for Mosquitto's
# $SYS, ("prom", series) for a broker's Prometheus exposition. A panel
# filters on ${broker}, so only the chosen broker's series have data.
BROKER_SERIES = {
    "received": {
        "mosquitto": ("sys", "$SYS/broker/publish/messages/received"),
        "emqx": ("prom", "emqx_messages_received"),
        "nanomq": ("prom", "nanomq_messages_received"),
        "vernemq": ("prom", "vernemq_mqtt_publish_received"),
    },
    "sent": {
        "mosquitto": ("sys", "$SYS/broker/publish/messages/sent"),
        "emqx": ("prom", "emqx_messages_sent"),
        "nanomq": ("prom", "nanomq_messages_sent"),
        "vernemq": ("prom", "vernemq_mqtt_publish_sent"),
    },
    # Mosquitto's count of every packet type (CONNECT, PUBACK, PINGREQ...).
    "received, every packet": {"mosquitto": ("sys", "$SYS/broker/messages/received")},
    "sent, every packet": {"mosquitto": ("sys", "$SYS/broker/messages/sent")},
    "dropped": {
        "mosquitto": ("sys", "$SYS/broker/publish/messages/dropped"),
        "emqx": ("prom", "emqx_messages_dropped"),
        "nanomq": ("prom", "nanomq_messages_dropped"),
        "vernemq": ("prom", "vernemq_queue_message_drop"),
    },
    "connected": {
        "mosquitto": ("sys", "$SYS/broker/clients/connected"),
        "emqx": ("prom", "emqx_connections_count"),
        "nanomq": ("prom", "nanomq_connections_count"),
        "vernemq": ("prom", "vernemq_active_mqtt_connections"),
    },
    "stored messages": {"mosquitto": ("sys", "$SYS/broker/store/messages/count")},
    # A glibc build's (Debian's) only: the Alpine image publishes no heap.
    "heap (Mosquitto $SYS)": {"mosquitto": ("sys", "$SYS/broker/heap/current")},
}
# A window this long with other $SYS topics but not a counter's means the
# counter did not change (Mosquitto publishes it when changed, every
# sys_interval): its rate there is 0.
SYS_QUIET = f"{2 * SYS_INTERVAL_S}s"


def sys_topic(name):
    return BROKER_SERIES[name]["mosquitto"][1]


def prom_names(name):
    return [s for kind, s in BROKER_SERIES[name].values() if kind == "prom"]


def prom_series(name):
    fields = " or ".join(ff.field(s) for s in prom_names(name))
    return f"{measurement(ff.PROMETHEUS)} and {ff.tag('broker', HOST)} and ({fields})"


# The series of one broker add up (VerneMQ's one per MQTT version): their
# windows end at the same times.
SUM_SERIES = '  |> group(columns: ["_time"])\n  |> sum()\n  |> group()\n  |> sort(columns: ["_time"])'


def prom_rate(name):
    return (
        where(prom_series(name)) + "  |> derivative(unit: 1s, nonNegative: true)\n" + window("mean") + "\n" + SUM_SERIES
    )


def prom_gauge(name):
    return where(prom_series(name)) + window("mean") + "\n" + SUM_SERIES


# Every $SYS topic of the chosen broker: the stream sys_rate reads.
MOSQ = "mosq = " + where(f"{measurement(ff.MOSQUITTO_SYS)} and {ff.tag('broker', HOST)}").rstrip("\n")


def sys_rate(name, v):
    """msg/s of a $SYS counter: the mean since its previous publication, and
    0 in every window of SYS_QUIET in which Mosquitto published other $SYS
    topics but not this one (unchanged: absence means zero here). Returns
    the statements it needs (their names prefixed with v; MOSQ before them)
    and its result."""
    topic = text(sys_topic(name))
    statements = [
        f"{v}changes = mosq\n  |> filter(fn: (r) => r.topic == {topic})\n"
        "  |> derivative(unit: 1s, nonNegative: true)\n"
        '  |> keep(columns: ["_start", "_stop", "_time", "_value"])',
        f"{v}quiet = mosq\n"
        f"  |> map(fn: (r) => ({{_time: r._time, _value: if r.topic == {topic} then 1.0 else 0.0}}))\n"
        '  |> group()\n  |> sort(columns: ["_time"])\n'
        + window("sum", SYS_QUIET)
        + "\n  |> filter(fn: (r) => r._value == 0.0)\n"
        '  |> keep(columns: ["_start", "_stop", "_time", "_value"])',
    ]
    # (A window ending at the range's stop holds no value: it is dropped.)
    result = (
        f'union(tables: [{v}changes, {v}quiet])\n  |> group()\n  |> sort(columns: ["_time"])\n'
        + window("mean")
        + "\n  |> filter(fn: (r) => exists r._value)"
    )
    return statements, result


def sys_held(name):
    """A $SYS value held until the next publication, from the last one in
    the day before the time range on (the broker says a value once)."""
    return (
        "from(bucket: v.defaultBucket)\n"
        "  |> range(start: date.sub(d: 1d, from: v.timeRangeStart), stop: v.timeRangeStop)\n"
        f"  |> filter(fn: (r) => {ff.mosquitto_sys(sys_topic(name), HOST)})\n"
        "  |> map(fn: (r) => ({r with _time: if r._time < v.timeRangeStart then v.timeRangeStart else r._time}))\n"
        "  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n"
        + window("last", empty=True)
        + "\n  |> fill(usePrevious: true)\n  |> filter(fn: (r) => exists r._value)"
    )


def broker_query(names, rate):
    """Series of the broker row, each named as given, in one query: the
    chosen broker's own series for each name, as a rate (counters) or as
    it is (gauges). Every branch filters on ${broker}: only the chosen
    broker's have data, and each query has data for every broker."""
    imports, statements, results = set(), [], []
    for name in names:
        if "mosquitto" in BROKER_SERIES[name]:
            if rate:
                more, result = sys_rate(name, f"s{len(results)}_")
                statements += ([] if MOSQ in statements else [MOSQ]) + more
            else:
                imports.add('import "date"')
                result = sys_held(name)
            results.append(result + named(text(name)))
        if prom_names(name):
            results.append((prom_rate(name) if rate else prom_gauge(name)) + named(text(name)))
    if len(results) == 1:
        body = results[0]
    else:
        statements += [f"b{i} = {r}" for i, r in enumerate(results)]
        body = f"union(tables: [{', '.join(f'b{i}' for i in range(len(results)))}])"
    return "\n".join(sorted(imports) + statements + [body])


# ---- Host and broker process -------------------------------------------------
HOST_CPU = (
    where(ff.host_cpu("usage_idle", HOST))
    + window("mean")
    + "\n  |> map(fn: (r) => ({r with _value: 100.0 - r._value}))"
    + named(text("host CPU (1 - idle)"))
)
HOST_MEM = where(ff.host_mem("used_percent", HOST)) + window("mean") + named(text("host memory used"))
BROKER_CPU = (
    where(ff.broker_cpu(HOST)) + '  |> group(columns: ["_measurement"])\n' + window("mean") + named(text("broker CPU"))
)
BROKER_MEM = (
    where(ff.broker_rss(HOST)) + '  |> group(columns: ["_measurement"])\n' + window("mean") + named(text("broker RSS"))
)


def network(node_field, docker_field, direction):
    """Bytes/s of every interface node_exporter sees that ever carried a
    byte (the benchmark's: lo when broker and generator share the host),
    and under compose the broker container's own network (Telegraf's docker
    input: node-exporter runs in a network namespace of its own there)."""
    return (
        RANGE
        + "  |> filter(fn: (r) => "
        + f"({ff.prometheus(ff.NODE_EXPORTER, node_field, HOST)} and r._value > 0.0) or "
        + f"({measurement('docker_container_net')} and {ff.field(docker_field)} and {ff.tag('broker', HOST)}))\n"
        + "  |> derivative(unit: 1s, nonNegative: true)\n"
        + window("mean")
        + named(f'(if exists r.device then r.device else "broker container") + " {direction}"')
    )


# Received (less duplicates) of expected messages, floored to 0.01 %: a
# stat never rounds a loss up to 100 %, shown green.
DELIVERY = (
    'import "math"\n'
    + where(
        f"{ff.run(RUN)} and {ff.field('value')} and "
        f"({measurement(ff.RECEIVES)} or {measurement(ff.LOST)} or {measurement(ff.DUPLICATES)})"
    )
    + "  |> group()\n"
    + "  |> reduce(identity: {rec: 0.0, lost: 0.0, dup: 0.0}, fn: (r, accumulator) => ({\n"
    + f'      rec: accumulator.rec + (if r._measurement == "{ff.RECEIVES}" then float(v: r._value) else 0.0),\n'
    + f'      lost: accumulator.lost + (if r._measurement == "{ff.LOST}" then float(v: r._value) else 0.0),\n'
    + f'      dup: accumulator.dup + (if r._measurement == "{ff.DUPLICATES}" then float(v: r._value) else 0.0)}}))\n'
    + "  |> map(fn: (r) => ({_value: if r.rec - r.dup + r.lost > 0.0 "
    + "then math.floor(x: 10000.0 * (r.rec - r.dup) / (r.rec - r.dup + r.lost)) / 100.0 else 100.0}))"
    + stat_named("delivered")
)
# The gauge is each run's lowest ratio so far: the lowest of all its points
# is the run's, or the worst trial's of a search; rounded down to the 0.01 %
# the stat shows, so that a step short of RATE_REACHED never reads it.
WORST_RATIO = (
    'import "math"\n'
    + where(ff.k6_value(ff.RATE_ACHIEVED_RATIO, RUN))
    + "  |> group()\n  |> min()\n"
    + "  |> map(fn: (r) => ({r with _value: math.floor(x: 10000.0 * r._value) / 10000.0}))"
    + stat_named("worst ratio")
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


# ---- Panels ------------------------------------------------------------------
def thresholds(*steps):
    """Colours by value: the first step from -infinity (null in JSON)."""
    return {"mode": "absolute", "steps": [{"color": c, "value": v} for c, v in steps]}


# Stats: a count of failures is good only at 0; delivery only at 100 %
# (a QoS >= 1 run fails on a single loss: k6/lib/scenario.js mqtt_lost);
# the rate ratio from RATE_REACHED on.
COUNT_COLOURS = thresholds(("green", None), ("red", 1))
DELIVERY_COLOURS = thresholds(("red", None), ("green", 100))
RATIO_COLOURS = thresholds(("red", None), ("green", RATE_REACHED))
# Line shapes: a value that holds until the next one (a step start, a $SYS
# value published on change), or that covers the span before its point (a
# rate since the previous report).
HOLDS, COVERS_BEFORE = "stepAfter", "stepBefore"


class Dashboard:
    def __init__(self, uid, title, description):
        self.uid, self.title, self.description = uid, title, description
        self.panels, self.x, self.y, self.line_h = [], 0, 0, 0

    def _place(self, w, h):
        if self.x + w > 24:
            self.x, self.y, self.line_h = 0, self.y + self.line_h, 0
        pos = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.x += w
        self.line_h = max(self.line_h, h)
        return pos

    def row(self, title, repeat):
        """A row repeated by a variable: one copy per value (one for a
        single-value variable), its panels bound to that value."""
        if self.x:  # a row starts a line of its own
            self.x, self.y, self.line_h = 0, self.y + self.line_h, 0
        pos = self._place(24, 1)
        self.panels.append(
            {"id": len(self.panels) + 1, "type": "row", "title": title, "collapsed": False, "repeat": repeat}
            | {"gridPos": pos, "panels": []}
        )
        return self

    def panel(self, title, queries, unit="short", kind="timeseries", w=12, h=8, description="", **field):
        """field: decimals, min, colours (thresholds) and line (a line shape
        for every series, or {series name: shape})."""
        targets = [{"refId": chr(65 + i), "datasource": DS, "query": q} for i, q in enumerate(queries)]
        defaults = {"unit": unit}
        overrides = []
        if "decimals" in field:
            defaults["decimals"] = field["decimals"]
        if kind == "timeseries":
            # Rates, counts, bytes, durations and shares are never negative:
            # an axis from 0 does not zoom into a flat line's noise
            # (4.00 K, 4 K, 4.00 K...).
            defaults["min"] = field.get("min", 0)
            line = field.get("line")
            if isinstance(line, str):
                defaults["custom"] = {"lineInterpolation": line}
            for name, shape in (line or {}).items() if isinstance(line, dict) else ():
                overrides.append(
                    {
                        "matcher": {"id": "byName", "options": name},
                        "properties": [{"id": "custom.lineInterpolation", "value": shape}],
                    }
                )
        p = {
            "id": len(self.panels) + 1,
            "type": kind,
            "title": title,
            "description": description,
            "datasource": DS,
            "gridPos": self._place(w, h),
            "targets": targets,
            "fieldConfig": {"defaults": defaults, "overrides": overrides},
            "options": {},
        }
        if kind == "stat":
            defaults["color"] = {"mode": "thresholds"}
            defaults["thresholds"] = field["colours"]
            # The value alone: the panel's title says what it is.
            p["options"] = {
                "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                "colorMode": "value",
                "graphMode": "none",
                "textMode": "value",
            }
        self.panels.append(p)
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
SYS_NOTE = (
    " Mosquitto publishes each $SYS topic every sys_interval ("
    + str(SYS_INTERVAL_S)
    + " s) and only when it changed: a value holds until the next"
)


def count_stat(board, title, metric, description, w=6):
    board.panel(title, [k6_sum(metric, title.lower())], "short", "stat", w=w, h=5, description=description, decimals=0,
                colours=COUNT_COLOURS)  # fmt: skip


def dashboards():
    ov = Dashboard(
        "mqtt-bench-overview",
        "Benchmark overview",
        "TPS, pub-to-sub latency, success, connections, host and broker CPU and memory of one run, or of every "
        "trial of a capacity search (run_id lists both; the Capacity trials annotation marks each trial).",
    )
    ov.panel("TPS in and out (msg/s)", [k6_rate(ff.PUBLISHES, "published"), k6_rate(ff.RECEIVES, "received")])
    ov.panel("Pub-to-sub latency p50 / p99 (ms)", [k6_stats(ff.LATENCY_1S, ["p50", "p99"])], "ms")
    ov.panel(
        "Delivery success (%)",
        [DELIVERY],
        "percent",
        "stat",
        w=6,
        h=5,
        description="Received (less duplicates) of expected messages, rounded down to 0.01 %: green at 100 %, red "
        "below (a QoS 1 or 2 run fails on one lost message). With a capacity search chosen in run_id: over all its "
        "trials together.",
        decimals=2,
        colours=DELIVERY_COLOURS,
    )
    count_stat(ov, "Lost messages", ff.LOST, "Lost messages: green at 0." + SEARCH_SUM)
    count_stat(ov, "Connect failures", ff.CONNECT_FAILURES, "Failed connection attempts: green at 0." + SEARCH_SUM)
    count_stat(ov, "Publish failures", ff.PUBLISH_FAILURES, "Publishes that failed: green at 0." + SEARCH_SUM)
    ov.panel("Connections (generator)", [k6_gauge(ff.CONNECTIONS, ROLE_NAME, "role")], line=HOLDS)
    ov.panel("Host CPU (1 - idle) and broker CPU (%)", [HOST_CPU, BROKER_CPU], "percent")
    ov.panel("Host memory used (%)", [HOST_MEM], "percent")
    ov.panel(
        "Broker memory",
        [BROKER_MEM, broker_query(["heap (Mosquitto $SYS)"], rate=False)],
        "bytes",
        description="The broker process's resident memory; with Mosquitto built on glibc (Debian's), also the heap "
        "it reports in $SYS." + SYS_NOTE + ".",
        line={"heap (Mosquitto $SYS)": HOLDS},
    )

    br = Dashboard(
        "mqtt-bench-broker",
        "Broker internals",
        "What the chosen broker reports about itself: one row, repeated by the broker variable.",
    )
    br.row("$broker", repeat="broker")
    br.panel(
        "Messages received / sent (msg/s)",
        [
            broker_query(["received", "received, every packet"], True),
            broker_query(["sent", "sent, every packet"], True),
        ],
        description="PUBLISH messages the broker received and sent (Mosquitto $SYS/broker/publish/messages/*, "
        "emqx_messages_*, nanomq_messages_*, vernemq_mqtt_publish_*), each rate the mean since the previous report. "
        "Mosquitto's received leaves out QoS 2 (brokers/mosquitto/broker.toml received_qos); it also counts every "
        "packet type ($SYS/broker/messages/*)."
        + SYS_NOTE
        + ", so a window of "
        + SYS_QUIET
        + " with other $SYS topics but not this one shows 0.",
        line=COVERS_BEFORE,
    )
    br.panel(
        "Connected clients and stored messages",
        [broker_query(["connected", "stored messages"], False)],
        description="Clients connected (Mosquitto $SYS/broker/clients/connected, emqx_connections_count, "
        "nanomq_connections_count, vernemq_active_mqtt_connections); Mosquitto also says how many messages its "
        "store holds ($SYS/broker/store/messages/count)." + SYS_NOTE + ".",
        line=HOLDS,
    )
    br.panel(
        "Messages dropped (msg/s)",
        [broker_query(["dropped"], True)],
        description="Messages the broker dropped, in its own meaning: Mosquitto $SYS/broker/publish/messages/dropped "
        "(queues full), emqx_messages_dropped and nanomq_messages_dropped (no subscriber matched), "
        "vernemq_queue_message_drop (queue full)."
        + SYS_NOTE
        + ", and not at all before the first drop: a window of "
        + SYS_QUIET
        + " with other $SYS topics but no drop shows 0.",
        line=COVERS_BEFORE,
    )

    host = Dashboard(
        "mqtt-bench-host",
        "Host (node-exporter)",
        "The broker host, from node_exporter: natively the host itself; under compose node-exporter sees the "
        "host's CPU and memory but its own container's network.",
    )
    host.panel(
        "CPU by mode (% of one core)",
        [
            where(ff.prometheus(ff.NODE_EXPORTER, "node_cpu_seconds_total", HOST))
            + "  |> derivative(unit: 1s, nonNegative: true)\n"
            + window("mean")
            + '\n  |> group(columns: ["mode"])\n'
            # Every CPU's window ends at the same times: their sum per mode.
            + window("sum")
            + "\n  |> map(fn: (r) => ({r with _value: r._value * 100.0}))"
            + named("r.mode")
        ],
        "percent",
        description="Seconds per second in each mode, summed over the CPUs: 200 % is two cores.",
    )
    host.panel(
        "Memory available / total",
        [node("node_memory_MemAvailable_bytes", text("available")), node("node_memory_MemTotal_bytes", text("total"))],
        "bytes",
    )
    host.panel(
        "Network received (bytes/s)",
        [network("node_network_receive_bytes_total", "rx_bytes", "received")],
        "Bps",
        description="Every interface that ever carried a byte; lo carries the benchmark when broker and generator "
        "share the host. Under compose, also the broker container's own network (node-exporter's interfaces are its "
        "container's there).",
    )
    host.panel(
        "Network sent (bytes/s)",
        [network("node_network_transmit_bytes_total", "tx_bytes", "sent")],
        "Bps",
        description="Every interface that ever carried a byte; lo carries the benchmark when broker and generator "
        "share the host. Under compose, also the broker container's own network (node-exporter's interfaces are its "
        "container's there).",
    )
    host.panel("Load", [node("node_load1", text("1 min")), node("node_load5", text("5 min"))])
    host.panel(
        "TCP sockets in use / established",
        [node("node_sockstat_TCP_inuse", text("in use")), node("node_netstat_Tcp_CurrEstab", text("established"))],
    )
    host.panel("File descriptors allocated", [node("node_filefd_allocated", text("allocated"))])

    gen = Dashboard(
        "mqtt-bench-generator",
        "Load generator health",
        "Is the generator keeping up? Achieved against target rate, send lag, reconnects.",
    )
    gen.panel(
        "Achieved vs target rate (msg/s)",
        [k6_rate(ff.PUBLISHES, "achieved"), k6_gauge(ff.TARGET_RATE, text("target"), fn="mean")],
        line={"target": HOLDS},
    )
    gen.panel("Send lag p50 / p99 (ms): intended -> actual send", [k6_stats(ff.SEND_LAG_1S, ["p50", "p99"])], "ms")
    gen.panel(
        "Worst achieved / target ratio",
        [WORST_RATIO],
        "percentunit",
        "stat",
        w=8,
        h=5,
        description=f"The lowest achieved / target rate ratio: green from {RATE_REACHED:.0%} (a step that sends less "
        "on schedule fails the run), red below. With a capacity search chosen in run_id: the worst over all its "
        "trials.",
        decimals=2,
        colours=RATIO_COLOURS,
    )
    count_stat(gen, "Reconnects", ff.RECONNECTS, "Reconnects: green at 0." + SEARCH_SUM, w=8)
    count_stat(gen, "Errors", ff.ERRORS, "Errors: green at 0." + SEARCH_SUM, w=8)
    gen.panel("Latency from intended send p99 (ms)", [k6_stats(ff.LATENCY_INTENDED_1S, ["p99"])], "ms")
    gen.panel(
        "Step rate (msg/s)",
        [k6_gauge(ff.STEP_RATE, text("step rate"))],
        description="The rate each step asks for, from its start to the next (0 after the last).",
        line=HOLDS,
    )
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
