"""The Flux of the provisioned dashboards (mqttbench/dashboards/__main__.py
renders them): the queries' building blocks, the names their series show
in a legend, the k6, host and broker-process queries (the template
variables and annotations: grafana_variables.py). Their filters and measurement names come
from flux_filters.py, which the report uses too."""

import json

from mqttbench import flux_filters as ff
from mqttbench import verdict_policy
from mqttbench.brokers import facts as broker_facts
from mqttbench.flux_filters import measurement

DS = {"type": "influxdb", "uid": "mqtt-bench-influxdb"}
RANGE = "from(bucket: v.defaultBucket)\n  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n"
# Grafana's template variables, bound when a panel is drawn. run_id holds a
# run id or a capacity search's id (ff.run(): then every trial of the search).
RUN = "${run_id}"
HOST = "${broker}"
SCENARIO = "${scenario}"
PER_SECOND = (
    "  |> map(fn: (r) => ({r with _value: float(v: r._value) / (float(v: int(v: v.windowPeriod)) / 1000000000.0)}))\n"
)
# The share of its target rate a step must reach: the verdict package's
# (mqttbench/verdict_policy.py, generated from it).
RATE_REACHED = verdict_policy.RATE_REACHED
# A $SYS broker (Mosquitto) publishes each topic every sys_interval, and
# only when its value changed: the longest interval of those brokers' configs
# (brokers/<name>/broker.toml [metrics] every).
SYS_INTERVAL_S = max(
    broker_facts.every(b) or 0
    for b in broker_facts.names()
    if broker_facts.load(b)["metrics"]["measurement"] == ff.MOSQUITTO_SYS
)


def k6(predicate):
    """A k6 series of the chosen scenario: k6/lib/scenario.js tags every
    sample with its scenario's name, and the run_id variable lists the runs
    of the scenario chosen."""
    return f"{predicate} and {ff.tag('scenario', SCENARIO)}"


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


def whole_windows(predicate, fn, by=(), combine="sum"):
    """The windows of a k6 metric (the points predicate selects) that lie
    wholly inside its run, fn applied to each, the runs' windows (the
    trials of a search) combined per time by combine: one table of _time
    and _value, or one per value of the tags by keeps apart (a part's). The
    extension pushes every second what the second before it held, and once
    more when it closes, so the window holding a run's last push covers
    less or more than a window (a run at 1,000 msg/s drew 1,205 msg/s
    published and a target of 333 there), and the one holding its first
    began before the run. A window must start at or after the run's (or
    the part's) first non-zero point and end at or before its last (zeros:
    a meter's start, a closing subscriber's publishes, the target after the
    last step)."""
    keys = json.dumps(["run_id", *by])
    return (
        "points = "
        + where(k6(predicate))
        + f"  |> group(columns: {keys})\n"
        + "span = points\n  |> filter(fn: (r) => float(v: r._value) > 0.0)\n"
        + "  |> reduce(identity: {first: 0, last: 0}, fn: (r, accumulator) => ({\n"
        + "      first: if accumulator.first == 0 or int(v: r._time) < accumulator.first then int(v: r._time)"
        + " else accumulator.first,\n"
        + "      last: if int(v: r._time) > accumulator.last then int(v: r._time) else accumulator.last}))\n"
        + "windows = points\n"
        + window(fn)
        + f"\njoin(tables: {{w: windows, s: span}}, on: {keys})\n"
        # aggregateWindow stamps a window with its end (_time).
        + "  |> filter(fn: (r) => int(v: r._time) - int(v: v.windowPeriod) >= r.first and int(v: r._time) <= r.last)\n"
        + f"  |> group(columns: {json.dumps(['_time', *by])})\n  |> {combine}()\n"
        + (f"  |> group(columns: {json.dumps(list(by))})\n" if by else "  |> group()\n")
        + '  |> sort(columns: ["_time"])'
    )


def k6_rate(name, label):
    """msg/s of a k6 counter (pushed as per-second deltas) over all its
    series, in the windows wholly inside the run."""
    return whole_windows(ff.k6_value(name, RUN), "sum") + "\n" + PER_SECOND.rstrip("\n") + named(text(label))


def k6_mean(name, label):
    """A k6 gauge's mean per window, in the windows wholly inside the run
    (a rate the run asks for: the target)."""
    return whole_windows(ff.k6_value(name, RUN), "mean") + named(text(label))


def stat_named(label):
    """The last step of a stat's query: its one value, under a name (a stat
    shows the value alone, but a name is what Grafana would show)."""
    return f'\n  |> keep(columns: ["_value"])\n  |> rename(columns: {{_value: {text(label)}}})'


def k6_sum(name, label):
    return where(k6(ff.k6_value(name, RUN))) + "  |> group()\n  |> sum()" + stat_named(label)


def k6_stats(name, stats, fn="max"):
    return where(k6(ff.k6_stats(name, RUN, stats))) + '  |> group(columns: ["stat"])\n' + window(fn) + named("r.stat")


def k6_gauge(name, label, group="_measurement", fn="last"):
    return where(k6(ff.k6_value(name, RUN))) + f'  |> group(columns: ["{group}"])\n' + window(fn) + named(label)


# What the extension tags each client with (k6/extension/load: role "pub",
# "sub", or "client" for connection-only scenarios), as a legend says it.
ROLE_NAME = 'if r.role == "pub" then "publishers" else if r.role == "sub" then "subscribers" else r.role + " clients"'


def node(field, label, derive=False):
    """A node_exporter series."""
    q = where(ff.prometheus(ff.NODE_EXPORTER, field, HOST))
    if derive:
        q += "  |> derivative(unit: 1s, nonNegative: true)\n"
    return q + window("mean") + named(label)


# ---- Host and broker process -------------------------------------------------
# Telegraf's cpu-total is a share of all the host's cores (100 % is every
# core busy), procstat's and docker's a share of one core (200 % is two
# cores busy): the names say which, and the panel draws each on its own axis.
HOST_CPU_NAME = "host CPU, % of all cores"
BROKER_CPU_NAME = "broker CPU, % of one core"
HOST_CPU = (
    where(ff.host_cpu("usage_idle", HOST))
    + window("mean")
    + "\n  |> map(fn: (r) => ({r with _value: 100.0 - r._value}))"
    + named(text(HOST_CPU_NAME))
)
HOST_MEM = where(ff.host_mem("used_percent", HOST)) + window("mean") + named(text("host memory used"))
BROKER_CPU = (
    where(ff.broker_cpu(HOST))
    + '  |> group(columns: ["_measurement"])\n'
    + window("mean")
    + named(text(BROKER_CPU_NAME))
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
        k6(
            f"{ff.run(RUN)} and {ff.field('value')} and "
            f"({measurement(ff.RECEIVES)} or {measurement(ff.LOST)} or {measurement(ff.DUPLICATES)})"
        )
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
    + where(k6(ff.k6_value(ff.RATE_ACHIEVED_RATIO, RUN)))
    + "  |> group()\n  |> min()\n"
    + "  |> map(fn: (r) => ({r with _value: math.floor(x: 10000.0 * r._value) / 10000.0}))"
    + stat_named("worst ratio")
)
