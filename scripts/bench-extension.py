#!/usr/bin/env python3
"""Benchmark of the k6 MQTT extension as a load generator:

  delivered messages per generator CPU-second (p2p, 16-byte payload, QoS 0 and 1),
  generator RSS per idle connection at 10,000 connections,
  generator RSS after 1M and after 10M messages.

The k6 process is measured from outside (/proc), against the broker of the
native stack (scripts/stack.sh up). Prints its figures; writes them as JSON
with --json, and as the page docs/benchmarks.md (date, machine, command)
with --docs. --k6 measures another k6 build (a before/after comparison).
Usage: scripts/bench-extension.py [--quick] [--json FILE] [--docs FILE] [--k6 PATH]
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from bench_transports import splice_transports, transports, transports_section  # noqa: E402

K6_OVERRIDE = os.environ.get("MQTTBENCH_K6")


def k6_bin():
    if K6_OVERRIDE:
        return K6_OVERRIDE
    return subprocess.check_output(["bash", "-c", f". {ROOT}/scripts/lib.sh; k6_bin"], text=True).strip()


def k6_version():
    """The measured build, as `k6 version` names it (k6 and extension versions)."""
    out = subprocess.run([k6_bin(), "version"], capture_output=True, text=True, check=True).stdout
    return " ".join(out.split())


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
    args = [
        k6_bin(),
        "run",
        "--quiet",
        "--no-color",
        "--address",
        "",
        "--no-summary",
        str(ROOT / "k6/bench/extension.js"),
    ]
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


def throughput(qos, rate, seconds, clients, poll=None, template=None, url=None, transport="TCP"):
    """poll: the subscribers' poll_interval; "0" reads with a goroutine per
    connection. template: a PAYLOAD_TEMPLATE instead of 16-byte filler.
    url: another listener of the broker (TLS, WebSocket), named transport."""
    env = {"MODE": "throughput", "QOS": str(qos), "RATE": str(rate), "SECONDS": str(seconds), "CLIENTS": str(clients)}
    if url:
        env["MQTT_URL"] = url
    if poll is not None:
        env["POLL_INTERVAL"] = poll
    if template:
        env["PAYLOAD_TEMPLATE"] = template
    marks, r, _ = run(env)
    cpu = marks["publish-end"]["cpu"] - marks["publish-start"]["cpu"]
    wall = marks["publish-end"]["t"] - marks["publish-start"]["t"]
    delivered = r["subscribe"]["unique"]
    return {
        "qos": qos,
        "target_rate": rate,
        "clients": clients,
        "reader": "goroutines" if poll == "0" or transport != "TCP" else "poller",
        "transport": transport,
        "payload": f"JSON template, {r['payload']} B" if template else f"{r['payload']} B",
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


def machine():
    """What the figures were measured on: they move with the CPU."""
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return f"{os.cpu_count()} cores ({model}), {mem_kb / 1048576:.0f} GiB, Linux {platform.release()}"


def benchmarks_page(out, command):
    """docs/benchmarks.md: the figures of one run of this script."""
    rows = [
        f"| QoS {t['qos']}, {t['target_rate']:,} msg/s target, {t['reader']} | {t['achieved_rate']:,} | "
        f"{t['delivered']:,} | {t['lost']} | {t['delivered_per_cpu_second'] or 0:,} | "
        f"{t['latency_p50_ms']} / {t['latency_p99_ms']} |"
        for t in out["throughput"]
    ]
    i = out["idle"]
    lines = [
        "# Benchmarks of the load generator",
        "",
        "Written by `scripts/bench-extension.py --docs docs/benchmarks.md` (with the native stack up:",
        "`scripts/stack.sh up`); rerun it to refresh this page. Generator and broker share the machine.",
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- machine: {machine()}",
        f"- command: `{command}`",
        f"- k6: `{out.get('k6', 'this checkout')}`",
        "",
        "## Delivered messages per generator CPU-second",
        "",
        "p2p through Mosquitto on loopback: 100 publishers, 100 subscribers, 16-byte payloads. The CPU is",
        "the k6 process's (utime + stime) while it publishes and drains. The latency shows whether the",
        "broker kept up at that rate; where it did not, its sends pile up and each read takes several",
        "messages, which makes the generator look cheaper.",
        "",
        "| run | achieved msg/s | delivered | lost | delivered per CPU-second | latency p50 / p99 ms |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        *transports_section(out["transports"], command),
        "## Memory",
        "",
        f"- RSS per idle connection: **{i['kb_per_connection']} KB** at {i['connections']:,} connections "
        f"({i['rss_before_mb']} → {i['rss_after_mb']} MB).",
    ]
    if "soak" in out:
        s = out["soak"]
        lines.append(
            f"- RSS growth from 1M to 10M messages (QoS 0, 100K msg/s): **{s['growth_percent']}%** "
            f"({s['rss_after_1M_mb']} → {s['rss_after_10M_mb']} MB)."
        )
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=f"mqtt://127.0.0.1:{os.environ.get('MQTT_PORT', '1883')}")
    ap.add_argument("--tls-url", default=f"mqtts://127.0.0.1:{os.environ.get('MQTTS_PORT', '8883')}")
    ap.add_argument("--ws-url", default=f"ws://127.0.0.1:{os.environ.get('WS_PORT', '8083')}/mqtt")
    ap.add_argument(
        "--tls-ca",
        default=str(Path(os.environ.get("MQTTBENCH_STATE", ROOT / ".state")) / "tls/ca.pem"),
        help="the CA of the broker's TLS listener (default: the native stack's)",
    )
    ap.add_argument("--quick", action="store_true", help="short runs (smoke check of this script)")
    ap.add_argument(
        "--transports-only",
        action="store_true",
        help="measure only the transports section and replace it in the --docs page, keeping the rest",
    )
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--docs", help="write the figures as a Markdown page here (docs/benchmarks.md)")
    ap.add_argument("--k6", help="the k6 binary to measure (default: this checkout's build)")
    a = ap.parse_args()
    global K6_OVERRIDE
    K6_OVERRIDE = a.k6 or K6_OVERRIDE
    os.environ["MQTT_URL"] = a.url
    os.environ["TLS_CA"] = a.tls_ca
    secs = 3 if a.quick else 20
    if a.transports_only:
        out = {"k6": k6_version(), "throughput": [], "transports": transports(throughput, a, secs)}
    else:
        out = {
            "host": {"cpus": os.cpu_count(), "kernel": platform.release()},
            "k6": k6_version(),
            "throughput": [
                throughput(0, 100000, secs, 100),
                throughput(0, 80000, secs, 100),
                throughput(0, 50000, secs, 100),
                throughput(1, 50000, secs, 100),
                throughput(0, 100000, secs, 100, poll="0"),
            ],
            "idle": idle(1000 if a.quick else 10000),
            "transports": transports(throughput, a, secs),
        }
        if not a.quick:
            out["soak"] = soak(100000)
    report(out)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2))
    if a.docs:
        # The command that reproduces the page: --json only saves a copy.
        command = ["scripts/bench-extension.py", *(["--quick"] if a.quick else []), "--url", a.url]
        command += ["--tls-url", a.tls_url, "--ws-url", a.ws_url]
        if K6_OVERRIDE:
            command += ["--k6", K6_OVERRIDE]
        if a.transports_only:
            command.append("--transports-only")
        command += ["--docs", a.docs]
        if a.transports_only:
            section = transports_section(out["transports"], " ".join(command))
            Path(a.docs).write_text(splice_transports(a.docs, section))
        else:
            Path(a.docs).write_text(benchmarks_page(out, " ".join(command)))


def report(out):
    """Prints the figures."""
    for t in out["throughput"] + out["transports"]["rows"]:
        print(
            f"p2p {t['transport']} {t['payload']} QoS {t['qos']} ({t['reader']}): {t['delivered']} delivered in "
            f"{t['seconds']} s (target {t['target_rate']}/s, achieved {t['achieved_rate']}/s, lost {t['lost']}), "
            f"generator CPU {t['generator_cpu_seconds']} s => {t['delivered_per_cpu_second']} msg per CPU-second; "
            f"latency p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms"
        )
    if "idle" in out:
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


if __name__ == "__main__":
    main()
