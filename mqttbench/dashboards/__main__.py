#!/usr/bin/env python3
"""Generates grafana/dashboards/*.json: the panels of every dashboard, their
colours and shapes (grafana_panels.py), from the queries of grafana_flux.py
(and grafana_broker_queries.py for Broker internals), so that the dashboards
stay consistent. Broker internals and Host are here; Benchmark overview is
grafana_overview.py's, Load generator health grafana_generator.py's. Run
after editing; the tests check that the committed JSON is this script's
output, run every query against a real InfluxDB and check what Grafana
makes of each answer (tests/grafana_frames.py).
Usage: python3 -m mqttbench.dashboards [--check]"""

import json

from mqttbench import ROOT
from mqttbench import flux_filters as ff
from mqttbench.dashboards import disk as grafana_disk
from mqttbench.dashboards.broker_queries import SYS_QUIET, broker_query, series_described
from mqttbench.dashboards.flux import HOST, named, network, node, text, where, window
from mqttbench.dashboards.generator import generator
from mqttbench.dashboards.history import history_board
from mqttbench.dashboards.overview import overview
from mqttbench.dashboards.panels import COVERS_BEFORE, HOLDS, SYS_NOTE, Dashboard
from mqttbench.generated import sync

OUT = ROOT / "grafana" / "dashboards"


def dashboards():
    br = Dashboard(
        "mqtt-bench-broker",
        "Broker internals",
        "What the chosen broker reports about itself: one row, repeated by the broker variable.",
    )
    br.row("$broker", repeat="broker")
    br.panel(
        "Messages received / sent (msg/s)",
        [
            broker_query(["received", "packets received (every type)"], True),
            broker_query(["sent", "packets sent (every type)"], True),
        ],
        description="PUBLISH messages the broker received and sent, each rate the mean since the previous report: "
        + series_described(["received", "sent"])
        + ". Where a broker also counts packets of every type ("
        + series_described(["packets received (every type)", "packets sent (every type)"])
        + "): a QoS 1 message is a PUBLISH and a PUBACK, so packets run at about twice the messages (QoS 2: four "
        "packets), plus CONNECT, SUBSCRIBE, PINGREQ and their answers."
        + SYS_NOTE
        + ", so a window of "
        + SYS_QUIET
        + " with other $SYS topics but not this one shows 0.",
        line=COVERS_BEFORE,
    )
    br.panel(
        "Connected clients and stored messages",
        [broker_query(["connected", "stored messages"], False)],
        description="Clients connected, the benchmark's clients (a $SYS count less Telegraf's own $SYS "
        "subscriber), 0 when none is connected: "
        + series_described(["connected"])
        + ". Messages the broker holds: "
        + series_described(["stored messages"])
        + "."
        + SYS_NOTE
        + ".",
        line=HOLDS,
    )
    br.panel(
        "Messages dropped (msg/s)",
        [broker_query(["dropped"], True)],
        description="Messages the broker dropped, in its own meaning: "
        + series_described(["dropped"])
        + "."
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

    return [overview(), br, host, generator(), history_board()]


def render():
    return {f"{d.uid.removeprefix('mqtt-bench-')}.json": json.dumps(d.json(), indent=2) + "\n" for d in dashboards()}


def main():
    sync(files(), "dashboards")


def files():
    """The provisioned dashboards' files: {path: text}."""
    rendered = render()
    names = {
        "overview.json": "benchmark-overview.json",
        "broker.json": "broker-internals.json",
        "host.json": "host.json",
        "generator.json": "load-generator.json",
        "history.json": "history.json",
    }
    return {OUT / names[name]: text for name, text in rendered.items()}


if __name__ == "__main__":
    main()
