"""python -m mqttbench COMMAND [ARGS...]: the one entry point of the
orchestration. Each command's own --help says the rest.

Exit codes, the same in every command:
  0   done: the run passed, every column ran, a rate was found
  1   an error, or a comparison column marked (its report still written)
  2   bad input, refused before anything started
  3   capacity: the load generator was the limit, not the broker
  4   compare: a --fail-on bound was breached
  99  a run's thresholds failed (k6's own code; the report is written)"""

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path

from mqttbench import ROOT, settings
from mqttbench.k6 import command as k6_command
from mqttbench.stack import load_influx_token

# The package's commands: their module's main(argv).
MODULES = {
    "compare": ("mqttbench.compare.__main__", "brokers, builds or saved runs (--run) side by side, regressions judged"),
    "report": ("mqttbench.report.__main__", "turn a run's result file into its report"),
    "capacity": ("mqttbench.capacity.__main__", "search the load at the broker's CPU target"),
    "bench": ("mqttbench.bench.__main__", "run a scenario against one broker and write its report"),
    "conformance": ("mqttbench.conformance", "check that a running broker does what the project assumes"),
    "stack": ("mqttbench.stack.__main__", "the stack: up, ensure, down, status, restart SERVICE"),
    "generator-bench": (
        "mqttbench.generator_bench.__main__",
        "the generator's own figures (docs/benchmarks.md); `instances`: a run split over k6 processes",
    ),
}
# Commands that need the venv's libraries (InfluxDB's client, matplotlib,
# jinja2), with what scripts/setup.sh is asked to make when it is missing
# (capacity's trials need the k6 build too: all of it).
VENV = {"compare": ["python"], "report": ["python"], "capacity": []}
# Commands that read InfluxDB without a stack of their own (a run's report,
# capacity --target): the running stack's token when the caller gives none.
READS_INFLUX = {"report", "capacity"}


def in_venv(argv):
    """Goes on under the venv's python (made first if missing): returns only
    when this already is it."""
    py = settings.cache() / "venv/current/bin/python"
    if Path(sys.prefix).resolve() == py.parent.parent.resolve():
        return
    need = [py, *([Path(k6_command.binary())] if argv[0] == "capacity" else [])]
    if not all(os.access(p, os.X_OK) for p in need):
        made = subprocess.run([str(ROOT / "scripts/setup.sh"), *VENV[argv[0]]], check=False)
        if made.returncode:
            sys.exit(made.returncode)
    # -P: this checkout's package, found through PYTHONPATH, never the caller's directory.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    os.execv(py, [str(py), "-P", "-m", "mqttbench", *argv])


def parser():
    ap = argparse.ArgumentParser(
        prog="python -m mqttbench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, what) in MODULES.items():
        p = sub.add_parser(name, help=what, add_help=False)
        p.add_argument("args", nargs=argparse.REMAINDER, help=f"python -m mqttbench {name} --help says the rest")
    gen = sub.add_parser(
        "generate", help="write the generated files (dashboards, broker READMEs, tables, schema, policy)"
    )
    gen.add_argument("--check", action="store_true", help="write nothing; fail naming the stale files")
    return ap


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in MODULES:
        if argv[0] in VENV:
            in_venv(argv)
        if argv[0] in READS_INFLUX:
            load_influx_token()
        return importlib.import_module(MODULES[argv[0]][0]).main(argv[1:])
    args = parser().parse_args(argv)
    from mqttbench.generate import generate

    return generate(check=args.check)


if __name__ == "__main__":
    sys.exit(main())
