#!/usr/bin/env python3
"""Generates grafana/dashboards/*.json: the panels of every dashboard, their
colours and shapes, from the queries of grafana_flux.py (and
grafana_broker_queries.py for Broker internals), so that the dashboards stay
consistent. Run after editing; the tests check that the committed JSON is
this script's output, run every query against a real InfluxDB and check what
Grafana makes of each answer (tests/grafana_frames.py).
Usage: scripts/grafana_dashboards.py [--check]"""

import json

import flux_filters as ff
import grafana_disk
from generated import sync
from grafana_broker_queries import SYS_QUIET, broker_query
from grafana_flux import (
    ANNOTATIONS,
    BROKER_CPU,
    BROKER_MEM,
    DELIVERY,
    DS,
    HOST,
    HOST_CPU,
    HOST_MEM,
    RATE_REACHED,
    ROLE_NAME,
    ROOT,
    SYS_INTERVAL_S,
    VARIABLES,
    WORST_RATIO,
    k6_gauge,
    k6_rate,
    k6_rate_by_flow,
    k6_stats,
    k6_sum,
    named,
    network,
    node,
    text,
    where,
    window,
)

OUT = ROOT / "grafana" / "dashboards"
# Dashboard JSON schema version. 41 is at or below the latest version of
# Grafana 12.2.1's migrator (41 or 42: see tests/test_grafana_upstream.py),
# and the migrations 40-42 change nothing in these dashboards (refresh is a
# string, no timepicker.time_options, no hideFrom overrides).
SCHEMA_VERSION = 41


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
    ov.panel(
        "Messages by part (msg/s)",
        [k6_rate_by_flow(ff.PUBLISHES, "published"), k6_rate_by_flow(ff.RECEIVES, "received")],
        description="Each flow's published and received msg/s (the k6 counters' flow tag): a composite's parts "
        "(p2p, fanout, fanin) apart. Each part's latency and verdict are in its result and report (a table per "
        "part); the per-second latency here is the run's.",
    )
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
    grafana_disk.overview_panels(ov)

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
    grafana_disk.host_panels(host)

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
