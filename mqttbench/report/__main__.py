"""scripts/report.sh [RUN_ID ...] [--merge] [--cpu-target 75] [--results DIR] [--out DIR]
scripts/report.sh --history BROKER SCENARIO

--history: every run of BROKER and SCENARIO in the result files, oldest
first, as a table and a chart (reports/history-<broker>-<scenario>/).
Each report also writes its run's summary point to InfluxDB (report/history.py),
which Grafana's History dashboard plots per broker and version.

One run (default: the latest) -> reports/<run_id>/report.md, charts, results.json.
Several runs -> also a comparison: reports/compare-<time>/compare.md.

A run split over several k6 instances (execution segments) is merged first
when it has no merged result yet, or always with --merge (k6 x mqtt-merge:
one result, thresholds judged again); with --merge the exit code is 99 when
a merged verdict fails (the report is written all the same), as k6's is.

A run's folder is the whole run: its result file and InfluxDB's answers for
its window (series.json, saved by the report that read them) beside the
report. Give a folder instead of a run id (reports/<run_id>, or a copy on
another machine) and it renders from the folder alone, into itself, with no
InfluxDB; a run id whose InfluxDB does not answer reads its folder's too.

A complete report (made with all its InfluxDB data) is never replaced by one
that lacks data (InfluxDB unreachable, no token, --no-influx, points expired):
it is kept, the reason is printed, and the exit code is 3. A report that did
not exist is written with the missing data named (exit 0)."""

import argparse
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader

from mqttbench import RESULTS
from mqttbench.brokers import facts as broker_facts
from mqttbench.k6 import command as k6_command

from . import charts, diagnosis, history, network, parts, series, tables
from .comparison import write as comparison
from .influx import HostTagged, Influx
from .results import MissingData, find, instance_dirs


def mb(x):
    return "n/a" if x is None else f"{x / 2**20:,.0f} MB"


def utc(ms):
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def connect_influx(skip):
    if skip:
        return None, "InfluxDB was not asked (--no-influx): host and broker metrics are missing"
    try:
        return Influx.from_env(), None
    except MissingData as e:
        return None, str(e)


class KeptReport(Exception):
    """A complete report was kept rather than replaced by one missing data; the message says why."""


def complete_report(out):
    """The results.json of a report in out made with all its InfluxDB data, or None."""
    try:
        old = json.loads((out / "results.json").read_text())
    except (OSError, ValueError):
        return None
    return old if isinstance(old, dict) and old.get("missing") == [] else None


def merge(run_id, dirs, always):
    """Runs k6 x mqtt-merge for run_id where its instance files are, when
    asked or when it has no merged result: returns the merge's exit code
    (None: not a split run, or already merged and not asked)."""
    code = None
    for d in instance_dirs(dirs, run_id):
        if not always and (d / f"{run_id}.json").exists():
            continue
        p = subprocess.run(
            [k6_command.binary(), "x", "mqtt-merge", run_id, "--dir", str(d)],
            env=dict(os.environ, K6_NO_USAGE_REPORT="true"),
        )
        if p.returncode not in (0, 99):
            raise MissingData(f"run {run_id}: k6 x mqtt-merge failed (exit code {p.returncode}): see its message above")
        code = max(code or 0, p.returncode)
    return code


def source_of(out, influx, influx_problem, folder):
    """Where a run's InfluxDB side is read: its folder's saved answers when
    the run was given as a folder, or InfluxDB does not answer; else InfluxDB,
    recording. Returns (source or None, what is missing, host tag it was saved with)."""
    saved = series.saved(out)
    if folder is not None or influx is None:
        if saved is not None:
            return saved, None, saved.host_tag
        if folder is not None:
            return None, f"{out} has no {series.FILE}: host and broker metrics are missing", None
        return None, influx_problem, None
    return series.Recording(influx), None, None


