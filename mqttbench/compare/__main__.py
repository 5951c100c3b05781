"""python -m mqttbench compare (scripts/compare.sh): brokers side by side, or
saved runs (--run FOLDER); --help: every option (options.USAGE)."""

import argparse
import sys
from pathlib import Path

from mqttbench import RESULTS
from mqttbench.compare import USAGE
from mqttbench.compare.options import parse
from mqttbench.compare.run import compare
from mqttbench.outcome import Stop, end
from mqttbench.report.comparison import write as comparison
from mqttbench.report.results import MissingData, find


def compare_folders(folders, out_root):
    """Writes the comparison of run folders; returns the compare folder."""
    # influx: each column's InfluxDB side is read, from the series its folder saved.
    manifest = comparison.runs_manifest(
        [{"run_id": find([f]).run_id, "folder": str(f), "influx": True} for f in folders]
    )
    out = Path(out_root) / manifest["compare_id"]
    comparison.write(manifest, [str(f) for f in folders], out)
    return out


def compare_saved(argv):
    ap = argparse.ArgumentParser(
        prog="python -m mqttbench compare", description=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--run", action="append", required=True, metavar="FOLDER", help="a run's folder (twice or more)")
    ap.add_argument("--out", default=str(RESULTS), help="where compare-<time>/ is written")
    args = ap.parse_args(argv)
    folders = [Path(f) for f in args.run]
    for f in folders:
        if not f.is_dir():
            print(f"error: --run {f}: not a folder (a run's folder: reports/<run_id>)", file=sys.stderr)
            return 2
    if len(folders) < 2:
        print("error: --run needs two run folders or more to compare", file=sys.stderr)
        return 2
    try:
        out = compare_folders(folders, args.out)
    except MissingData as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"comparison: {out / 'compare.md'}")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--run" in argv or any(a.startswith("--run=") for a in argv):
        return compare_saved(argv)
    try:
        return compare(parse(argv))
    except Stop as e:
        return end(e)


if __name__ == "__main__":
    sys.exit(main())
