"""The Benchmark overview dashboard (mqttbench/dashboards/__main__.py renders
it): one run's, or a capacity search's, rates, latency, success and
failure counts, connections, and the broker host's and process's CPU,
memory and disk."""

from mqttbench import flux_filters as ff
from mqttbench.dashboards import disk as grafana_disk
from mqttbench.dashboards.broker_queries import broker_query, series_described
from mqttbench.dashboards.flows import FLOW_VARIABLE, flow_latency, k6_rate_by_flow
from mqttbench.dashboards.flux import (
    BROKER_CPU,
    BROKER_CPU_NAME,
    BROKER_MEM,
    DELIVERY,
    HOST_CPU,
    HOST_MEM,
    ROLE_NAME,
    k6_gauge,
    k6_rate,
    k6_stats,
)
from mqttbench.dashboards.panels import DELIVERY_COLOURS, HOLDS, SEARCH_SUM, SYS_NOTE, Dashboard, count_stat, right_axis
from mqttbench.dashboards.variables import VARIABLES

HEAP = "broker heap"


def overview():
    ov = Dashboard(
        "mqtt-bench-overview",
        "Benchmark overview",
        "TPS, pub-to-sub latency, success, connections, host and broker CPU and memory of one run, or of every "
        "trial of a capacity search (run_id lists both; the Capacity trials annotation marks each trial). "
        "flow chooses the parts the panels by part draw.",
        variables=VARIABLES + [FLOW_VARIABLE],
    )
    ov.panel(
        "TPS in and out (msg/s)",
        [k6_rate(ff.PUBLISHES, "published"), k6_rate(ff.RECEIVES, "received")],
        description="Messages published and received per second, in the windows wholly inside the run: the first "
        "and the last, which hold part of a second of the run only, are left out rather than drawn low or high.",
    )
    ov.panel(
        "Messages by part (msg/s)",
        [k6_rate_by_flow(ff.PUBLISHES, "published"), k6_rate_by_flow(ff.RECEIVES, "received")],
        description="Each flow's published and received msg/s (the k6 counters' flow tag): a composite's parts "
        "(p2p, fanout, fanin) apart, those chosen in flow; in the windows wholly inside each part's traffic.",
    )
    ov.panel(
        "Pub-to-sub latency p50 / p99 (ms)",
        [k6_stats(ff.LATENCY_1S, ["p50", "p99"])],
        "ms",
        description="The run's: every flow's messages together (a composite's parts apart: by part, beside).",
    )
    ov.panel(
        "Pub-to-sub latency by part p50 / p99 (ms)",
        [flow_latency(["p50", "p99"])],
        "ms",
        description="Each flow's own pub-to-sub latency (the extension's histogram per flow, whose whole-run "
        "figures are the part's in its result and report), those chosen in flow: the highest p50 and p99 of a "
        "window's seconds, in the windows wholly inside the part's traffic. The background sends nothing and "
        "has none.",
    )
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
    ov.panel(
        "Host CPU and broker CPU (%)",
        [HOST_CPU, BROKER_CPU],
        "percent",
        description="Two bases, two axes. Left: the host's CPU (1 - idle) as a share of all its cores, 100 % "
        "when every core is busy. Right: the broker process's as a share of one core, as the report gives it: "
        "200 % is two cores busy.",
        axis="host: % of all cores",
        series={BROKER_CPU_NAME: right_axis("broker: % of one core")},
    )
    ov.panel("Host memory used (%)", [HOST_MEM], "percent")
    ov.panel(
        "Broker memory",
        [BROKER_MEM, broker_query([HEAP], rate=False)],
        "bytes",
        description="Left: the broker process's resident memory (RSS). Right, on an axis of its own (a heap of "
        "tens of KB would lie flat on RSS's MB): the heap the broker reports itself, where it does: "
        + series_described([HEAP])
        + "."
        + SYS_NOTE
        + ".",
        line={HEAP: HOLDS},
        axis="broker RSS",
        series={HEAP: right_axis("broker heap (its own report)")},
    )
    grafana_disk.overview_panels(ov)
    return ov
