"""The one place a k6 command line is built. Every caller goes through
run_argv: the stacks' k6_command (bench), compare's targets, the capacity
search's trials, the generator's own benchmarks (generator_bench) and the tests
(tests/project/test_package.py checks that no other builds one). Where k6
is the build of this checkout: binary()."""

import hashlib

from mqttbench import ROOT, settings

EXTENSION = ROOT / "k6/extension"


def build_key():
    """Ten hex digits of the extension's sources (its .go files less tests,
    go.mod, go.sum): a change of source is a build of its own in the cache."""
    files = sorted(
        p.relative_to(EXTENSION).as_posix()
        for p in EXTENSION.rglob("*")
        if p.is_file() and (p.suffix == ".go" or p.name in ("go.mod", "go.sum")) and not p.name.endswith("_test.go")
    )
    listing = "".join(f"{hashlib.sha256((EXTENSION / f).read_bytes()).hexdigest()}  ./{f}\n" for f in files)
    return hashlib.sha256(listing.encode()).hexdigest()[:10]


def binary():
    """This checkout's k6 build (scripts/setup.sh k6 makes it): the cache's, keyed by k6's version and build_key."""
    return str(settings.cache() / f"k6/{settings.get('K6_VERSION')}-{build_key()}/k6")


def segment_of(index, count):
    """The execution segment of instance index (0-based) of count, with the
    sequence every instance shares: k6 stripes the VUs over it."""
    if count <= 1:
        return []
    sequence = ",".join(["0", *(f"{j}/{count}" for j in range(1, count)), "1"])
    return ["--execution-segment", f"{index}/{count}:{index + 1}/{count}", "--execution-segment-sequence", sequence]


def run_argv(script, *, k6=None, quiet=False, address="", out=(), summary_export=None, no_summary=False,
             profiling=False, instance=(0, 1), segment=None, env=(), extra=()):  # fmt: skip
    """`k6 run` of script: k6 the binary (default: this checkout's build;
    "k6" in compose's k6 service); address: its REST API ("" none); out:
    its --out outputs; instance: (index, count) of a run split over several
    processes in equal parts, or segment: (segment, sequence) as k6 reads
    them; env: -e NAME=VALUE parameters, in order; extra: k6 arguments as a
    user gave them."""
    argv = [k6 or binary(), "run"]
    if quiet:
        argv += ["--quiet", "--no-color"]
    argv += ["--address", address]
    if profiling:
        argv.append("--profiling-enabled")
    if no_summary:
        argv.append("--no-summary")
    for o in out:
        argv += ["--out", o]
    if summary_export:
        argv += ["--summary-export", str(summary_export)]
    if segment:
        argv += ["--execution-segment", segment[0], "--execution-segment-sequence", segment[1]]
    else:
        argv += segment_of(*instance)
    for kv in env:
        argv += ["-e", kv]
    return [*argv, *extra, str(script)]
