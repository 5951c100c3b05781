"""python -m mqttbench.report.basic_set DIR: the mqttbs basic set's summary
(scripts/bench-basic-set.sh). Reads the result files in DIR and writes
DIR/basic-set.json with, per use case, the same success and latency figures
as the report (tables.py), and prints one line per use case."""

import json
import sys
from pathlib import Path

from . import tables
from .results import SCHEMA, Run


def summary(run):
    conn, ok, lat = tables.connections(run), tables.success(run), tables.latency(run)
    return {
        "scenario": run["scenario"],
        "passed": run["passed"],
        "duration": run["parameters"]["duration"],
        "connections": conn["established"],
        "connection_success_pct": conn["success_pct"],
        "target_rate": sum(s["target_rate"] for s in run["steps"]) or None,
        "achieved_rate": sum(s["achieved_rate"] for s in run["steps"]) or None,
        "published": ok["published"],
        "received": ok["received"],
        "lost": ok["lost"],
        "delivery_success_pct": ok["delivery_success_pct"],
        "latency_avg_ms": lat.get("avg"),
        "latency_p90_ms": lat.get("p90"),
        "latency_p99_ms": lat.get("p99"),
    }


def runs(out):
    """The result files in out (other JSON files, such as an earlier summary, are skipped)."""
    for f in sorted(out.glob("*.json")):
        data = json.loads(f.read_text())
        if isinstance(data, dict) and data.get("schema") == SCHEMA:
            yield Run(f, data)


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m mqttbench.report.basic_set DIR")
    out = Path(args[0])
    rows = [summary(r) for r in runs(out)]
    (out / "basic-set.json").write_text(json.dumps(rows, indent=1))
    for x in rows:
        print(
            f"{x['scenario']:24} {'PASS' if x['passed'] else 'FAIL'}  "
            f"conns {x['connections']} ({x['connection_success_pct']}%)"
            f"  rate {x['achieved_rate']}/{x['target_rate']}  delivered {x['delivery_success_pct']}%"
            f"  latency avg {x['latency_avg_ms']} p90 {x['latency_p90_ms']} p99 {x['latency_p99_ms']} ms"
        )
    print(f"results: {out}/basic-set.json")


if __name__ == "__main__":
    main()
