"""python -m mqttbench.k6 bin | argv [options] SCRIPT [-- K6 ARGS...]

bin: the path of this checkout's k6 build. argv: the k6 command line of a
run (mqttbench/k6/command.py), NUL-separated, for a shell caller:
mapfile -d '' cmd < <(python3 -P -m mqttbench.k6 argv ...). Anything after
`--` goes to k6 as given (a user's own flags, -e NAME=VALUE)."""

import argparse
import sys

from .command import binary, run_argv


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        argv, extra = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    ap = argparse.ArgumentParser(prog="python -m mqttbench.k6", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("bin", help="the path of this checkout's k6 build")
    a = sub.add_parser("argv", help="a run's k6 command line, NUL-separated")
    a.add_argument("script")
    a.add_argument("--k6", help='the binary (default: this checkout\'s build; "k6" in a container)')
    a.add_argument("--out", action="append", default=[], help="a k6 --out output (repeatable)")
    a.add_argument("--instance", default="0/1", metavar="I/N", help="instance I (0-based) of N: its segment")
    args = ap.parse_args(argv)
    if args.what == "bin":
        print(binary())
        return 0
    i, n = (int(x) for x in args.instance.split("/"))
    cmd = run_argv(args.script, k6=args.k6, out=args.out, instance=(i, n), extra=extra)
    sys.stdout.write("".join(f"{a}\0" for a in cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
