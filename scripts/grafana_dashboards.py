#!/usr/bin/env python3
"""Generates grafana/dashboards/*.json: one place for the Flux queries of all
panels, so that the dashboards stay consistent. Run after editing; the tests
check that the committed JSON is this script's output and run every query
against a real InfluxDB.   Usage: scripts/grafana_dashboards.py [--check]"""
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "grafana" / "dashboards"
DS = {"type": "influxdb", "uid": "mqtt-bench-influxdb"}
RANGE = "from(bucket: v.defaultBucket)\n  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)\n"
RUN = 'r.run_id == "${run_id}"'
HOST = 'r.broker == "${broker}"'
PER_SECOND = ('  |> map(fn: (r) => ({r with _value: float(v: r._value) / '
              '(float(v: int(v: v.windowPeriod)) / 1000000000.0)}))\n')


def k6_rate(measurement, label):
    """msg/s of a k6 counter (pushed as per-second deltas) over all its series."""
    return (RANGE + f'  |> filter(fn: (r) => r._measurement == "{measurement}" and {RUN} and r._field == "value")\n'
            '  |> group(columns: ["_measurement"])\n'
            '  |> aggregateWindow(every: v.windowPeriod, fn: sum, createEmpty: false)\n' + PER_SECOND +
            f'  |> set(key: "_field", value: "{label}")')


def k6_sum(measurement):
    return (RANGE + f'  |> filter(fn: (r) => r._measurement == "{measurement}" and {RUN} and r._field == "value")\n'
            '  |> group(columns: ["_measurement"])\n  |> sum()')


def k6_stats(measurement, stats, fn="max"):
    cond = " or ".join(f'r.stat == "{s}"' for s in stats)
    return (RANGE + f'  |> filter(fn: (r) => r._measurement == "{measurement}" and {RUN} and ({cond}))\n'
            '  |> group(columns: ["stat"])\n'
            f'  |> aggregateWindow(every: v.windowPeriod, fn: {fn}, createEmpty: false)')


def k6_gauge(measurement, group="_measurement", fn="last"):
    return (RANGE + f'  |> filter(fn: (r) => r._measurement == "{measurement}" and {RUN} and r._field == "value")\n'
            f'  |> group(columns: ["{group}"])\n'
            f'  |> aggregateWindow(every: v.windowPeriod, fn: {fn}, createEmpty: false)')


def host_field(measurement, field, extra="", fn="mean"):
    return (RANGE + f'  |> filter(fn: (r) => r._measurement == "{measurement}" and r._field == "{field}" and {HOST}{extra})\n'
            f'  |> aggregateWindow(every: v.windowPeriod, fn: {fn}, createEmpty: false)')


def prom(field, source, derive=False, group=None):
    q = RANGE + (f'  |> filter(fn: (r) => r._measurement == "prometheus" and r.source == "{source}" '
                 f'and r._field == "{field}" and {HOST})\n')
    if derive:
        q += '  |> derivative(unit: 1s, nonNegative: true)\n'
    if group is not None:
        q += f'  |> group(columns: {json.dumps(group)})\n'
    return q + '  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)'


def sys_topic(topic, derive=False):
    q = RANGE + (f'  |> filter(fn: (r) => r._measurement == "mosquitto_sys" and r.topic == "{topic}" and {HOST})\n')
    if derive:
        q += '  |> derivative(unit: 1s, nonNegative: true)\n'
    return q + '  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)'


HOST_CPU = host_field("cpu", "usage_idle", ' and r.cpu == "cpu-total"') + \
    '\n  |> map(fn: (r) => ({r with _value: 100.0 - r._value, _field: "host CPU (1 - idle)"}))'
# The broker process natively (procstat) or its container (docker input).
BROKER_CPU = (RANGE + '  |> filter(fn: (r) => ' + HOST + ' and ((r._measurement == "procstat" and r._field == "cpu_usage")'
              ' or (r._measurement == "docker_container_cpu" and r._field == "usage_percent" and r.cpu == "cpu-total")))\n'
              '  |> group(columns: ["_measurement"])\n'
              '  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)\n'
              '  |> set(key: "_field", value: "broker process CPU")')
BROKER_MEM = (RANGE + '  |> filter(fn: (r) => ' + HOST + ' and ((r._measurement == "procstat" and r._field == "memory_rss")'
              ' or (r._measurement == "docker_container_mem" and r._field == "usage")))\n'
              '  |> group(columns: ["_measurement"])\n'
              '  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)\n'
              '  |> set(key: "_field", value: "broker RSS")')
