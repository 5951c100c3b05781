"""docs/benchmarks.md from the figures of one run of python -m mqttbench generator-bench."""

import os
import platform
import time
from pathlib import Path

from .qos import qos_section
from .transports import transports_section


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
        "Written by `python -m mqttbench generator-bench --docs docs/benchmarks.md` (with the native stack up:",
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
        *qos_section(out["qos"], command),
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
