"""The Load generator health dashboard (mqttbench/dashboards/__main__.py
renders it): whether the generator kept up, its send lag, reconnects and
errors, so that a slow broker is not confused with a slow generator."""

from mqttbench import flux_filters as ff
from mqttbench.dashboards.flux import RATE_REACHED, WORST_RATIO, k6_gauge, k6_mean, k6_rate, k6_stats, text
from mqttbench.dashboards.panels import HOLDS, RATIO_COLOURS, SEARCH_SUM, Dashboard, count_stat


def generator():
    gen = Dashboard(
        "mqtt-bench-generator",
        "Load generator health",
        "Is the generator keeping up? Achieved against target rate, send lag, reconnects and how long they took.",
    )
    gen.panel(
        "Achieved vs target rate (msg/s)",
        [k6_rate(ff.PUBLISHES, "achieved"), k6_mean(ff.TARGET_RATE, "target")],
        description="Messages sent per second against the rate the steps ask for, in the windows wholly inside the "
        "run (the first and the last hold part of a second of it only, and are left out).",
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
    gen.panel(
        "Reconnect delay p50 / p99 / max (ms): drop -> back",
        [k6_gauge(f"{ff.RECONNECT_DURATION}_{stat}", text(stat)) for stat in ("p50", "p99", "max")],
        "ms",
        description="How long a client whose connection dropped took to be connected again, from the drop to its "
        "reconnect's CONNACK: the p50, p99 and longest of every reconnect of the run so far, each holding until the "
        "next. A run without a reconnect has none to show: the panel says no reconnects.",
        line=HOLDS,
        no_value="no reconnects",
    )
    gen.panel("Latency from intended send p99 (ms)", [k6_stats(ff.LATENCY_INTENDED_1S, ["p99"])], "ms")
    gen.panel(
        "Step rate (msg/s)",
        [k6_gauge(ff.STEP_RATE, text("step rate"))],
        description="The rate each step asks for, from its start to the next (0 after the last).",
        line=HOLDS,
    )
    return gen
