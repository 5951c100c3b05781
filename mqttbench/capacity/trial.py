"""One trial: a real run of the scenario at one rate, with its own result
file, and what it measured (the result file and InfluxDB)."""

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

from mqttbench.brokers import facts as broker_facts
from mqttbench.k6.command import run_argv
from mqttbench.report import tables
from mqttbench.report.results import SCHEMA as RESULT_SCHEMA
from mqttbench.report.results import Run

from .search import Trial


class Target:
    """Where the trials send their load, and how their CPU is read."""

    def __init__(self, name, url, managed, influx, k6_out, broker_cpus, cpu_basis):
        self.name, self.url, self.managed = name, url, managed
        self.influx = influx  # report.influx.Influx, or None
        self.k6_out = k6_out  # k6 --out for the dashboards, or None
        self.broker_cpus = broker_cpus  # what broker CPU is normalised to
        self.cpu_basis = cpu_basis


def run_trial(k6, scenario, target, rate, run_id, args, results_dir):
    """Runs the scenario at rate; returns the judged-later Trial."""
    env = dict(
        os.environ,
        K6_NO_USAGE_REPORT="true",
        MQTT_URL=target.url,
        BROKER=target.name,
        RUN_ID=run_id,
        RESULTS_DIR=str(results_dir),
        RATE=f"{rate:g}",
        QOS=str(args.qos),
        DURATION=args.trial,
        P99_MS=f"{args.p99_ms:g}",
        SEARCH_ID=args.search_id,
        **broker_facts.deviations_env(target.name),
    )
    out = [target.k6_out] if target.k6_out else []
    cmd = [*shlex.split(args.k6_prefix or ""), *run_argv(scenario, k6=k6, quiet=True, out=out, env=args.env)]
    t0 = time.time()
    p = subprocess.run(cmd, env=env, text=True, capture_output=True)
    wall = time.time() - t0
    path = Path(results_dir) / f"{run_id}.json"
    t = Trial(rate=rate, run_id=run_id)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = None
    if not data or data.get("schema") != RESULT_SCHEMA:
        tail = (p.stdout + p.stderr).strip().splitlines()[-5:]
        t.error = f"the run at {rate:g} msg/s wrote no result (k6 exit code {p.returncode}): " + " | ".join(tail)
        return t, wall
    measure(t, Run(path, data), target)
    return t, wall


def measure(t, run, target):
    """Fills t from the result file and, for CPU and memory, InfluxDB."""
    c = run["counts"]
    steps = run.data.get("steps") or []
    t.achieved_rate = sum(s["achieved_rate"] for s in steps) / len(steps) if steps else 0.0
    t.passed = run["passed"]
    t.cause, t.diagnosis = run["diagnosis"]["cause"], run["diagnosis"]["text"]
    t.published, t.received, t.lost = c["mqtt_publishes"], c["mqtt_receives"], c["mqtt_lost"]
    lat = tables.latency(run)
    t.latency_p50, t.latency_p99 = lat.get("p50"), lat.get("p99")
    t.send_lag_p99 = tables.latency(run, "send_lag").get("p99")
    expected = t.received - c.get("mqtt_duplicates", 0) + t.lost
    t.success_pct = 100.0 * (t.received - c.get("mqtt_duplicates", 0)) / expected if expected else None
    g = run.data.get("generator") or {}
    dur = run.data.get("duration_s") or 0
    cores = (run.data.get("host") or {}).get("cpus") or os.cpu_count()
    if g and dur:
        t.generator_cpu_pct = 100.0 * ((g.get("cpu_user_s") or 0) + (g.get("cpu_system_s") or 0)) / dur / cores
    if target.influx is None or not steps:
        return
    start, end = steps[0]["start"], steps[-1]["end"]
    # Telegraf collects every interval and writes every flush interval: the
    # step's last points reach InfluxDB that much after it ended.
    lag = sum(_seconds(os.environ.get(k, "5s")) for k in ("TELEGRAF_INTERVAL", "TELEGRAF_FLUSH_INTERVAL")) + 1
    time.sleep(max(0.0, end / 1000 + lag - time.time()))
    res = tables.Resources(target.influx, run)
    # The publish window only: the ramp and the drain would dilute it.
    t.host_cpu_pct = tables.mean(tables.within(res.host_cpu, start, end))
    t.mem_pct = tables.mean(tables.within(res.mem_pct, start, end))
    core = tables.mean(tables.within(res.broker_cpu, start, end))
    rss = tables.within(res.broker_rss, start, end)
    t.broker_rss_mb = max(rss) / 2**20 if rss else None
    if core is not None:
        t.broker_cpu_core_pct = core
        t.broker_cpu_pct = core / target.broker_cpus
    elif t.host_cpu_pct is not None and not target.managed:
        # An external broker without a process series: its host's CPU
        # stands for it (cpu_basis says so).
        t.broker_cpu_pct = t.host_cpu_pct


def _seconds(text):
    """Telegraf's durations as this stack sets them: 500ms, 1s, 5s, 1m."""
    for unit, f in (("ms", 0.001), ("s", 1), ("m", 60)):
        if text.endswith(unit) and text[: -len(unit)].replace(".", "", 1).isdigit():
            return float(text[: -len(unit)]) * f
    return 5.0
