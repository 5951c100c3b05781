"""History across versions: a summary point per finished run in InfluxDB
(the History dashboard plots them), and `scripts/report.sh --history BROKER
SCENARIO`, the same from the result files alone, as a table and a chart.

The point is written by the run's report (scripts/report.sh, which every
run's scripts call): it alone knows the broker's CPU and RSS (InfluxDB).
The run's own numbers (rate, latency, verdict) are its result file's, not
recomputed. The point's time is the run's end and its series the run's
broker, version, scenario and parameters, so a report made again overwrites
its point rather than adding one: one point per run however often it is
reported."""

import hashlib
import json
import sys
from pathlib import Path

from mqttbench import flux_filters as ff

from .comparison import regress
from .comparison.baseline import comparable
from .results import SCHEMA

NOT_RECORDED = "not recorded"


def digest(params):
    """What the run ran, in 12 hex digits: its parameters less where it ran (url, run id...)."""
    return hashlib.sha256(json.dumps(comparable(params), sort_keys=True, default=str).encode()).hexdigest()[:12]


def own_figures(data):
    """A run's own figures from its result file: delivered rate (receives per
    second of its publish steps, as the report's tables count it), pub-to-sub
    p50 and p99, whether it passed."""
    steps = data.get("steps") or []
    secs = sum((s["end"] - s["start"]) / 1000 for s in steps)
    lat = (data.get("latency_ms") or {}).get("pub_to_sub") or {}
    received = (data.get("counts") or {}).get("mqtt_receives")
    return {
        "rate": received / secs if secs and received is not None else None,
        "p50": lat.get("p50"),
        "p99": lat.get("p99"),
        "passed": bool(data.get("passed")),
    }


def point(data, broker_cpu_avg, broker_rss_max):
    """(tags, fields, time in ns) of a run's summary point; broker figures from its report (None: n/a)."""
    own = own_figures(data)
    fields = {
        "run_id": data["run_id"],
        "rate": own["rate"],
        "p50": own["p50"],
        "p99": own["p99"],
        "broker_cpu_per_msg": regress.values({"broker_cpu_avg": broker_cpu_avg, "sub_rate": own["rate"]})[
            "broker_cpu_per_msg"
        ],
        "rss_mb": broker_rss_max / 2**20 if broker_rss_max is not None else None,
        "passed": own["passed"],
    }
    tags = {
        "broker": data.get("broker") or NOT_RECORDED,
        "broker_version": (data.get("versions") or {}).get("broker") or NOT_RECORDED,
        "scenario": data.get("scenario") or NOT_RECORDED,
        "params": digest(data.get("parameters")),
    }
    return tags, {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
                  for k, v in fields.items() if v is not None}, _ns(data["ended_at"])  # fmt: skip


def _ns(iso):
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1e9)


def record(influx, run, mqttbs):
    """Writes a run's summary point (mqttbs: the report's table, its broker CPU and RSS).
    A capacity search's trials are steps of a search, not a version's result: none."""
    if influx is None or (run["parameters"] or {}).get("search_id"):
        return
    from influxdb_client import Point
    from influxdb_client.client.write_api import SYNCHRONOUS

    tags, fields, t = point(run.data, mqttbs.get("broker_cpu_avg"), mqttbs.get("broker_rss_max"))
    p = Point(ff.RUN_SUMMARY).time(t)
    for k, v in tags.items():
        p = p.tag(k, v)
    for k, v in fields.items():
        p = p.field(k, v)
    try:
        influx.client.write_api(write_options=SYNCHRONOUS).write(bucket=influx.bucket, org=influx.org, record=p)
    except Exception as e:  # noqa: BLE001 - the report stands without its history point
        print(f"warning: the run's History point was not written to InfluxDB ({e.__class__.__name__})", file=sys.stderr)


# --- scripts/report.sh --history BROKER SCENARIO ---------------------------


def runs_of(dirs, broker, scenario):
    """Every finished run of broker and scenario in the result files (merged
    runs, not their instance files), oldest first."""
    found = {}
    for d in dirs:
        for p in Path(d).glob("**/*.json"):
            if ".seg-" in p.name:
                continue
            try:
                data = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
            if (
                isinstance(data, dict)
                and data.get("schema") == SCHEMA
                and data.get("broker") == broker
                and data.get("scenario") == scenario
                and not (data.get("parameters") or {}).get("search_id")
            ):
                found[data["run_id"]] = (p, data)
    return sorted(found.values(), key=lambda f: f[1].get("ended_at") or "")


def write(dirs, broker, scenario, out_root):
    runs = runs_of(dirs, broker, scenario)
    if not runs:
        print(f"error: no result file of broker {broker} and scenario {scenario} in {', '.join(dirs)}", file=sys.stderr)
        return 2
    out = Path(out_root) / f"history-{broker}-{scenario}"
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for p, data in runs:
        own = own_figures(data)
        report = Path(out_root) / data["run_id"] / "report.md"
        rows.append(
            {
                "ended_at": data.get("ended_at"),
                "run_id": data["run_id"],
                "version": (data.get("versions") or {}).get("broker") or NOT_RECORDED,
                "params": digest(data.get("parameters")),
                **own,
                "report": f"../{data['run_id']}/report.md" if report.exists() else None,
                "result": str(p),
            }
        )
    chart = _chart(out, rows, broker, scenario)

    def num(v, d):
        return "n/a" if v is None else f"{v:,.{d}f}"

    lines = [
        f"# History: {broker}, {scenario}",
        "",
        f"Every finished run of broker `{broker}` and scenario `{scenario}` in the result files, oldest first "
        f"(`scripts/report.sh --history {broker} {scenario}`): delivered rate, pub-to-sub latency and verdict as "
        "each result file records them. `params` is a digest of the parameters: runs with another digest ran "
        "something else. Broker CPU and RSS are InfluxDB's: Grafana's History dashboard.",
        "",
        "| ended | run | broker version | params | delivered msg/s | p50 ms | p99 ms | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        run = f"[{r['run_id']}]({r['report']})" if r["report"] else f"`{r['run_id']}`"
        lines.append(
            f"| {r['ended_at']} | {run} | {r['version']} | `{r['params']}` | {num(r['rate'], 1)} | "
            f"{num(r['p50'], 3)} | {num(r['p99'], 3)} | {'pass' if r['passed'] else 'FAIL'} |"
        )
    lines += ["", f"![history]({chart})", ""]
    (out / "history.md").write_text("\n".join(lines))
    (out / "history.json").write_text(json.dumps({"broker": broker, "scenario": scenario, "runs": rows}, indent=1))
    print(f"history: {out / 'history.md'}")
    return 0


def _chart(out, rows, broker, scenario):
    from .charts import plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    versions = list(dict.fromkeys(r["version"] for r in rows))
    for v in versions:
        xs = [i for i, r in enumerate(rows) if r["version"] == v]
        pick = [rows[i] for i in xs]
        top.plot(xs, [r["rate"] for r in pick], "o", label=v)
        bottom.plot(xs, [r["p99"] for r in pick], "o", label=f"{v} p99")
        bottom.plot(xs, [r["p50"] for r in pick], "x", label=f"{v} p50")
    top.set_title(f"{broker}, {scenario}: delivered msg/s per run", fontsize=9)
    bottom.set_title("pub-to-sub latency ms (p50 x, p99 o)", fontsize=9)
    bottom.set_xticks(range(len(rows)), [r["run_id"] for r in rows], rotation=60, ha="right", fontsize=6)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out / "history.png", dpi=100)
    plt.close(fig)
    return "history.png"