DELIVERY = (RANGE + f'  |> filter(fn: (r) => {RUN} and r._field == "value" and '
            '(r._measurement == "mqtt_receives" or r._measurement == "mqtt_lost" or r._measurement == "mqtt_duplicates"))\n'
            '  |> group()\n'
            '  |> reduce(identity: {rec: 0.0, lost: 0.0, dup: 0.0}, fn: (r, accumulator) => ({\n'
            '      rec: accumulator.rec + (if r._measurement == "mqtt_receives" then float(v: r._value) else 0.0),\n'
            '      lost: accumulator.lost + (if r._measurement == "mqtt_lost" then float(v: r._value) else 0.0),\n'
            '      dup: accumulator.dup + (if r._measurement == "mqtt_duplicates" then float(v: r._value) else 0.0)}))\n'
            '  |> map(fn: (r) => ({_value: if r.rec - r.dup + r.lost > 0.0 then 100.0 * (r.rec - r.dup) / (r.rec - r.dup + r.lost) else 100.0}))')


def variable(name, tag, measurement):
    q = ('import "influxdata/influxdb/schema"\n'
         f'schema.tagValues(bucket: v.defaultBucket, tag: "{tag}", '
         f'predicate: (r) => r._measurement == "{measurement}", start: -30d)')
    return {"name": name, "label": name, "type": "query", "datasource": DS, "query": q, "definition": q,
            "refresh": 2, "sort": 2 if name == "run_id" else 1, "current": {}, "options": [], "hide": 0,
            "includeAll": False, "multi": False}


VARIABLES = [variable("run_id", "run_id", "mqtt_publishes"), variable("broker", "broker", "cpu"),
             variable("scenario", "scenario", "mqtt_connects")]
ANNOTATIONS = [{
    "name": "Run steps", "datasource": DS, "enable": True, "iconColor": "orange",
    "target": {"refId": "Anno", "query": RANGE + f'  |> filter(fn: (r) => r._measurement == "mqtt_step_rate" and {RUN})'},
}]


class Dashboard:
    def __init__(self, uid, title, description):
        self.uid, self.title, self.description = uid, title, description
        self.panels, self.x, self.y = [], 0, 0

    def panel(self, title, queries, unit="short", kind="timeseries", w=12, h=8, description=""):
        if self.x + w > 24:
            self.x, self.y = 0, self.y + h
        targets = [{"refId": chr(65 + i), "datasource": DS, "query": q} for i, q in enumerate(queries)]
        p = {"id": len(self.panels) + 1, "type": kind, "title": title, "description": description,
             "datasource": DS, "gridPos": {"h": h, "w": w, "x": self.x, "y": self.y}, "targets": targets,
             "fieldConfig": {"defaults": {"unit": unit}, "overrides": []}, "options": {}}
        if kind == "stat":
            p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                            "colorMode": "value", "graphMode": "none", "textMode": "value_and_name"}
        self.panels.append(p)
        self.x += w
        return self

    def json(self):
        return {"id": None, "uid": self.uid, "title": self.title, "description": self.description,
                "tags": ["mqtt-bench"], "timezone": "browser", "editable": True, "schemaVersion": 39, "version": 1,
                "refresh": "5s", "time": {"from": "now-30m", "to": "now"}, "graphTooltip": 1,
                "templating": {"list": VARIABLES}, "annotations": {"list": ANNOTATIONS}, "panels": self.panels}


