#!/usr/bin/env python3
"""Benchmark of the k6 MQTT extension as a load generator (issue 3):

  delivered messages per generator CPU-second (p2p, 16-byte payload, QoS 0 and 1),
  generator RSS per idle connection at 10,000 connections,
  generator RSS after 1M and after 10M messages.

The k6 process is measured from outside (/proc), against the broker of the
native stack (scripts/stack.sh up). Prints its figures; writes them as JSON
with --json. Usage: scripts/bench-extension.py [--quick] [--json FILE]
"""
import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def k6_bin():
    return subprocess.check_output(["bash", "-c", f". {ROOT}/scripts/lib.sh; k6_bin"], text=True).strip()


def proc_cpu(pid):
    """utime+stime in seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def run(env, on_mark=None):
    """Runs the bench script; on_mark(name, pid) at each MARK line. Returns
    (cpu seconds of the whole k6 process, marks dict, RESULT json, wall)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # 10K connections
    args = [k6_bin(), "run", "--quiet", "--no-color", "--address", "", "--no-summary",
            str(ROOT / "k6/bench/extension.js")]
    e = dict(os.environ, K6_NO_USAGE_REPORT="true", **env)
    t0 = time.time()
    p = subprocess.Popen(args, env=e, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    marks, result = {}, None
    for line in p.stderr:
        if "MARK " in line:
            name = line.split("MARK ", 1)[1].split('"')[0].strip()
            marks[name] = {"t": time.time(), "cpu": proc_cpu(p.pid), "rss_kb": proc_rss_kb(p.pid)}
        elif "RESULT " in line:
            raw = line.split("RESULT ", 1)[1].rsplit('" source=', 1)[0]
            result = json.loads(raw.encode().decode("unicode_escape"))
        elif "level=error" in line or "level=warning" in line:
            sys.stderr.write(line)
    p.wait()
    if p.returncode != 0:
        raise SystemExit(f"k6 failed with exit code {p.returncode}")
    return marks, result, time.time() - t0


def throughput(qos, rate, seconds, clients, poll=None):
    """poll: the subscribers' poll_interval; "0" reads with a goroutine per connection."""
    env = {"MODE": "throughput", "QOS": str(qos), "RATE": str(rate), "SECONDS": str(seconds), "CLIENTS": str(clients)}
    if poll is not None:
        env["POLL_INTERVAL"] = poll
    marks, r, _ = run(env)
    cpu = marks["publish-end"]["cpu"] - marks["publish-start"]["cpu"]
    wall = marks["publish-end"]["t"] - marks["publish-start"]["t"]
    delivered = r["subscribe"]["unique"]
    return {"qos": qos, "target_rate": rate, "clients": clients, "reader": "goroutines" if poll == "0" else "poller",
            "seconds": round(wall, 2),
            "delivered": delivered, "lost": r["subscribe"]["lost"],
            "achieved_rate": round(r["publish"]["achieved_rate"]),
            "generator_cpu_seconds": round(cpu, 2),
            "delivered_per_cpu_second": round(delivered / cpu) if cpu else None,
            # Pub-to-sub latency of the run: whether the broker kept up at this rate.
            "latency_p50_ms": r["latency"]["p50"], "latency_p99_ms": r["latency"]["p99"]}


def idle(conns):
    marks, _, _ = run({"MODE": "idle", "CONNS": str(conns)})
    before, after = marks["before-connect"]["rss_kb"], marks["connected"]["rss_kb"]
    return {"connections": conns, "rss_before_mb": round(before / 1024, 1), "rss_after_mb": round(after / 1024, 1),
            "kb_per_connection": round((after - before) / conns, 2)}


def soak(rate):
    marks, _, _ = run({"MODE": "soak", "RATE": str(rate), "CLIENTS": "100", "SOAK_MARKS": "1,2,4,6,8,10"})
    a, b = marks["1M"]["rss_kb"], marks["10M"]["rss_kb"]
    return {"rss_after_1M_mb": round(a / 1024, 1), "rss_after_10M_mb": round(b / 1024, 1),
            "growth_percent": round(100 * (b - a) / a, 2),
            "rss_mb_by_million": {k: round(v["rss_kb"] / 1024, 1) for k, v in marks.items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=f"mqtt://127.0.0.1:{os.environ.get('MQTT_PORT', '1883')}")
    ap.add_argument("--quick", action="store_true", help="short runs (smoke check of this script)")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    os.environ["MQTT_URL"] = a.url
    secs = 3 if a.quick else 20
    out = {"host": {"cpus": os.cpu_count(), "kernel": platform.release()},
           "throughput": [throughput(0, 100000, secs, 100), throughput(0, 80000, secs, 100),
                          throughput(0, 50000, secs, 100), throughput(1, 50000, secs, 100),
                          throughput(0, 100000, secs, 100, poll="0")],
           "idle": idle(1000 if a.quick else 10000)}
    if not a.quick:
        out["soak"] = soak(100000)
    for t in out["throughput"]:
        print(f"p2p QoS {t['qos']} ({t['reader']}): {t['delivered']} delivered in {t['seconds']} s "
              f"(target {t['target_rate']}/s, achieved {t['achieved_rate']}/s, lost {t['lost']}), "
              f"generator CPU {t['generator_cpu_seconds']} s => {t['delivered_per_cpu_second']} msg per CPU-second; "
              f"latency p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms")
    i = out["idle"]
    print(f"idle: {i['connections']} connections, RSS {i['rss_before_mb']} -> {i['rss_after_mb']} MB "
          f"= {i['kb_per_connection']} KB per connection")
    if "soak" in out:
        s = out["soak"]
        print(f"soak: RSS {s['rss_after_1M_mb']} MB after 1M, {s['rss_after_10M_mb']} MB after 10M "
              f"({s['growth_percent']}% growth); by million messages: {s['rss_mb_by_million']}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
