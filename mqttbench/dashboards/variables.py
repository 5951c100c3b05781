"""The dashboards' template variables and annotations
(mqttbench/dashboards/__main__.py renders them): what a reader chooses (a
scenario, a run, a broker) and the marks on the time axis (run steps,
capacity trials)."""

from mqttbench import flux_filters as ff
from mqttbench.dashboards.flux import DS, RUN, SCENARIO, where
from mqttbench.flux_filters import measurement


def variable(name, tags, source, only=None, start="-30d"):
    """A query variable listing the values of the given tags on source
    (where only holds, if given) since start. With several tags, one table
    of their distinct values (Grafana reads a variable's values from the
    first string field of each frame), newest first for run ids (the sort
    option sorts them again)."""
    predicate = measurement(source) + (f" and {only}" if only else "")
    values = [
        f'schema.tagValues(bucket: v.defaultBucket, tag: "{tag}", predicate: (r) => {predicate}, start: {start})'
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
    # A scenario, then one of its runs: run ids and capacity search ids
    # (choosing a search shows all its trials); the k6 series are the
    # chosen scenario's (k6()).
    variable("scenario", ["scenario"], ff.CONNECTS),
    variable("run_id", ["run_id", "search"], ff.PUBLISHES, ff.tag("scenario", SCENARIO)),
    variable("broker", ["broker"], ff.CPU),
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
    `tags` split on commas as tags (see tests/dashboards/test_grafana_upstream.py)."""
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
