"""scripts/capacity.sh (--broker NAME [--native|--compose] | --target NAME=URL) [--scenario p2p] [--qos 1]
    [--cpu-target 75] [--p99-ms 50] [--precision 5] [--budget 15m] [--trial 30s]
    [--start-rate 1000] [--max-rate N] [--search-id ID] [--k6-prefix CMD] [--no-cpu] [-e NAME=VALUE ...]

Finds the highest rate at which the broker stays within the bounds (the
EMQX guide's "recommended load at 75% CPU"): trials at doubling rates until
one is out of bounds, then bisection between the last good and the first
bad rate until they are within --precision percent, or the --budget is spent.

A trial is good when the broker's CPU stays at or under --cpu-target,
normalised to the broker's CPUs (BROKER_CPUS under compose, else the
broker host's cores; the result names which), its p99 latency stays under
--p99-ms, nothing is lost at QoS >= 1, no connection fails, and the
generator reached the rate (it sent on schedule: slow acknowledgements and
deliveries are the broker's latency, judged against --p99-ms, never the
generator's). When the generator, not the broker, is what fell short (its
own sends late, or its CPU saturated), the search says so and reports no
broker capacity. Without InfluxDB the broker's CPU cannot be measured: the
search stops before any trial, unless --no-cpu asks it to judge only the
other bounds (the result says so).

Each trial is a real run with its own result file, run id
<search id>-tNN-r<rate>, and the k6 tag search=<search id> (the dashboards'
run_id variable selects a whole search). Writes
reports/capacity-<search id>/capacity.md, capacity.json and knee.png.
Exit: 0 a rate was found; 3 the generator was the limit; 1 no rate was
found, or an error; 2 bad input."""

import argparse
import json
import os
import re
import secrets
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from mqttbench import RESULTS, ROOT
from mqttbench.brokers import facts as broker_facts
from mqttbench.k6 import command as k6_command
from mqttbench.report.influx import Influx
from mqttbench.report.results import MissingData
from mqttbench.stack import StackError, open_stack
from mqttbench.stack.native_services import raise_open_files

from . import output
from .search import DEFAULT_CPU_TARGET, DEFAULT_PRECISION, GENERATOR, Bounds, Search, judge
from .trial import Target, run_trial


