"""Reading the self-describing result files that k6's handleSummary writes."""

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jsonschema

from mqttbench import ROOT, verdict_policy
from mqttbench.generated import result_schema

# The result file's JSON Schema, generated from the Go type that writes
# every result (k6/extension/result; mqttbench/generated/result_schema.py); it holds
# the schema strings too, a finished run's first.
SCHEMA_FILE = result_schema.SCHEMA
SCHEMA = result_schema.schema_id()


class MissingData(Exception):
    """Something the report needs is not there; the message names it and the fix."""


# Timeline keys of result files written before the extension tagged its
# fields for JS (same data, other names).
OLD_TIMELINE_KEYS = {
    "time": "t",
    "latency_avg": "latency_avg_ms",
    "latency_p50": "latency_p50_ms",
    "latency_p99": "latency_p99_ms",
    "latency_max": "latency_max_ms",
    "send_lag_p99": "send_lag_p99_ms",
}


@dataclass
class Run:
    path: Path
    data: dict

    def __post_init__(self):
        validate(self.data, self.path)
        self.data["timeline"] = [
            {OLD_TIMELINE_KEYS.get(k, k): v for k, v in row.items()} for row in self.data.get("timeline") or []
        ]

    def __getitem__(self, key):
        return self.data[key]

    @property
    def run_id(self):
        return self.data["run_id"]

    @property
    def policy(self):
        """The bounds and causes the result was judged by, as its own policy
        says (k6/extension/verdict writes it into each); this build's
        (mqttbench/verdict_policy.py) for what an older file does not record."""
        return {**verdict_policy.POLICY, **(self.data.get("policy") or {})}

    def open_connections(self):
        """[(Unix ms, connections open)] of the timeline, each row closing its second."""
        return [(r["t"], r["connections"]) for r in self.data.get("timeline") or [] if r.get("connections") is not None]

    def window(self):
        """(start, end) in Unix ms: the publish steps, else the whole run."""
        steps = self.data.get("steps") or []
        if steps:
            return steps[0]["start"], steps[-1]["end"]
        tl = self.data.get("timeline") or []
        if tl:
            return tl[0]["t"] - 1000, tl[-1]["t"]
        raise MissingData(f"run {self.run_id}: the result file has neither steps nor a timeline")


@cache
def _validator():
    schema = json.loads(SCHEMA_FILE.read_text())
    return jsonschema.Draft202012Validator(schema)


def validate(data, where):
    """Reads a result file against the committed schema. Files written before
    results carried their `policy` (and the schema existed) are read as they are."""
    if "policy" not in data:
        return
    err = next(iter(sorted(_validator().iter_errors(data), key=lambda e: e.json_path)), None)
    if err is not None:
        raise MissingData(
            f"{where} is not a valid result file ({SCHEMA_FILE.relative_to(ROOT)}): {err.json_path}: {err.message}"
        )


def instance_dirs(results_dirs, run_id):
    """The directories holding instance files of run_id (a run split over
    several k6 instances: <run_id>.seg-<i>-of-<n>.json)."""
    found = []
    for d in results_dirs:
        for p in Path(d).glob(f"**/{glob_escape(run_id)}.seg-*-of-*.json"):
            if p.parent not in found:
                found.append(p.parent)
    return found


def glob_escape(s):
    return "".join(f"[{c}]" if c in "*?[" else c for c in s)


def find(results_dirs, run_id=None):
    """The result file of run_id (default: the newest) in any of the dirs,
    read against the schema; no other file need be valid."""
    files = []
    for d in results_dirs:
        files += [p for p in Path(d).glob("**/*.json") if p.is_file()]
    found, older = [], {}
    for p in files:
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        if data.get("schema") == SCHEMA:
            found.append((p, data))
        elif str(data.get("schema")).startswith(SCHEMA.rsplit("/", 1)[0] + "/"):
            older[data.get("run_id")] = (p, data["schema"])
    where = ", ".join(map(str, results_dirs))
    if run_id in older and not any(d.get("run_id") == run_id for _, d in found):
        p, schema = older[run_id]
        raise MissingData(
            f"run {run_id!r}: {p} is a result of another version ({schema}; this one reads {SCHEMA}): "
            "report it with the checkout that ran it, or rerun the scenario"
        )
    if not found:
        raise MissingData(
            f"no result files in {where}: run a scenario first (scripts/bench.sh, or k6 run k6/scenarios/p2p.js)"
        )
    if run_id is None:
        return Run(*max(found, key=lambda f: (f[1].get("ended_at") or "", str(f[0]))))
    for p, data in found:
        if data.get("run_id") == run_id:
            return Run(p, data)
    known = ", ".join(sorted(str(d.get("run_id")) for _, d in found)[-5:])
    raise MissingData(f"no result file for run {run_id!r} in {where} (latest runs: {known})")


def latency(run, kind="pub_to_sub"):
    """A latency summary, or {} when nothing was measured (its cells say n/a)."""
    lat = (run.data.get("latency_ms") or {}).get(kind) or {}
    return lat if lat.get("count") else {}
