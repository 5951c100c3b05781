"""A comparison's runs, round after round, its manifest, and compare.md
with the verdicts (report.comparison.write); the exit code: 4 when a --fail-on bound
was breached (a marked run matters less than a regression found), else 1
when a column was marked."""

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from mqttbench import RESULTS
from mqttbench.compare.columns import Columns
from mqttbench.outcome import Stop, log, warn
from mqttbench.stack import choose_kind, load_influx_token, open_stack


def now():
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_average():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def report_module(module, *args):
    return subprocess.run([sys.executable, "-P", "-m", f"mqttbench.report.{module}", *args]).returncode


def compare(o):
    # Managed brokers: natively or under compose (as bench decides).
    if o.brokers and o.mode == "auto":
        o.mode = choose_kind(o.brokers)
    if o.mode == "auto":
        o.mode = "native"
    out = RESULTS / f"compare-{o.compare_id}"
    (out / "logs").mkdir(parents=True)
    (RESULTS / "raw").mkdir(parents=True, exist_ok=True)
    columns = Columns(o, out)
    load_start, started_at = load_average(), now()
    for k in range(1, o.n_rounds + 1):
        columns.round = k
        if o.n_rounds > 1:
            log(f"round {k} of {o.n_rounds}")
        for broker, profile in o.runs():
            columns.run_managed(broker, profile)
        for t in o.targets:
            columns.run_target(t)
    manifest = {
        "compare_id": o.compare_id, "scenario": o.scenario, "search": o.search,
        "rounds": {"n": o.n_rounds, **{k.removeprefix("--").replace("-", "_"): o.rounds[k] or None
                                       for k in ("--baseline", "--fail-on", "--save-baseline", "--against")}},
        "command": o.command, "mode": o.mode if o.brokers else "target", "cpu_target": json.loads(o.cpu_target),
        "search_options": " ".join(o.search_opts), "limits": limits(o), "started_at": started_at,
        "written_at": now(), "load_average": {"start": load_start, "end": load_average()}, "env": o.env,
        "brokers": columns.entries,
    }  # fmt: skip
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return report_and_exit(o, out, columns.marked)


def limits(o):
    if not o.brokers:
        return None
    if o.mode == "compose":
        env = open_stack("compose").env
        return (f"every broker's container: cpus BROKER_CPUS={env['BROKER_CPUS']}, mem_limit "
                f"BROKER_MEMORY={env['BROKER_MEMORY']} (.env)")  # fmt: skip
    return "native processes: no CPU or memory limit; the broker shares this host with the load generator"


def report_and_exit(o, out, marked):
    """compare.md from the manifest (report.comparison.write: the verdicts too)."""
    load_influx_token(o.mode if o.mode in ("native", "compose") else "native")
    rc = report_module("comparison.write", str(out / "manifest.json"))
    if rc == 2:
        raise Stop(None, 2)  # not comparable with the baseline: report.comparison.write said why
    if rc not in (0, 4):
        raise Stop("the comparison report failed: see the message above (the runs' own reports are in "
                   "reports/<run id>/)")  # fmt: skip
    # --docs: this comparison's section of the page (its marked columns too, with their reasons).
    if o.docs and report_module("comparison.docs_page", "write", str(out), "--docs", o.docs):
        raise Stop(f"--docs: the section of {o.docs} was not written: see the message above ({out}/compare.md was)")
    if marked:
        warn(f"{marked} of {(len(o.brokers) * len(o.impairs or [None]) + len(o.targets)) * o.n_rounds} runs marked "
             f"(in {out}/compare.md)")  # fmt: skip
        if rc != 4:
            return 1
    return rc
