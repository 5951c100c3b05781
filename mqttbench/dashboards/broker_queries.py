"""The Broker internals dashboard's queries (mqttbench/dashboards/__main__.py):
each broker's series, from Mosquitto's $SYS topics or a broker's Prometheus
exposition, as rates and gauges named for their legend."""

from mqttbench import flux_filters as ff
from mqttbench.brokers import facts as broker_facts
from mqttbench.dashboards.flux import HOST, SYS_INTERVAL_S, named, text, where, window
from mqttbench.flux_filters import measurement


# One row, repeated by the broker variable, of panels every broker fills:
# each series is named in its broker.toml ([metrics.series], under the name
# of its legend), ("sys", topic) for a $SYS topic (Mosquitto's), ("prom",
# series) for a broker's Prometheus exposition. A panel filters on
# ${broker}, so only the chosen broker's series have data.
def _broker_series():
    series = {}
    for broker in broker_facts.names():
        m = broker_facts.load(broker)["metrics"]
        kind = "sys" if m["measurement"] == ff.MOSQUITTO_SYS else "prom"
        for name, s in m["series"].items():
            series.setdefault(name, {})[broker] = (kind, s)
    return series


BROKER_SERIES = _broker_series()


def _meanings(facts):
    """What each series counts in the broker's own meaning ([metrics.meaning],
    and [counters] received_qos where its received counts fewer QoS)."""
    m, counters = facts["metrics"], facts.get("counters", {})
    meaning = dict(m.get("meaning", {}))
    unknown = set(meaning) - set(m["series"])
    if unknown:
        raise ValueError(f"{facts['name']}: [metrics.meaning] names no series of [metrics.series]: {sorted(unknown)}")
    if "received_qos" in counters and counters.get("received") == m["series"].get("received"):
        qos = " and ".join(map(str, counters["received_qos"]))
        meaning["received"] = f"QoS {qos} only: [counters] received_qos"
    return meaning


def series_described(names):
    """Each broker's series of these legend names, as its broker.toml names
    them, for a panel's description: "<its name> <series> (<meaning>), ...;
    <the next broker's> ..." (a folder that repeats another's, once)."""
    entries = []
    for broker in broker_facts.names():
        facts = broker_facts.load(broker)
        series, meaning = facts["metrics"]["series"], _meanings(facts)
        named = [series[n] + (f" ({meaning[n]})" if n in meaning else "") for n in names if n in series]
        if named:
            entries.append(f"{facts['name']} {', '.join(named)}")
    return "; ".join(dict.fromkeys(entries))


# Mosquitto counts among its connected clients Telegraf's own $SYS
# subscriber, one per mqtt_consumer input of the Telegraf config its
# broker.toml names (one Telegraf per stack): "connected" leaves them out,
# the benchmark's clients alone, as the other brokers' counts (scraped over
# HTTP) are.
SYS_SUBSCRIBERS = max(
    (broker_facts.BROKERS.parent / broker_facts.load(b)["metrics"]["telegraf"])
    .read_text()
    .count("[[inputs.mqtt_consumer]]")
    for b in broker_facts.names()
    if broker_facts.load(b)["metrics"]["measurement"] == ff.MOSQUITTO_SYS
)
# A window this long with other $SYS topics but not a counter's means the
# counter did not change (Mosquitto publishes it when changed, every
# sys_interval): its rate there is 0.
SYS_QUIET = f"{2 * SYS_INTERVAL_S}s"


def _distinct(name, kind):
    """The series of that name and kind, each once (brokers may share one)."""
    return list(dict.fromkeys(s for k, s in BROKER_SERIES[name].values() if k == kind))


def sys_topic(name):
    (topic,) = _distinct(name, "sys")  # every $SYS broker's is the same topic: one query serves them
    return topic


def prom_names(name):
    return _distinct(name, "prom")


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
    the day before the time range on (the broker says a value once); the
    count of clients less Telegraf's own (SYS_SUBSCRIBERS)."""
    less = (
        f"\n  |> map(fn: (r) => ({{r with _value: if r._value > {SYS_SUBSCRIBERS}.0 then r._value - "
        f"{SYS_SUBSCRIBERS}.0 else 0.0}}))"
        if name == "connected"
        else ""
    )
    return (
        "from(bucket: v.defaultBucket)\n"
        "  |> range(start: date.sub(d: 1d, from: v.timeRangeStart), stop: v.timeRangeStop)\n"
        f"  |> filter(fn: (r) => {ff.mosquitto_sys(sys_topic(name), HOST)})\n"
        "  |> map(fn: (r) => ({r with _time: if r._time < v.timeRangeStart then v.timeRangeStart else r._time}))\n"
        "  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n"
        + window("last", empty=True)
        + "\n  |> fill(usePrevious: true)\n  |> filter(fn: (r) => exists r._value)"
        + less
    )


def broker_query(names, rate):
    """Series of the broker row, each named as given, in one query: the
    chosen broker's own series for each name, as a rate (counters) or as
    it is (gauges). Every branch filters on ${broker}: only the chosen
    broker's have data, and each query has data for every broker."""
    imports, statements, results = set(), [], []
    for name in names:
        if _distinct(name, "sys"):
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
