"""Benchmark of a test split over several k6 processes on this host (k6's
execution segments, as `scripts/bench.sh --instances` runs them):

  4 processes x 4,500 connections = 18,000 connections to one Mosquitto
  (p2p: 9,000 publishers at 1 msg/s each, 9,000 subscribers, QoS 1),
  all connected, merged into one result by `k6 x mqtt-merge`;
  each generator process's peak RSS, and RSS per connection;
  the time the merge takes.

Starts its own Mosquitto on loopback with the open-files limit raised to the
hard limit (Mosquitto takes as many connections as it has descriptors), so
that the stack's broker is untouched. Prints its figures; writes them as
the page docs/benchmarks-instances.md with --docs.
Usage: python -m mqttbench generator-bench instances [--instances 4] [--connections 18000]
         [--duration 60s] [--docs FILE]
"""

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mqttbench import ROOT
from mqttbench.k6.command import run_argv
from mqttbench.stack.native_services import raise_open_files

from .process import k6_bin

PORT = int(os.environ.get("MQTTBENCH_INSTANCES_PORT", "11899"))


def start_mosquitto(workdir):
    conf = workdir / "mosquitto.conf"
    conf.write_text(f"listener {PORT} 127.0.0.1\nallow_anonymous true\nmax_connections -1\nsys_interval 1\n")
    proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", PORT)) == 0:
                return proc
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"mosquitto did not listen on 127.0.0.1:{PORT}")


def baseline_rss_kb(k6, results, max_instances=None):
    """Peak RSS of one process with 2 connections: what every process costs
    before its connections (k6, the script's VUs, the extension)."""
    run_id = f"bench-baseline-{max_instances or 'default'}"
    extra = {"MAX_INSTANCES": str(max_instances)} if max_instances else {}
    codes = run_instances(k6, 1, 2, "5s", results, run_id, extra)
    if codes != [0]:
        sys.exit(f"the baseline run failed: {(results / 'instance-1.log').read_text()[-1500:]}")
    return json.loads((results / f"{run_id}.json").read_text())["generator"]["max_rss_kb"]


def run_instances(k6, n, connections, duration, results, run_id, extra=None):
    half = connections // 2
    env = dict(
        os.environ,
        K6_NO_USAGE_REPORT="true",
        MQTT_URL=f"mqtt://127.0.0.1:{PORT}",
        RUN_ID=run_id,
        RESULTS_DIR=str(results),
        PUBLISHERS=str(half),
        SUBSCRIBERS=str(half),
        RATE=str(half),
        QOS="1",
        DURATION=duration,
        CONNECT_RATE="2000",
        **(extra or {}),
    )
    procs = []
    for i in range(n):
        args = run_argv(ROOT / "k6/scenarios/p2p.js", k6=k6, quiet=True, instance=(i, n))
        log = open(results / f"instance-{i + 1}.log", "w")
        procs.append(
            subprocess.Popen(
                args, env=dict(env, LOCAL_ADDRESS=f"127.0.0.{i + 2}"), stdout=log, stderr=subprocess.STDOUT
            )
        )
    return [p.wait() for p in procs]