def seconds(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(s|m|h)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 30s, 15m or 1h")
    return float(m[1]) * {"s": 1, "m": 60, "h": 3600}[m[2]]


def positive(text):
    try:
        x = float(text)
    except ValueError:
        x = -1
    if x <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number > 0")
    return x


def parse(argv):
    ap = argparse.ArgumentParser(
        prog="scripts/capacity.sh", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--broker", help="the stack's broker (brokers/NAME): natively one with [native]; --compose: any")
    who.add_argument("--target", help="NAME=URL: a broker running elsewhere (not started or stopped here)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--native", dest="stack", action="store_const", const="native", default="native",
                       help="--broker runs on the native stack (default; started when it is down)")  # fmt: skip
    where.add_argument("--compose", dest="stack", action="store_const", const="compose",
                       help="--broker runs under compose (its profile started when it is down)")  # fmt: skip
    ap.add_argument("--scenario", default="p2p", help="a scenario of k6/scenarios (default p2p)")
    ap.add_argument("--qos", type=int, choices=[0, 1, 2], default=1)
    ap.add_argument("--cpu-target", type=positive, default=DEFAULT_CPU_TARGET, help="%% of the broker's CPUs")
    ap.add_argument("--p99-ms", type=positive, default=50.0)
    ap.add_argument("--precision", type=positive, default=DEFAULT_PRECISION, help="%% (default 5)")
    ap.add_argument("--budget", type=seconds, default=seconds("15m"), help="wall time for all trials (15m)")
    ap.add_argument("--trial", default="30s", help="how long each trial publishes (30s)")
    ap.add_argument("--start-rate", type=positive, default=1000.0, help="msg/s of the first trial (1000)")
    ap.add_argument("--max-rate", type=positive, default=1_000_000.0, help="msg/s never exceeded")
    ap.add_argument("--search-id", help="default: cap-<scenario>-<broker>-<time>-<random>")
    ap.add_argument("--k6-prefix", help="a command k6 runs under, e.g. 'systemd-run --scope -p CPUQuota=50%% --'")
    ap.add_argument(
        "--no-cpu",
        action="store_true",
        help="judge latency, loss, connections and the rate only: the broker's CPU is not a bound",
    )
    ap.add_argument("--results", default=str(RESULTS / "raw"), help="where trials write their results")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("-e", "--env", action="append", default=[], metavar="NAME=VALUE", help="scenario parameter")
    a = ap.parse_args(argv)
    seconds(a.trial)
    for kv in a.env:
        name = kv.split("=", 1)[0]
        if "=" not in kv:
            ap.error(f"-e takes NAME=VALUE, got {kv!r}")
        if name in ("RATE", "QOS", "DURATION", "RUN_ID", "P99_MS", "MQTT_URL", "BROKER", "STEPS"):
            ap.error(
                f"-e {name}=... is the search's to set: use --start-rate/--max-rate, --qos, --trial, "
                "--search-id, --p99-ms, --target or --broker"
            )
    if a.broker and a.broker not in broker_facts.names():
        ap.error(f"unknown broker '{a.broker}' (known: {' '.join(broker_facts.names())}); a broker this stack does "
                 "not start: --target NAME=URL")  # fmt: skip
    if not (ROOT / "k6/scenarios" / f"{a.scenario}.js").exists():
        known = sorted(p.stem for p in (ROOT / "k6/scenarios").glob("*.js"))
        ap.error(f"unknown scenario {a.scenario!r} (known: {' '.join(known)})")
    if a.target and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*=\S+", a.target):
        ap.error(f"--target takes NAME=URL, e.g. mosquitto-b=mqtt://10.0.0.5:1883, got {a.target!r}")
    if a.start_rate > a.max_rate:
        ap.error(f"--start-rate {a.start_rate:g} is above --max-rate {a.max_rate:g}")
    name = a.broker or a.target.split("=", 1)[0]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    a.search_id = a.search_id or f"cap-{a.scenario}-{name}-{stamp}-{secrets.token_hex(3)}"
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}", a.search_id):
        ap.error(f"--search-id {a.search_id!r}: letters, digits, '.', '_' or '-' (at most 100)")
    return a


def target_of(a):
    """The broker and how its CPU is read: the stack's broker (the stack says
    how: natively its process, normalised to the host's cores; under compose
    its container, normalised to BROKER_CPUS), or an external one (its host's
    CPU if a Telegraf there reports it)."""
    stack = None
    if a.broker:
        stack = open_stack(a.stack, a.broker)
        try:
            stack.ensure()
        except StackError as e:
            sys.exit(f"error: {e}")
    try:
        if stack:
            i = stack.influx()
            influx = Influx(i.url, i.token, i.org, i.bucket)
        else:
            influx = Influx.from_env()
    except MissingData as e:
        if not a.no_cpu:
            # Every trial would be judged on a CPU nobody measured: say so
            # now, before any load, rather than after a search.
            print(
                f"error: {e}: the broker's CPU, which the search judges on (--cpu-target), cannot be measured. "
                "Run the stack (scripts/stack.sh up, or --broker with --compose), set INFLUX_TOKEN, or pass "
                "--no-cpu to judge only latency, loss, connections and the rate",
                file=sys.stderr,
            )
            sys.exit(2)
        influx = None
        print(f"note: {e}: --no-cpu: the broker's CPU is not judged", file=sys.stderr)
    if a.target:
        k6_out = os.environ.get("MQTTBENCH_K6_OUT")
        name, url = a.target.split("=", 1)
        return Target(
            name,
            url,
            False,
            influx,
            k6_out,
            1.0,
            f"{name}'s host CPU (1 - idle), if a Telegraf there reports it with broker={name}",
        )
    cpus, basis = stack.broker_cpus()
    return Target(a.broker, stack.broker_url(), True, influx, stack.k6_out(), cpus, basis)


def main(argv=None):
    a = parse(argv)
    k6 = k6_command.binary()
    raise_open_files()  # the trials' thousands of connections; the stack's broker inherits it too
    target = target_of(a)
    bounds = Bounds(None if a.no_cpu else a.cpu_target)
    search = Search(a.start_rate, a.max_rate, a.precision)
    scenario = ROOT / "k6/scenarios" / f"{a.scenario}.js"
    trials = []
    t0 = time.time()
    longest = 0.0
    print(
        f"==> capacity search {a.search_id}: {a.scenario} on {target.name}, QoS {a.qos}, "
        f"{output.cpu_bound(a, target)}, p99 < {a.p99_ms:g} ms",
        file=sys.stderr,
    )
    while (rate := search.next_rate()) is not None:
        if trials and time.time() - t0 + longest > a.budget:
            search.stop = "budget"
            break
        run_id = f"{a.search_id}-t{len(trials) + 1:02d}-r{rate:g}"
        t, wall = run_trial(k6, scenario, target, rate, run_id, a, a.results)
        longest = max(longest, wall)
        judge(t, bounds)
        search.record(t)
        trials.append(t)
        verdict = "good" if t.good else "out of bounds: " + "; ".join(t.reasons)
        print(f"==> trial {len(trials)}: {rate:,.0f} msg/s: {verdict}", file=sys.stderr)
    result = output.summary(a, target, search, trials, time.time() - t0)
    out = Path(a.out) / f"capacity-{a.search_id}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "capacity.json").write_text(json.dumps(result, indent=1))
    output.write_report(out, result, trials, a.cpu_target)
    print(output.text(result, out), file=sys.stderr)
    if result["recommended"]:
        return 0
    return 3 if result["limit"] == GENERATOR else 1


if __name__ == "__main__":
    sys.exit(main())
