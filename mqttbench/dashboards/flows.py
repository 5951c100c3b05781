"""A run's flows on the Benchmark overview (grafana_overview.py): the
`flow` variable and the series per flow. Every group's counters carry its
flow (k6/lib/run.js: a composite's parts, the background, a scenario of one
flow under its name), and the extension pushes each flow's own pub-to-sub
latency per second (mqtt_flow_latency_1s, tags flow and stat), so that a
part is read on its own, as its result and report give it."""

from mqttbench import flux_filters as ff
from mqttbench.dashboards.flux import PER_SECOND, RUN, named, text, whole_windows
from mqttbench.dashboards.variables import variable

# The flows chosen, as Grafana writes a multi-value variable for a regex:
# (p2p|fanin), or the allValue for All.
FLOWS = "${flow:regex}"
CHOSEN = ff.flows(FLOWS)

# The flows of the run chosen in run_id: every flow connects its clients,
# the background too. All by default; several may be chosen.
FLOW_VARIABLE = variable("flow", ["flow"], ff.CONNECTS, ff.run(RUN)) | {
    "multi": True,
    "includeAll": True,
    "allValue": ".*",
    "current": {"text": ["All"], "value": ["$__all"]},
}


def k6_rate_by_flow(name, label):
    """msg/s of a k6 counter per flow chosen, in the windows wholly inside
    each flow's traffic: the same windows as the run's TPS, a part apart."""
    return (
        whole_windows(f"{ff.k6_value(name, RUN)} and {CHOSEN}", "sum", by=("flow",))
        + "\n"
        + PER_SECOND.rstrip("\n")
        + named(f"r.flow + {text(' ' + label)}")
    )


def flow_latency(stats):
    """The per-second pub-to-sub latency stats of each flow chosen, the
    highest of a window's seconds (as the run's latency panel draws them),
    in the windows wholly inside the flow's latency points, named by flow
    and stat (p2p p99): one flow's latency is never read off another's."""
    return whole_windows(
        f"{ff.k6_stats(ff.FLOW_LATENCY_1S, RUN, stats)} and {CHOSEN}", "max", by=("flow", "stat"), combine="max"
    ) + named('r.flow + " " + r.stat')