def dashboards():
    ov = Dashboard("mqtt-bench-overview", "Benchmark overview",
                   "TPS, pub-to-sub latency, success, connections, host and broker CPU and memory of one run.")
    ov.panel("TPS in and out (msg/s)", [k6_rate("mqtt_publishes", "in (published)"),
                                        k6_rate("mqtt_receives", "out (received)")], "short")
    ov.panel("Pub-to-sub latency p50 / p99 (ms)", [k6_stats("mqtt_latency_1s", ["p50", "p99"])], "ms")
    ov.panel("Delivery success (%)", [DELIVERY], "percent", "stat", w=6, h=5)
    ov.panel("Lost messages", [k6_sum("mqtt_lost")], "short", "stat", w=6, h=5)
    ov.panel("Connect failures", [k6_sum("mqtt_connect_failures")], "short", "stat", w=6, h=5)
    ov.panel("Publish failures", [k6_sum("mqtt_publish_failures")], "short", "stat", w=6, h=5)
    ov.panel("Connections (generator)", [k6_gauge("mqtt_connections", "role")], "short")
    ov.panel("Host CPU (1 - idle) and broker CPU (%)", [HOST_CPU, BROKER_CPU], "percent")
    ov.panel("Host memory used (%)", [host_field("mem", "used_percent")], "percent")
    ov.panel("Broker memory (RSS)", [BROKER_MEM], "bytes")

    br = Dashboard("mqtt-bench-broker", "Broker internals", "What each broker reports about itself.")
    br.panel("Mosquitto: messages received / sent (msg/s)",
             [sys_topic("$SYS/broker/messages/received", True), sys_topic("$SYS/broker/messages/sent", True)])
    br.panel("Mosquitto: clients connected", [sys_topic("$SYS/broker/clients/connected")])
    br.panel("Mosquitto: publish messages dropped (msg/s)", [sys_topic("$SYS/broker/publish/messages/dropped", True)])
    br.panel("Mosquitto: stored messages and heap", [sys_topic("$SYS/broker/store/messages/count"),
                                                    sys_topic("$SYS/broker/heap/current")])
    br.panel("EMQX: messages received / sent (msg/s)", [prom("emqx_messages_received", "emqx", True),
                                                       prom("emqx_messages_sent", "emqx", True)])
    br.panel("EMQX: connections and dropped", [prom("emqx_connections_count", "emqx"),
                                               prom("emqx_messages_dropped", "emqx", True)])
    br.panel("NanoMQ: messages received / sent (msg/s)", [prom("nanomq_messages_received", "nanomq", True),
                                                         prom("nanomq_messages_sent", "nanomq", True)])
    br.panel("NanoMQ: connections and dropped", [prom("nanomq_connections_count", "nanomq"),
                                                 prom("nanomq_messages_dropped", "nanomq", True)])
    br.panel("VerneMQ: publishes received / sent (msg/s)", [prom("mqtt_publish_received", "vernemq", True),
                                                           prom("mqtt_publish_sent", "vernemq", True)])
    br.panel("VerneMQ: connections and queue drops", [prom("active_mqtt_connections", "vernemq"),
                                                      prom("queue_message_drop", "vernemq", True)])

    host = Dashboard("mqtt-bench-host", "Host (node-exporter)", "The broker host, from node_exporter.")
    host.panel("CPU by mode (% of one core)", [prom("node_cpu_seconds_total", "node_exporter", True, ["mode"]) +
                                               '\n  |> map(fn: (r) => ({r with _value: r._value * 100.0}))'], "percent")
    host.panel("Memory available / total", [prom("node_memory_MemAvailable_bytes", "node_exporter"),
                                            prom("node_memory_MemTotal_bytes", "node_exporter")], "bytes")
    host.panel("Load", [prom("node_load1", "node_exporter"), prom("node_load5", "node_exporter")])
    host.panel("Network received / sent (bytes/s)",
               [prom("node_network_receive_bytes_total", "node_exporter", True, ["device"]),
                prom("node_network_transmit_bytes_total", "node_exporter", True, ["device"])], "Bps")
    host.panel("TCP sockets in use / established", [prom("node_sockstat_TCP_inuse", "node_exporter"),
                                                    prom("node_netstat_Tcp_CurrEstab", "node_exporter")])
    host.panel("File descriptors allocated", [prom("node_filefd_allocated", "node_exporter")])

    gen = Dashboard("mqtt-bench-generator", "Load generator health",
                    "Is the generator keeping up? Achieved against target rate, send lag, reconnects.")
    gen.panel("Achieved vs target rate (msg/s)", [k6_rate("mqtt_publishes", "achieved"),
                                                  k6_gauge("mqtt_target_rate", fn="mean")])
    gen.panel("Send lag p50 / p99 (ms): intended -> actual send", [k6_stats("mqtt_send_lag_1s", ["p50", "p99"])], "ms")
    gen.panel("Worst achieved / target ratio", [k6_gauge("mqtt_rate_achieved_ratio", fn="min")], "percentunit", "stat", w=8, h=5)
    gen.panel("Reconnects", [k6_sum("mqtt_reconnects")], "short", "stat", w=8, h=5)
    gen.panel("Errors", [k6_sum("mqtt_errors")], "short", "stat", w=8, h=5)
    gen.panel("Latency from intended send p99 (ms)", [k6_stats("mqtt_latency_intended_1s", ["p99"])], "ms")
    gen.panel("Step rate (msg/s)", [k6_gauge("mqtt_step_rate")])
    return [ov, br, host, gen]


def render():
    return {f"{d.uid.removeprefix('mqtt-bench-')}.json": json.dumps(d.json(), indent=2) + "\n" for d in dashboards()}


def main():
    files = render()
    names = {"overview.json": "benchmark-overview.json", "broker.json": "broker-internals.json",
             "host.json": "host.json", "generator.json": "load-generator.json"}
    stale = []
    for name, text in files.items():
        path = OUT / names[name]
        if "--check" in sys.argv:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
    if stale:
        sys.exit(f"stale dashboards (run scripts/grafana_dashboards.py): {', '.join(stale)}")


if __name__ == "__main__":
    main()
