"""A run folder's InfluxDB side, saved: `reports/<run_id>/series.json`.

When a report reads InfluxDB it records every answer it got (Recording); the
folder then renders the same report without InfluxDB, on any machine
(Saved), as k6's web dashboard replays its recorded events.

Why the answers and not the raw points: the answers are the series the report
reads (1 s means and rates over the run's window, by the dashboards' filters,
flux_filters.py), keyed by the query that asked for them. Rendering from raw
points would need Flux's aggregation again in Python: a second copy of a rule.
The file holds one point a second for each series the report reads; the raw
points stay in InfluxDB for Grafana."""

import json
import shutil
from datetime import UTC, datetime

from .influx import Queries

FILE = "series.json"
FORMAT = "mqtt-bench/series/1"
# What each primitive answers when the saved file lacks a query (a report
# asked for what the run's first report did not): nothing, so the report
# names it missing, as it does for a series InfluxDB did not have.
EMPTY = {"series": list, "counter_rate": list, "point_times": list, "interfaces": dict, "broker_host": dict}


def _key(name, args):
    return json.dumps([name, *args])


def _restore(name, answer):
    if name in ("series", "counter_rate"):
        return [tuple(p) for p in answer]
    return answer


class Asked(Queries):
    """The five primitives, each one call of _ask(name, *every argument) (defaults
    included, so that a query has one key however it was called)."""

    def series(self, start_ms, end_ms, predicate, every="1s", fn="mean"):
        return self._ask("series", start_ms, end_ms, predicate, every, fn)

    def counter_rate(self, start_ms, end_ms, predicate, every="1s"):
        return self._ask("counter_rate", start_ms, end_ms, predicate, every)

    def interfaces(self, start, end, broker):
        return self._ask("interfaces", start, end, broker)

    def point_times(self, start_ms, end_ms, predicate):
        return self._ask("point_times", start_ms, end_ms, predicate)

    def broker_host(self, start, end, broker):
        return self._ask("broker_host", start, end, broker)


class Recording(Asked):
    """A live source (report.influx.Influx) whose answers are kept for the run folder."""

    def __init__(self, influx):
        self.influx, self.url, self.answers = influx, influx.url, {}

    def __getattr__(self, attr):  # client, bucket, org: the History point is written live
        return getattr(self.influx, attr)

    def _ask(self, name, *args):
        got = getattr(self.influx, name)(*args)
        self.answers[_key(name, args)] = got
        return got

    def save(self, folder, run, host_tag):
        (folder / FILE).write_text(
            json.dumps(
                {
                    "format": FORMAT,
                    "run_id": run.run_id,
                    "influx_url": self.url,
                    "host_tag": host_tag,
                    "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "answers": self.answers,
                },
                default=str,
            )
        )


class Saved(Asked):
    """The answers a run folder saved: InfluxDB's side of the run, without InfluxDB."""

    def __init__(self, path):
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT:
            raise ValueError(f"{path} is not a saved series file ({FORMAT})")
        self.path, self.url, self.host_tag = path, data.get("influx_url"), data.get("host_tag")
        self.answers = data["answers"]

    def _ask(self, name, *args):
        answer = self.answers.get(_key(name, args))
        return EMPTY[name]() if answer is None else _restore(name, answer)


def saved(folder):
    """The run folder's saved answers, or None when it has none."""
    path = folder / FILE
    return Saved(path) if path.is_file() else None


def keep_result(run, folder):
    """The result file beside its report, under its own name, so that the folder is the whole run."""
    copy = folder / run.path.name
    if run.path.resolve() != copy.resolve():
        shutil.copyfile(run.path, copy)
    return copy
