"""The comparison of brokers that scripts/compare.sh writes: one report, in
mqttbs's format, with a table per metric and the brokers as its columns, the
charts side by side, and each broker's disclosure.

    python -m mqttbench.report.comparison.write MANIFEST [--results DIR] [--out DIR]

MANIFEST (compare.sh writes it, reports/compare-<id>/manifest.json): the
comparison's scenario, -e parameters and limits, and per broker its name,
kind (broker: started by this stack; target: already running; run: a
finished run that scripts/report.sh compares with others), status (ran,
or not run with the reason), run id (or, with --search, the capacity
search's id), version, and whether its metrics went to InfluxDB. A broker
that did not run keeps its column, marked with the reason.

The figures are the single-run report's (tables.build, tables.success,
tables.latency), from the result files and InfluxDB; a capacity search's are
those of scripts/capacity.sh's capacity.json. Writes compare.md, the charts
and results.json beside the manifest (or in --out)."""

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader

from mqttbench import RESULTS, ROOT

from .. import charts, series
from ..disclosure import disclosure
from ..influx import HostTagged, connect_influx
from ..results import MissingData, find
from . import baseline, rounds
from .tables import (
    RUN_TABLES,
    SEARCH_TABLES,
    build_tables,
    fmt,
    header,
    markdown_table,
    recorded,
    run_figures,
    search_table,
    thresholds_table,
    tls_mismatch,
)

NOT_RUN = "not run"  # did not start, could not be reached, or wrote no result
NO_RESULT = "no result"  # a capacity search that ran and found no rate


# --- Per broker ------------------------------------------------------------


def load_run(b, dirs, influx, influx_problem, cpu_target, built=None):
    """Fills b with its figures, or marks it when its result cannot be read; returns the Run.
    built: (res, t) of the run's own report, made just before (report.sh RUN RUN), whose
    missing data already names InfluxDB's."""
    try:
        run = find([b["folder"]] if b.get("folder") else dirs, b["run_id"])
        source = None
        if b.get("folder"):  # a run folder (compare --run): InfluxDB's side as it saved it
            source = series.saved(Path(b["folder"]))
            b["host_tag"] = source and source.host_tag
            influx_problem = f"{b['folder']} has no {series.FILE}: host and broker metrics are missing"
        elif b.get("influx"):
            source = influx
        if source is not None and b.get("host_tag"):
            source = HostTagged(source, b["name"], b["host_tag"], b["run_id"])
        t, figures = run_figures(run, source, cpu_target, built)
        figures["connect_rate"] = rounds.connect_rate(run.data)  # judged with --baseline (report/comparison/regress.py)
        b["network"] = run.data.get("network")
    except (MissingData, KeyError, TypeError, ValueError) as e:
        b.update(status=NOT_RUN, short="its result cannot be read", reason=f"{e.__class__.__name__}: {e}")
        return None
    missing = list(t["missing"])
    if built is None and not b.get("influx"):
        unsent = "InfluxDB: this run's metrics were not sent to InfluxDB (no Telegraf listener answered)"
        missing.insert(0, b.get("no_influx") or unsent)
    elif built is None and source is None:
        missing.insert(0, influx_problem)
    b.update(
        figures=figures,
        missing=missing,
        generator_warning=t["generator"]["warning"],
        version=(run.data.get("versions") or {}).get("broker") or b.get("version"),
        parameters=run["parameters"],
        host=run.data.get("host"),
        versions=run.data.get("versions"),
        report=str(Path(b["folder"]).resolve() / "report.md") if b.get("folder") else f"../{run.run_id}/report.md",
        result=str(run.path.relative_to(ROOT)) if run.path.is_relative_to(ROOT) else str(run.path),
    )
    return run


