"""docs/benchmarks.md from the figures of one run of scripts/bench-extension.py,
and the top entries of its CPU profiles."""

import os
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What a profile's top lists: the extension's functions and the system calls
# they make (the rest is the Go runtime and k6, which these call into).
PROFILE_SHOW = r"mqtt-bench/k6/extension|^syscall\.(write|read|Recvmsg|EpollWait)$|^runtime\.(mcall|futex)$"


def pprof_top(path, entries=14):
    """The top entries (by cumulative share) of a CPU profile, as `go tool pprof -top -cum` lists them."""
    out = subprocess.run(
        ["go", "tool", "pprof", "-top", "-cum", f"-nodecount={entries}", f"-show={PROFILE_SHOW}", path],
        cwd=ROOT / "k6/extension",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    keep = [line for line in out.splitlines() if "%" in line and not line.startswith("Showing")]
    return "\n".join(line.replace("github.com/mqtt-bench/mqtt-bench/k6/extension/", "") for line in keep)


def machine():
    """What the figures were measured on: they move with the CPU."""
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return f"{os.cpu_count()} cores ({model}), {mem_kb / 1048576:.0f} GiB, Linux {platform.release()}"


def pct(x):
    return f"{100 * x:.0f}%"


def matrix_section(out):
    builds = sorted({t["build"] for t in out["matrix"]}, key=lambda b: b != "before")
    lines = [
        "## QoS 0, 1 and 2: delivered per generator CPU-second",
        "",
        "Mosquitto on loopback, 10,000 messages delivered per second for the run's length. p2p: 100",
        "publishers, each to its own subscriber; fan-in: 100 publishers, one subscriber of them all;",
        "fan-out: one publisher at 100 msg/s, 100 subscribers of its topic. For each topology and",
        'payload the three QoS levels run one after another, so that their ratios ("of QoS 0") compare',
        "runs made close together on a shared machine. RSS: the k6 process's at the end of the run.",
    ]
    if len(builds) > 1:
        lines += [
            "`before` is the earlier build (`--before`), measured run for run alternately with this one",
            f"(`{out.get('k6_before', '')}`).",
        ]
    lines += [
        "",
        "| build | topology | payload | QoS | delivered | lost | delivered per CPU-second | of QoS 0 | RSS MB "
        "| latency p50 / p99 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in sorted(
        out["matrix"],
        key=lambda t: (t["topology"] != "p2p", t["topology"], t["payload"], builds.index(t["build"]), t["qos"]),
    ):
        lines.append(
            f"| {t['build']} | {t['topology']} | {t['payload']:,} B | {t['qos']} | {t['delivered']:,} | {t['lost']} | "
            f"{t['delivered_per_cpu_second'] or 0:,} | {pct(t['of_qos0'])} | {t['rss_mb']} | "
            f"{t['latency_p50_ms']} / {t['latency_p99_ms']} |"
        )
    lines += [
        "",
        "## Latency at 1,000 msg/s",
        "",
        "p2p, 16 B, 100 publishers and 100 subscribers, pub-to-sub latency of the whole run: acks",
        "written in fewer writes must not arrive later.",
        "",
        "| build | QoS | p50 ms | p99 ms |",
        "|---|---|---|---|",
    ]
    for t in sorted(out["latency"], key=lambda t: (t["qos"], builds.index(t["build"]))):
        lines.append(f"| {t['build']} | {t['qos']} | {t['latency_p50_ms']} | {t['latency_p99_ms']} |")
    if out.get("profiles"):
        lines += [
            "",
            "## CPU profiles",
            "",
            "Of the p2p 16 B runs above (k6's pprof endpoint, `--profiling-enabled`, over the publishing",
            "phase): the top entries by cumulative share, among the extension's functions and the system",
            "calls they make (`go tool pprof -top -cum`).",
        ]
        for name, top in out["profiles"].items():
            lines += ["", f"`{name}`:", "", "```", top, "```"]
    return lines


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
        *matrix_section(out),
        "",
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
