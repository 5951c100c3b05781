#!/usr/bin/env python3
"""Benchmark of the k6 MQTT extension as a load generator:

  delivered messages per generator CPU-second and RSS: QoS 0 at its limit, and
    the matrix QoS 0/1/2 x 16 B/4 KB at 10,000 delivered msg/s, p2p (--full:
    also fan-in and fan-out), with the QoS 1 and 2 ratios to QoS 0 of the run,
  pub-to-sub latency p50/p99 at 1,000 msg/s (p2p, QoS 0/1/2),
  generator RSS per idle connection at 10,000 connections,
  generator RSS after 1M and after 10M messages.

The k6 process is measured from outside (/proc), against the broker of the
native stack (scripts/stack.sh up). Prints its figures; writes them as JSON
with --json, and as the page docs/benchmarks.md (date, machine, command)
with --docs. --k6 measures another k6 build; --before K6 measures an earlier
build too, on the p2p matrix and the latency, run for run alternately, so
that a busy machine skews both alike. --profile takes CPU profiles (k6's
pprof endpoint) of the p2p 16 B runs and lists their top entries.
Usage: scripts/bench-extension.py [--quick] [--full] [--before K6] [--profile]
                                  [--json FILE] [--docs FILE] [--k6 PATH]
"""

import argparse
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from bench_extension_page import benchmarks_page, pprof_top

ROOT = Path(__file__).resolve().parent.parent


K6_OVERRIDE = os.environ.get("MQTTBENCH_K6")


def k6_bin():
    if K6_OVERRIDE:
        return K6_OVERRIDE
    return subprocess.check_output(["bash", "-c", f". {ROOT}/scripts/lib.sh; k6_bin"], text=True).strip()


