"""The History dashboard: one summary point per finished run (its report
writes it: mqttbench/report/history.py), per broker and version, and its runs
as a table whose rows link to their reports."""

import json

from mqttbench import flux_filters as ff
from mqttbench.dashboards.flux import named, where
from mqttbench.dashboards.panels import Dashboard
from mqttbench.dashboards.variables import variable
from mqttbench.flux_filters import measurement

# ---- History: one point per finished run (report/history.py) ----------------
# Its own variables: the brokers (several, or all) and the scenario of the
# runs' summary points over a year, and where reports/ is served, for the
# run ids' links.
HISTORY_BROKERS = "${broker:regex}"
HISTORY_VARIABLES = [
    variable("broker", ["broker"], ff.RUN_SUMMARY, start="-1y") | {"multi": True, "includeAll": True, "allValue": ".*"},
    variable("scenario", ["scenario"], ff.RUN_SUMMARY, start="-1y"),
    {
        "name": "reports",
        "label": "reports served at",
        "type": "textbox",
        "query": "http://127.0.0.1:8000",
        "current": {"text": "http://127.0.0.1:8000", "value": "http://127.0.0.1:8000"},
        "description": "Where reports/ is served, for the run ids' links (e.g. python3 -m http.server -d reports "
        "8000, or a CI's artifacts)",
        "hide": 0,
    },
]


def history_where(field=None):
    """The summary points of the chosen brokers and scenario (one field, or all)."""
    pred = f'{measurement(ff.RUN_SUMMARY)} and r.broker =~ /^{HISTORY_BROKERS}$/ and r.scenario == "${{scenario}}"' + (
        f' and r._field == "{field}"' if field else ""
    )
    return where(pred)


def history(field):
    """A metric of the summary points, a series per broker and version."""
    return history_where(field) + named('r.broker + " " + r.broker_version').lstrip("\n")


HISTORY_COLUMNS = ["_time", "broker", "broker_version", "params", "run_id", "passed", "rate", "p50", "p99",
                   "broker_cpu_per_msg", "rss_mb"]  # fmt: skip
HISTORY_RUNS = (
    history_where()
    + '  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")\n'
    + "  |> group()\n"
    + '  |> sort(columns: ["_time"], desc: true)\n'
    + f"  |> keep(columns: {json.dumps(HISTORY_COLUMNS)})"
)


def history_board():
    """Each finished run's summary point (its report writes it: report/history.py), per broker and version."""
    hist = Dashboard(
        "mqtt-bench-history",
        "History",
        "Every finished run of the chosen brokers and scenario, one point each (written by its report): a series "
        "per broker and version (BROKER_VERSION names a build). Runs lists them, each row a link to its run's report.",
        variables=HISTORY_VARIABLES,
        annotations=[],
        since="now-90d",
    )
    for title, field, unit in [
        ("Delivered rate (msg/s)", "rate", "short"),
        ("Pub-to-sub latency p50 (ms)", "p50", "ms"),
        ("Pub-to-sub latency p99 (ms)", "p99", "ms"),
        ("Broker CPU per message (µs)", "broker_cpu_per_msg", "short"),
        ("Broker RSS max (MB)", "rss_mb", "short"),
    ]:
        hist.panel(title, [history(field)], unit, w=12 if field != "rss_mb" else 24,
                   description="One point per run, at its end; a series per broker and version.")  # fmt: skip
    hist.panel(
        "Runs",
        [HISTORY_RUNS],
        kind="table",
        w=24,
        h=10,
        description="Newest first; params is a digest of the run's parameters (runs of another digest ran something "
        "else); a row links to its run's report where reports/ is served (variable reports).",
    )
    # Each row a link to its run's report: the run_id of the row clicked.
    hist.panels[-1]["fieldConfig"]["defaults"]["links"] = [
        {"title": "its report", "url": "${reports}/${__data.fields.run_id}/report.md"}
    ]
    return hist
