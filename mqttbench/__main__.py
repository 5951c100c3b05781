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
import sys

from mqttbench import ROOT

# Commands whose logic is still shell, or that need the venv's libraries
# (InfluxDB's client, matplotlib), each run as its script (moving into this
# package step by step; the scripts stay the documented commands).
SCRIPTS = {
    "compare": ("scripts/compare.sh", "brokers, builds or saved runs (--run) side by side, regressions judged"),
    "report": ("scripts/report.sh", "turn a run's result file into its report"),
    "capacity": ("scripts/capacity.sh", "search the load at the broker's CPU target"),
}
# Commands of the package itself: their module's main(argv).
MODULES = {
    "bench": ("mqttbench.bench.__main__", "run a scenario against one broker and write its report"),
    "conformance": ("mqttbench.conformance", "check that a running broker does what the project assumes"),
    "stack": ("mqttbench.stack.__main__", "the stack: up, ensure, down, status, restart SERVICE"),
}


def parser():
    ap = argparse.ArgumentParser(
        prog="python -m mqttbench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (script, what) in SCRIPTS.items():
        p = sub.add_parser(name, help=what, description=f"{what} ({script}; its --help says the rest)", add_help=False)
        p.add_argument("args", nargs=argparse.REMAINDER, help=f"the arguments of {script}")
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
    if argv[:1] == ["compare"]:
        # compare --run FOLDER ... is the package's own; anything else is scripts/compare.sh's.
        from mqttbench.compare.__main__ import main as compare

        return compare(argv[1:])
    if argv[:1] and argv[0] in MODULES:
        return importlib.import_module(MODULES[argv[0]][0]).main(argv[1:])
    if argv[:1] and argv[0] in SCRIPTS:
        # Everything after the command is the script's, --help included.
        script = str(ROOT / SCRIPTS[argv[0]][0])
        os.execv(script, [script, *argv[1:]])
    args = parser().parse_args(argv)
    from mqttbench.generate import generate

    return generate(check=args.check)


if __name__ == "__main__":
    sys.exit(main())