def k6_version(k6=None):
    """The measured build, as `k6 version` names it (k6 and extension versions)."""
    out = subprocess.run([k6 or k6_bin(), "version"], capture_output=True, text=True, check=True).stdout
    return " ".join(out.split())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu(pid):
    """utime+stime in seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_kb(pid, field="VmRSS:"):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def fetch_profile(port, seconds, out):
    """A CPU profile of k6 over the next `seconds` (k6's --profiling-enabled endpoint)."""
    url = f"http://127.0.0.1:{port}/debug/pprof/profile?seconds={seconds}"
    with urllib.request.urlopen(url, timeout=seconds + 30) as r:  # noqa: S310 (loopback, our own k6)
        Path(out).write_bytes(r.read())


def run(env, k6=None, profile=None):
    """Runs the bench script (k6: that build); profile: a file to write a CPU
    profile of the publish phase to. Returns (marks dict, RESULT json, wall)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # 10K connections
    port = free_port() if profile else None
    api = ["--address", f"127.0.0.1:{port}", "--profiling-enabled"] if profile else ["--address", ""]
    args = [
        k6 or k6_bin(),
        "run",
        "--quiet",
        "--no-color",
        *api,
        "--no-summary",
        str(ROOT / "k6/bench/extension.js"),
    ]
    e = dict(os.environ, K6_NO_USAGE_REPORT="true", **env)
    t0 = time.time()
    p = subprocess.Popen(args, env=e, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    marks, result, profiler = {}, None, None
    for line in p.stderr:
        if "MARK " in line:
            name = line.split("MARK ", 1)[1].split('"')[0].strip()
            marks[name] = {
                "t": time.time(),
                "cpu": proc_cpu(p.pid),
                "rss_kb": proc_rss_kb(p.pid),
                "hwm_kb": proc_rss_kb(p.pid, "VmHWM:"),
            }
            if name == "publish-start" and profile:
                # The publishing phase, less a second at either end.
                secs = max(1, int(env["SECONDS"]) - 2)
                profiler = threading.Thread(target=fetch_profile, args=(port, secs, profile))
                time.sleep(1)
                profiler.start()
        elif "RESULT " in line:
            raw = line.split("RESULT ", 1)[1].rsplit('" source=', 1)[0]
            result = json.loads(raw.encode().decode("unicode_escape"))
        elif "level=error" in line or "level=warning" in line:
            sys.stderr.write(line)
    p.wait()
    if profiler:
        profiler.join()
    if p.returncode != 0:
        raise SystemExit(f"k6 failed with exit code {p.returncode}")
    return marks, result, time.time() - t0


def throughput(qos, rate, seconds, clients, poll=None, payload=16, topology="p2p", k6=None, profile=None):
    """rate: messages delivered per second; poll: the groups' poll_interval ("0":
    a reader goroutine per connection)."""
    env = {
        "MODE": "throughput",
        "QOS": str(qos),
        "RATE": str(rate),
        "SECONDS": str(seconds),
        "CLIENTS": str(clients),
        "PAYLOAD": str(payload),
        "TOPOLOGY": topology,
    }
    if poll is not None:
        env["POLL_INTERVAL"] = poll
    marks, r, _ = run(env, k6, profile)
    cpu = marks["publish-end"]["cpu"] - marks["publish-start"]["cpu"]
    wall = marks["publish-end"]["t"] - marks["publish-start"]["t"]
    delivered = r["subscribe"]["unique"]
    return {
        "qos": qos,
        "payload": payload,
        "topology": topology,
        "target_rate": rate,
        "clients": clients,
        "reader": "goroutines" if poll == "0" else "poller",
        "rss_mb": round(marks["publish-end"]["rss_kb"] / 1024, 1),
        "seconds": round(wall, 2),
        "delivered": delivered,
        "lost": r["subscribe"]["lost"],
        "achieved_rate": round(r["publish"]["achieved_rate"]),
        "generator_cpu_seconds": round(cpu, 2),
        "delivered_per_cpu_second": round(delivered / cpu) if cpu else None,
        # Pub-to-sub latency of the run: whether the broker kept up at this rate.
        "latency_p50_ms": r["latency"]["p50"],
        "latency_p99_ms": r["latency"]["p99"],
    }


def idle(conns):
    marks, _, _ = run({"MODE": "idle", "CONNS": str(conns)})
    before, after = marks["before-connect"]["rss_kb"], marks["connected"]["rss_kb"]
    return {
        "connections": conns,
        "rss_before_mb": round(before / 1024, 1),
        "rss_after_mb": round(after / 1024, 1),
        "kb_per_connection": round((after - before) / conns, 2),
    }


def soak(rate):
    marks, _, _ = run({"MODE": "soak", "RATE": str(rate), "CLIENTS": "100", "SOAK_MARKS": "1,2,4,6,8,10"})
    a, b = marks["1M"]["rss_kb"], marks["10M"]["rss_kb"]
    return {
        "rss_after_1M_mb": round(a / 1024, 1),
        "rss_after_10M_mb": round(b / 1024, 1),
        "growth_percent": round(100 * (b - a) / a, 2),
        "rss_mb_by_million": {k: round(v["rss_kb"] / 1024, 1) for k, v in marks.items()},
    }


def matrix(secs, full, builds, profiles):
    """Delivered per CPU-second at 10,000 delivered msg/s: QoS 0/1/2 x 16 B/4 KB,
    p2p (full: fan-in and fan-out too). For each topology and payload the three
    QoS levels run one after another, with every build in turn, so that the
    ratios of one build compare runs made close together. profiles: a
    directory for CPU profiles of the p2p 16 B runs (None: none)."""
    rows = []
    for topology in ("p2p", "fan-in", "fan-out") if full else ("p2p",):
        for payload in (16, 4096):
            for qos in (0, 1, 2):
                for build, k6 in builds.items():
                    if build != "after" and topology != "p2p":
                        continue  # an earlier build is compared on p2p only
                    prof = None
                    if profiles and topology == "p2p" and payload == 16:
                        prof = str(Path(profiles) / f"{build}-qos{qos}.pprof")
                    t = throughput(qos, 10000, secs, 100, payload=payload, topology=topology, k6=k6, profile=prof)
                    t["build"], t["profile"] = build, prof
                    rows.append(t)
    for t in rows:
        base = next(b for b in rows if b["qos"] == 0 and all(b[k] == t[k] for k in ("topology", "payload", "build")))
        t["of_qos0"] = round(t["delivered_per_cpu_second"] / base["delivered_per_cpu_second"], 3)
    return rows


def latency(secs, builds):
    """Pub-to-sub latency at 1,000 msg/s, p2p, 16 B: what coalescing acks must not raise."""
    rows = []
    for qos in (0, 1, 2):
        for build, k6 in builds.items():
            t = throughput(qos, 1000, secs, 100, k6=k6)
            t["build"] = build
            rows.append(t)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=f"mqtt://127.0.0.1:{os.environ.get('MQTT_PORT', '1883')}")
    ap.add_argument("--quick", action="store_true", help="short runs (smoke check of this script)")
    ap.add_argument("--full", action="store_true", help="the whole matrix: fan-in and fan-out too")
    ap.add_argument("--before", help="an earlier k6 build to compare with on the p2p matrix and latency")
    ap.add_argument("--profile", action="store_true", help="CPU profiles of the p2p 16 B runs (needs go)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--docs", help="write the figures as a Markdown page here (docs/benchmarks.md)")
    ap.add_argument("--k6", help="the k6 binary to measure (default: this checkout's build)")
    a = ap.parse_args()
    global K6_OVERRIDE
    K6_OVERRIDE = a.k6 or K6_OVERRIDE
    os.environ["MQTT_URL"] = a.url
    secs = 3 if a.quick else 20
    builds = {"after": k6_bin()}
    if a.before:
        builds = {"before": a.before, **builds}
    profiles = tempfile.mkdtemp(prefix="bench-extension-") if a.profile else None
    out = {
        "host": {"cpus": os.cpu_count(), "kernel": platform.release()},
        "k6": k6_version(),
        "throughput": [
            throughput(0, 100000, secs, 100),
            throughput(0, 80000, secs, 100),
            throughput(0, 50000, secs, 100),
            throughput(0, 100000, secs, 100, poll="0"),
        ],
        "matrix": matrix(secs, a.full, builds, profiles),
        "latency": latency(3 if a.quick else 10, builds),
        "idle": idle(1000 if a.quick else 10000),
    }
    if a.before:
        out["k6_before"] = k6_version(a.before)
    if profiles:
        out["profiles"] = {Path(t["profile"]).stem: pprof_top(t["profile"]) for t in out["matrix"] if t["profile"]}
    if not a.quick:
        out["soak"] = soak(100000)
    for t in out["throughput"]:
        print(
            f"p2p QoS {t['qos']} ({t['reader']}): {t['delivered']} delivered in {t['seconds']} s "
            f"(target {t['target_rate']}/s, achieved {t['achieved_rate']}/s, lost {t['lost']}), "
            f"generator CPU {t['generator_cpu_seconds']} s => {t['delivered_per_cpu_second']} msg per CPU-second; "
            f"latency p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms"
        )
    for t in out["matrix"]:
        print(
            f"{t['build']}: {t['topology']} QoS {t['qos']} {t['payload']} B: "
            f"{t['delivered']} delivered, lost {t['lost']}, "
            f"{t['delivered_per_cpu_second']} msg per CPU-second ({100 * t['of_qos0']:.0f}% of QoS 0), "
            f"RSS {t['rss_mb']} MB, latency p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms"
        )
    for t in out["latency"]:
        print(
            f"{t['build']}: latency at 1,000 msg/s, QoS {t['qos']}: "
            f"p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms"
        )
    for name, top in out.get("profiles", {}).items():
        print(f"profile {name}:\n{top}")
    i = out["idle"]
    print(
        f"idle: {i['connections']} connections, RSS {i['rss_before_mb']} -> {i['rss_after_mb']} MB "
        f"= {i['kb_per_connection']} KB per connection"
    )
    if "soak" in out:
        s = out["soak"]
        print(
            f"soak: RSS {s['rss_after_1M_mb']} MB after 1M, {s['rss_after_10M_mb']} MB after 10M "
            f"({s['growth_percent']}% growth); by million messages: {s['rss_mb_by_million']}"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2))
    if a.docs:
        # The command that reproduces the page: --json only saves a copy.
        command = ["scripts/bench-extension.py", *(["--quick"] if a.quick else []), *(["--full"] if a.full else [])]
        command += [*(["--before", a.before] if a.before else []), *(["--profile"] if a.profile else [])]
        command += ["--url", a.url, *(["--k6", K6_OVERRIDE] if K6_OVERRIDE else []), "--docs", a.docs]
        Path(a.docs).write_text(benchmarks_page(out, " ".join(command)))


if __name__ == "__main__":
    main()
