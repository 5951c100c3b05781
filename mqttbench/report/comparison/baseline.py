"""A saved baseline (scripts/compare.sh --save-baseline, --against): what is
written, what makes new rounds incomparable with it (refused, naming the
difference), and bad input refused before anything starts."""

import json
from datetime import UTC, datetime
from pathlib import Path

from mqttbench.brokers import facts as broker_facts

BASELINE_KIND = "mqtt-bench baseline"
# Parameters a run records that say where it ran, not what it ran: not compared.
WHERE = {"url", "results_dir", "run_id", "broker", "local_address", "search_id", "toxiproxy_url"}
# What of the host and the generator makes two sets of rounds less alike (a warning).
HOST_KEYS = ("hostname", "cpu_model", "cpus", "kernel", "os", "mem_total")


def comparable(params):
    return {k: v for k, v in (params or {}).items() if k not in WHERE}


def env_dict(env):
    return dict(kv.split("=", 1) for kv in env or [])


class Refused(Exception):
    """Bad input: the message names the option and the fix."""


def read_baseline(path):
    try:
        saved = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise Refused(
            f"--against: cannot read {path} ({e.__class__.__name__}: {e}): give a file --save-baseline wrote"
        ) from None
    if not isinstance(saved, dict) or saved.get("kind") != BASELINE_KIND:
        raise Refused(f"--against: {path} is not a saved baseline (scripts/compare.sh --save-baseline FILE writes one)")
    return saved


def env_differences(saved, scenario, env):
    """What makes new rounds incomparable with a saved baseline, before they run."""
    if saved["scenario"] != scenario:
        return [f"the scenario differs: saved {saved['scenario']}, now {scenario}"]
    a, b = env_dict(saved.get("env")), env_dict(env)
    return [
        f"the parameter {k} differs: saved {a.get(k, 'not set')}, now {b.get(k, 'not set')}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]


def save(path, col, manifest, metrics):
    """--save-baseline: one column's rounds and their metrics, with what
    judges comparability."""
    name = col.get("broker") or (col.get("parameters") or {}).get("broker") or col["name"]
    facts = broker_facts.load(name) if col.get("kind") == "broker" else None
    doc = {
        "kind": BASELINE_KIND,
        "version": 1,
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "compare_id": manifest.get("compare_id"),
        "name": col["name"],
        "scenario": manifest.get("scenario"),
        "env": manifest.get("env") or [],
        "parameters": comparable(col.get("parameters")),
        "broker": {
            "name": name,
            "version": col.get("version"),
            "kind": col.get("kind"),
            "mode": col.get("mode"),
            "url": col.get("url"),
            "settings": facts,
        },
        "generator": col.get("versions"),
        "host": {k: (col.get("host") or {}).get(k) for k in HOST_KEYS},
        "rounds": [
            {"round": r.get("round"), "run_id": r["run_id"], "figures": f}
            for r, f in zip([r for r in col["rounds"] if r["status"] == "ran"], col["round_figures"], strict=True)
        ],
        "metrics": metrics,
    }
    Path(path).write_text(json.dumps(doc, indent=1, default=str) + "\n")
    print(f"baseline saved: {path}")