def benchmarks_page(out, command):
    m = out["merged"]
    lines = [
        "# Benchmark of a test split over several k6 processes",
        "",
        f"Written by `{command}`; rerun it to refresh this page. Generators and broker share the machine.",
        "",
        f"- date: {out['date']}",
        f"- machine: {out['machine']}",
        f"- k6: `{out['k6']}`",
        "",
        f"p2p through Mosquitto on loopback, split by k6's execution segments over {out['instances']} k6 processes "
        f"on this host, each from its own loopback address: {out['connections']:,} connections "
        f"({out['connections'] // 2:,} publishers at 1 msg/s each, as many subscribers, QoS 1), "
        f"held for {out['duration']} at {out['rate']:,} msg/s.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| connections opened (merged) | {m['connects']:,} of {out['connections']:,} |",
        f"| merged verdict | {'passed' if m['passed'] else 'FAILED'} ({m['instances']} instances) |",
        f"| messages published / received / lost (merged) | {m['published']:,} / {m['received']:,} / {m['lost']:,} |",
        f"| pub-to-sub latency p50 / p99 / p99.99 ms (merged histograms) | {m['p50']} / {m['p99']} / {m['p9999']} |",
        f"| peak RSS per process MB | {', '.join(str(x) for x in out['rss_mb'])} |",
        f"| RSS per connection ((sum of peak RSS - {out['instances']} x {out['baseline_rss_mb']} MB of a process "
        f"with 2 connections) / connections) | **{out['kb_per_connection']} KB** |",
        f"| merge time (`k6 x mqtt-merge`, {m['instances']} files, {out['result_mb']} MB) | **{out['merge_s']} s** |",
        "",
        "These connections are busy, unlike the idle ones of docs/benchmarks.md (RSS per idle connection): each "
        "QoS 1 publisher keeps its in-flight window (max_inflight 1024) and each subscriber its stream state. "
        f"The process baseline includes the scenario's MAX_INSTANCES idle VUs (32 by default, "
        f"{out['vu_kb']:,.0f} KB each: a process with MAX_INSTANCES=1 peaks at {out['baseline_one_vu_rss_mb']} MB).",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m mqttbench generator-bench instances",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--instances", type=int, default=4)
    ap.add_argument("--connections", type=int, default=18000)
    ap.add_argument("--duration", default="60s")
    ap.add_argument("--docs", help="write the figures as a Markdown page here")
    a = ap.parse_args(argv)
    hard = raise_open_files()  # each process may hold as many descriptors as the hard limit allows
    per = a.connections // a.instances
    if per + 100 > hard:
        sys.exit(
            f"--connections {a.connections} over --instances {a.instances} is {per} per process, "
            f"above the open-files hard limit {hard}: use more instances"
        )
    k6 = k6_bin()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results = work / "raw"
        results.mkdir()
        broker = start_mosquitto(work)
        try:
            base = baseline_rss_kb(k6, results)
            base_one = baseline_rss_kb(k6, results, 1)
            run_id = f"bench-instances-{int(time.time())}"
            codes = run_instances(k6, a.instances, a.connections, a.duration, results, run_id)
            t0 = time.time()
            merge = subprocess.run(
                [k6, "x", "mqtt-merge", run_id, "--dir", str(results)],
                capture_output=True,
                text=True,
                env=dict(os.environ, K6_NO_USAGE_REPORT="true"),
            )
            merge_s = round(time.time() - t0, 2)
        finally:
            broker.terminate()
            broker.wait(10)
        if merge.returncode not in (0, 99):
            sys.exit(f"merge failed ({merge.returncode}): {merge.stdout}{merge.stderr}")
        merged = json.loads((results / f"{run_id}.json").read_text())
        inst = [json.loads(p.read_text()) for p in sorted(results.glob(f"{run_id}.seg-*.json"))]
        result_mb = round(sum(p.stat().st_size for p in results.glob(f"{run_id}.seg-*.json")) / 2**20, 1)
        logs = {p.name: p.read_text()[-600:] for p in results.glob("instance-*.log")}
    rss = [i["generator"]["max_rss_kb"] for i in inst]
    c, lat = merged["counts"], merged["latency_ms"]["pub_to_sub"]
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "k6": " ".join(subprocess.run([k6, "version"], capture_output=True, text=True).stdout.split()),
        "instances": a.instances,
        "connections": a.connections,
        "duration": a.duration,
        "rate": a.connections // 2,
        "exit_codes": codes,
        "merged": {
            "passed": merged["passed"],
            "cause": merged["diagnosis"]["cause"],  # the merge's verdict, why it did not pass
            "instances": len(merged["merge"]["instances"]),
            "connects": c["mqtt_connects"],
            "published": c["mqtt_publishes"],
            "received": c["mqtt_receives"],
            "lost": c["mqtt_lost"],
            "p50": lat.get("p50"),
            "p99": lat.get("p99"),
            "p9999": lat.get("p9999"),
        },
        "rss_mb": [round(x / 1024, 1) for x in rss],
        "baseline_rss_mb": round(base / 1024, 1),
        "baseline_one_vu_rss_mb": round(base_one / 1024, 1),
        "vu_kb": (base - base_one) / 31,
        "kb_per_connection": round((sum(rss) - a.instances * base) / a.connections, 2),
        "merge_s": merge_s,
        "result_mb": result_mb,
    }
    print(json.dumps(out, indent=1))
    if not merged["passed"] or c["mqtt_connects"] < a.connections:
        print(merge.stdout + merge.stderr, file=sys.stderr)
        for name, text in logs.items():
            print(f"--- {name}\n{text}", file=sys.stderr)
    if a.docs:
        command = "python -m mqttbench generator-bench instances" + (f" --docs {a.docs}" if a.docs else "")
        Path(a.docs).write_text(benchmarks_page(out, command))
    return 0 if merged["passed"] and c["mqtt_connects"] >= a.connections else 1


if __name__ == "__main__":
    sys.exit(main())
