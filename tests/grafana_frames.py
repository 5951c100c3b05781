"""What Grafana 12 makes of a Flux answer, without Grafana: the data frames
its InfluxDB backend builds from each table, and the name a legend (or a
stat's title) shows for each value field. Written after Grafana's source,
read in the stored index of grafana/grafana:

- pkg/tsdb/influxdb/flux/builder.go, the version with hasUsualStartStop
  (the group-key columns of a table are its labels; when the other columns
  are exactly _time and _value, the value is named by the _field label,
  else "Value", and _start and _stop are dropped from the labels; otherwise
  every other column is a field of its own name, `_value` among them, with
  every label, _start and _stop included; a _measurement label names the
  frame); testdata/aggregate.golden.jsonc@90c18cd0 and
  testdata/simple.golden.jsonc@76d78144 show both cases;
- packages/grafana-data/src/field/fieldState.ts (calculateFieldDisplayName:
  frame name when frame names differ, the field's name unless "Value",
  then its labels).

So a test can say what a person would read in a legend."""

import csv
import io
from dataclasses import dataclass, field

import requests

TIME_TYPES = ("dateTime:RFC3339", "dateTime:RFC3339Nano")


@dataclass
class Field:
    name: str
    type: str
    labels: dict = field(default_factory=dict)
    values: list = field(default_factory=list)


@dataclass
class Frame:
    name: str
    fields: list


def annotated_csv(stack, query):
    """InfluxDB's answer with the #group and #datatype annotations, as
    Grafana's backend reads it (the influxdb-client's annotated CSV)."""
    r = requests.post(
        f"{stack.influx}/api/v2/query",
        params={"org": "mqtt-bench"},
        headers={"Authorization": f"Token {stack.token}", "Content-Type": "application/json"},
        json={"query": query, "type": "flux", "dialect": {"annotations": ["group", "datatype", "default"]}},
        timeout=30,
    )
    r.raise_for_status()
    return r.text


def tables(text):
    """(columns, rows) per table: columns [(name, datatype, in group key)],
    rows [{name: value}], the result and table columns left out."""
    out, group, types, header = [], None, None, None
    for row in csv.reader(io.StringIO(text)):
        if not row or not any(row):
            header = None
            continue
        if row[0] == "#group":
            group = [v == "true" for v in row[1:]]
        elif row[0] == "#datatype":
            types = row[1:]
        elif row[0].startswith("#"):
            continue
        elif header is None:
            header = row[1:]
            cols = [(n, t, g) for n, t, g in zip(header, types, group, strict=True) if n not in ("result", "table")]
            current_table = None
        else:
            values = dict(zip(header, row[1:], strict=True))
            if values["table"] != current_table:
                current_table = values["table"]
                out.append((cols, []))
            out[-1][1].append({n: values[n] for n, _, _ in cols})
    return out


def frames(text):
    """The frames builder.go makes of an annotated CSV answer."""
    result = []
    for cols, rows in tables(text):
        label_cols = [n for n, _, g in cols if g]
        times = [(n, t) for n, t, g in cols if not g and t in TIME_TYPES]
        others = [(n, t) for n, t, g in cols if not g and t not in TIME_TYPES]
        starts_stops = [n for n, t, g in cols if g and t in TIME_TYPES]
        usual_start_stop = starts_stops.count("_start") == 1 and starts_stops.count("_stop") == 1
        simple_time = len(times) == 1 and times[0][0] == "_time"
        simple = simple_time and len(others) == 1 and others[0][0] == "_value"
        labels = {n: rows[0][n] for n in label_cols if rows[0][n] != ""}
        name = labels.pop("_measurement", "")
        fields = []
        for n, t in times + others:
            f = Field(n, "time" if t in TIME_TYPES else t, values=[r[n] for r in rows])
            if simple:
                if n == "_time":
                    f.name = "Time"
                else:
                    f.name = labels.pop("_field", "Value")
                if usual_start_stop:
                    labels.pop("_start", None)
                    labels.pop("_stop", None)
            if not (simple_time and n == "_time"):
                f.labels = labels
            fields.append(f)
        result.append(Frame(name, fields))
    return result


def value_fields(frames_):
    return [(fr, f) for fr in frames_ for f in fr.fields if f.type in ("double", "long", "unsignedLong")]


def display_name(fr, f, all_frames):
    """calculateFieldDisplayName, for fields without a configured name."""
    parts = []
    names_differ = len({x.name for x in all_frames}) > 1
    if names_differ and fr.name:
        parts.append(fr.name)
    if f.name and f.name != "Value":
        parts.append(f.name)
    if f.labels:
        keys = sorted({k for x in all_frames for g in x.fields for k in g.labels})
        if len(keys) == 1:
            parts.append(f.labels[keys[0]])
        else:
            parts.append("{" + ", ".join(f'{k}="{f.labels[k]}"' for k in sorted(f.labels)) + "}")
    elif not parts and fr.name:
        parts.append(fr.name)
    return " ".join(parts) or f.name or "Value"


def legend(text_by_target):
    """The names a panel's legend shows: every value field of every target's
    frames, named as Grafana names them across the whole panel."""
    all_frames = [fr for text in text_by_target for fr in frames(text)]
    return [display_name(fr, f, all_frames) for fr, f in value_fields(all_frames)]