def load_search(b, root):
    """Fills b with its capacity search's figures (capacity.json); a search that found no rate keeps its reason."""
    d = root / f"capacity-{b['search_id']}"
    try:
        cap = json.loads((d / "capacity.json").read_text())
    except (OSError, ValueError):
        if b["status"] == "ran":
            b.update(
                status=NO_RESULT, short="no capacity.json", reason=f"{d / 'capacity.json'} is missing or unreadable"
            )
        return
    b["capacity"] = cap
    b["report"] = f"../capacity-{b['search_id']}/" + ("capacity.md" if (d / "capacity.md").exists() else "")
    rec = cap.get("recommended")
    if rec:
        b["figures"] = rec
    elif b["status"] == "ran":
        b.update(status=NO_RESULT, short=f"no capacity found ({cap.get('limit')})", reason=cap.get("limit_text"))


def value(v):
    """A parameter as a cell: a number or text as it is, a list or mapping as JSON."""
    if v is None:
        return "not set"
    return json.dumps(v) if isinstance(v, list | dict) else fmt(v, 0) if isinstance(v, bool) else str(v)


def parameters_table(brokers, runs):
    """The scenario, the broker and the parameters the runs differ in, a row
    each: always for runs (columns named by run id), else only when they
    differ in more than the broker (compare.sh's columns name it)."""
    ran = [b.get("parameters") or {} for b in brokers if b.get("parameters")]
    keys = sorted({k for p in ran for k in p} - {"url", "results_dir", "run_id", "local_address", "broker"})
    differ = [k for k in keys if len({json.dumps(p.get(k), sort_keys=True) for p in ran}) > 1]
    if not differ and not runs:
        return []
    rows = [
        [k, *[value((b.get("parameters") or {}).get(k)) if b.get("parameters") else b["status"] for b in brokers]]
        for k in ["scenario", "broker", *[k for k in differ if k not in ("scenario", "broker")]]
    ]
    heads = [header(b) for b in brokers]
    return [{"title": "Parameters", "note": "What the runs differ in.", "header": heads, "rows": rows}]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mqttbench.report.comparison.write", description=__doc__)
    ap.add_argument("manifest")
    ap.add_argument("--results", action="append", help="directory of result files (default: reports/)")
    ap.add_argument("--out", help="where to write (default: the manifest's directory)")
    args = ap.parse_args(argv)
    mpath = Path(args.manifest)
    try:
        manifest = json.loads(mpath.read_text())
        brokers = manifest["brokers"]
        assert isinstance(brokers, list) and all("name" in b and "status" in b for b in brokers)
    except (OSError, ValueError, KeyError, AssertionError) as e:
        print(f"error: {mpath} is not a comparison manifest ({e.__class__.__name__}: {e})", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else mpath.parent
    return write(manifest, args.results or [str(RESULTS)], out)


def runs_manifest(columns):
    """The manifest of a comparison of runs already made (report.sh RUN RUN,
    compare --run FOLDER): a column per run, named by its run id; columns:
    each one's run_id and what else it says (influx, folder...)."""
    return {
        "compare_id": "compare-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        "runs": True,
        "brokers": [{"name": c["run_id"], "kind": "run", "status": "ran", **c} for c in columns],
    }


def write(manifest, dirs, out, built=None):
    """Writes the comparison of manifest's brokers (or runs) to out:
    compare.md, its charts and results.json. The one writer of compare.md:
    scripts/compare.sh's comparisons and report.sh's of several runs (built:
    name -> (res, t) of the reports it made of them)."""
    built = built or {}
    brokers = manifest["brokers"]
    out.mkdir(parents=True, exist_ok=True)
    reports_root = Path(dirs[0])
    cpu_target = float(manifest.get("cpu_target") or 75)
    search = bool(manifest.get("search"))
    for b in brokers:
        b.setdefault("kind", "target")
        b.setdefault("mode", b["kind"])
        if b["status"] not in ("ran", NO_RESULT):
            b["status"] = NOT_RUN

    runs = {}
    if search:
        for b in brokers:
            load_search(b, reports_root)
    else:
        influx, problem = None, None
        if any(b.get("influx") and b["status"] == "ran" and b["name"] not in built for b in brokers):
            influx, problem = connect_influx()
        for b in brokers:
            if b["status"] == "ran":
                run = load_run(b, dirs, influx, problem, cpu_target, built.get(b["name"]))
                if run is not None:
                    runs[b["name"]] = run

    # In rounds, or against a baseline: a column per name, its figures the rounds' medians.
    opts = manifest.get("rounds") or {}
    asked = any(opts.get(k) for k in ("baseline", "against", "save_baseline"))
    in_rounds = not search and (asked or (opts.get("n") or 1) > 1)
    if in_rounds:
        brokers = rounds.columns(brokers)
        if opts.get("against"):
            saved = baseline.read_baseline(opts["against"])
            brokers.insert(0, rounds.saved_column(saved, opts["against"]))
            opts["saved_name"] = brokers[0]["name"]
    breaches, refusals = [], []
    if search:
        metric_tables = [*build_tables(brokers, SEARCH_TABLES), search_table(brokers)]
        made = {"search": charts.search_chart(out, brokers)}
    else:
        metric_tables = parameters_table(brokers, manifest.get("runs")) + build_tables(brokers, RUN_TABLES)
        metric_tables.append(thresholds_table(brokers))
        if in_rounds:
            judged, breaches, refusals, warnings = rounds.judge(brokers, manifest, header)
            metric_tables += judged
            for w in warnings:
                print(f"warning: {w}", file=sys.stderr)
        made = {
            "bars": charts.bar_chart(
                out,
                brokers,
                [
                    ("delivered msg/s", "sub_rate"),
                    ("p99 latency ms", "latency_p99"),
                    ("host CPU % avg (1 - idle)", "host_cpu_avg"),
                    ("broker CPU % avg", "broker_cpu_avg"),
                    ("delivery success %", "delivery_success_pct"),
                ],
                "bars.png",
            ),
            "timeline": charts.timeline_chart(out, brokers, runs),
        }
    made = {k: v for k, v in made.items() if v}

    mismatch = None if search else tls_mismatch(brokers)
    params = next((b["parameters"] for b in brokers if b.get("parameters")), None)
    written = datetime.now(UTC).isoformat(timespec="seconds")
    env = Environment(loader=FileSystemLoader(Path(__file__).parent.parent / "templates"), keep_trailing_newline=True)
    env.filters.update(markdown_table=markdown_table, recorded=recorded)
    text = env.get_template("compare.md.j2").render(
        m=manifest,
        brokers=brokers,
        tables=metric_tables,
        charts=made,
        params=params,
        disclosures={b["name"]: disclosure(b, manifest, mismatch) for b in brokers},
        tls_mismatch=mismatch,
        not_run=[b for b in brokers if b["status"] != "ran"],
        written=written,
    )
    (out / "compare.md").write_text(text)
    keep = (
        "name kind mode url status short reason version run_id search_id host_tag pid influx report result "
        "figures missing generator_warning log rounds round_values"
    ).split()
    (out / "results.json").write_text(
        json.dumps(
            {
                **{
                    k: manifest.get(k)
                    for k in ("compare_id", "scenario", "search", "mode", "cpu_target", "env", "limits")
                },
                "tls_mismatch": mismatch,
                "rounds": manifest.get("rounds"),
                "regressions": breaches,
                "not_comparable": refusals,
                "written_at": written,
                "charts": made,
                "brokers": [
                    {k: b.get(k) for k in keep}
                    | (
                        {"capacity": {k: v for k, v in b["capacity"].items() if k != "trials"}}
                        if b.get("capacity")
                        else {}
                    )
                    for b in brokers
                ],
            },
            indent=1,
            default=str,
        )
    )
    print(f"comparison: {out / 'compare.md'}")
    if opts.get("save_baseline") and not refusals:
        name = opts.get("baseline") or next(b["name"] for b in brokers if b["kind"] != "saved")
        col = next(b for b in brokers if b["name"] == name)
        if col["status"] == "ran":
            baseline.save(opts["save_baseline"], col, manifest, rounds.metric_rounds(col))
        else:
            print(f"error: --save-baseline: {name} did not run: no baseline saved", file=sys.stderr)
    for r in refusals:
        print(f"error: not comparable with the baseline: {r}", file=sys.stderr)
    for b in breaches:
        print(f"regression: {b}", file=sys.stderr)
    # 2: not comparable (a parameter differs), no verdict; 4: a --fail-on bound breached.
    return 2 if refusals else 4 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