def report_one(run, influx, influx_problem, args, folder=None):
    tables.require(run)
    out = folder or Path(args.out) / run.run_id
    source, influx_problem, saved_tag = source_of(out, influx, influx_problem, folder)
    host_tag = args.host_tag or saved_tag
    influx = source
    if influx is not None and host_tag:
        influx = HostTagged(influx, run["broker"], host_tag, run.run_id)
    res, t = tables.build(run, influx, args.cpu_target)
    t["diagnosis"] = diagnosis.build(run, res.broker_cpu)
    t["deviation"] = broker_facts.known_deviation(run["broker"], run.data)
    t["parts"] = parts.of(run)  # a table per part of a composite
    if influx_problem:
        t["missing"].insert(0, influx_problem)
    # A report is never replaced by one with less data (InfluxDB down or its
    # points expired): its figures are not recoverable from the result file.
    old = complete_report(out)
    if old is not None and t["missing"]:
        raise KeptReport(
            f"kept {out / 'report.md'}, a complete report (made {old.get('written_at', 'earlier')} with InfluxDB "
            f"{old.get('influx_url') or 'data'}), rather than replace it with one that lacks data: "
            + "; ".join(t["missing"])
            + f". To replace it, make InfluxDB answer and rerun, or write elsewhere with --out (or remove {out})"
        )
    t["influx_url"] = influx.url if influx else None
    t["written_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    out.mkdir(parents=True, exist_ok=True)
    kept = series.keep_result(run, out)
    made = charts.run_charts(out, run, res, charts.spans(t))
    k = t["capacity"] and charts.knee(out, t["steps"], args.cpu_target)
    if k:
        made["knee"] = k
    # The live view scripts/bench.sh opened (k6's web dashboard), as k6 saved it beside the report.
    t["live_view"] = "k6-dashboard.html" if (out / "k6-dashboard.html").is_file() else None
    facts = broker_facts.load(run["broker"])
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), keep_trailing_newline=True)
    env.globals["mb"] = mb
    env.globals["utc"] = utc
    env.globals["network"] = network.describe
    text = env.get_template("report.md.j2").render(
        t=t,
        run=run.data,
        res=res,
        charts=made,
        broker_facts=broker_facts.markdown(facts) if facts else None,
        run_path=kept.name,
        influx_url=influx.url if influx else None,
        now=t["written_at"],
    )
    (out / "report.md").write_text(text)
    if isinstance(source, series.Recording):
        source.save(out, run, host_tag)
        history.record(source, run, t["mqttbs"])
    t["charts"] = made
    (out / "results.json").write_text(json.dumps(t, indent=1, default=str))
    for m in t["missing"]:
        print(f"missing: {m}", file=sys.stderr)
    if t["generator"]["warning"]:
        print(f"warning: {t['generator']['warning']}", file=sys.stderr)
    print(f"report: {out / 'report.md'}")
    return run, (res, t)


def compare(done, args, dirs):
    """The comparison of several runs, written as scripts/compare.sh writes
    its own (report.comparison.write): a column per run, named by its run id. done:
    [(run, (res, t) of its report just made, or None when a report was kept)]."""
    no_influx = "InfluxDB: not read (--no-influx)" if args.no_influx else None
    manifest = comparison.runs_manifest(
        [{"run_id": run.run_id, "influx": not args.no_influx, "no_influx": no_influx} for run, _ in done]
    )
    built = {run.run_id: b for run, b in done if b is not None}
    comparison.write(manifest, dirs, Path(args.out) / manifest["compare_id"], built)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="scripts/report.sh", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("run_ids", nargs="*", metavar="RUN", help="run ids, or run folders (default: the latest run)")
    ap.add_argument("--results", action="append", help="directory of result files (default: reports/)")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--cpu-target", type=float, default=75.0, help="capacity search CPU bound, %% (default 75)")
    ap.add_argument("--no-influx", action="store_true", help="report from the result files only")
    ap.add_argument(
        "--host-tag",
        metavar="TAG",
        help="the broker ran on this host beside the native stack, whose Telegraf tags this host's points "
        "broker=TAG (scripts/compare.sh --target on loopback): host CPU and memory are read under TAG",
    )
    ap.add_argument(
        "--merge",
        action="store_true",
        help="merge the instance files of each run again first; exit 99 when a merged verdict fails",
    )
    ap.add_argument(
        "--history",
        nargs=2,
        metavar=("BROKER", "SCENARIO"),
        help="every run of BROKER and SCENARIO in the result files: a table and a chart (reports/history-B-S/)",
    )
    args = ap.parse_args(argv)
    dirs = args.results or [str(RESULTS)]
    if args.history:
        return history.write(dirs, *args.history, args.out)
    if args.merge and not args.run_ids:
        print("error: --merge needs the RUN_ID of a run split over several k6 instances", file=sys.stderr)
        return 2
    # A run given as its folder renders from it; the others are run ids.
    folders = {a: Path(a) for a in args.run_ids if Path(a).is_dir()}
    dirs += [str(f) for f in folders.values()]
    merged = []
    try:
        for rid in (a for a in args.run_ids if a not in folders):
            code = merge(rid, dirs, args.merge)
            if args.merge and code is None:
                raise MissingData(
                    f"run {rid}: no instance file (<run id>.seg-<i>-of-<n>.json) in {', '.join(dirs)} "
                    "to merge: --merge is for runs split over several k6 instances"
                )
            merged.append(code)
        runs = [(find([folders[a]]), folders[a]) if a in folders else (find(dirs, a), None) for a in args.run_ids]
        runs = runs or [(find(dirs), None)]
    except MissingData as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # Run folders render from what they saved: InfluxDB is asked only for run ids.
    influx, problem = connect_influx(args.no_influx or not any(f is None for _, f in runs))
    done = []
    kept = 0
    for run, folder in runs:
        try:
            done.append(report_one(run, influx, problem, args, folder))
        except KeptReport as e:
            # Exit 3: what was asked (a new report) was not made, though a good one exists.
            print(f"error: {e}", file=sys.stderr)
            kept += 1
            done.append((run, None))  # its old figures are recomputed for the comparison
        except MissingData as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except (KeyError, TypeError, ValueError) as e:
            print(
                f"error: the result file {run.path} is not in the expected format ({e.__class__.__name__}: {e}); "
                "rerun the scenario with this version of k6/lib",
                file=sys.stderr,
            )
            return 2
    if len(done) > 1:
        compare(done, args, dirs)
    if kept:
        return 3
    return 99 if args.merge and 99 in merged else 0


if __name__ == "__main__":
    sys.exit(main())
