"""The QoS section of docs/benchmarks.md (python -m mqttbench generator-bench): the
matrix QoS 0/1/2 x 16 B/4 KB (x p2p/fan-in/fan-out with --full), delivered
messages per generator CPU-second and RSS, pub-to-sub latency at 1,000
msg/s, and the top entries of CPU profiles, for this build and, with
--before, an earlier one measured run for run alternately."""

import os
import subprocess
import time
from pathlib import Path

from mqttbench import ROOT

from .cpu import SYSCALL_KINDS

QOS_TITLE = "## QoS 0, 1 and 2"

# What a profile's top lists: the extension's functions and the system calls
# they make (the rest is the Go runtime and k6, which these call into).
PROFILE_SHOW = r"mqtt-bench/k6/extension|^syscall\.(write|read|Recvmsg|EpollWait)$|^runtime\.(mcall|futex)$"


def matrix(throughput, secs, full, builds, profiles, rounds=1):
    """Delivered per CPU-second at 10,000 delivered msg/s. For each topology
    and payload the three QoS levels run one after another, with every build
    in turn, so that the ratios of one build compare runs made close
    together; `rounds` times, each cell keeping its median run (one run
    moves by 10-20% on a shared machine). profiles: a directory for CPU
    profiles of the p2p 16 B runs (of the first round)."""
    rows = []
    for topology in ("p2p", "fan-in", "fan-out") if full else ("p2p",):
        for payload in (16, 4096):
            runs = {}
            for n in range(rounds):
                for qos in (0, 1, 2):
                    for build, k6 in builds.items():
                        prof = None
                        if profiles and topology == "p2p" and payload == 16 and n == 0:
                            prof = str(Path(profiles) / f"{build}-qos{qos}.pprof")
                        t = throughput(qos, 10000, secs, 100, payload=payload, topology=topology, k6=k6, profile=prof)
                        t["build"], t["profile"] = build, prof
                        runs.setdefault((build, qos), []).append(t)
            rows += [median_run(cell) for cell in runs.values()]
    for t in rows:
        same = ("topology", "payload_bytes", "build")
        base = next(b for b in rows if b["qos"] == 0 and all(b[k] == t[k] for k in same))
        t["of_qos0"] = round(t["delivered_per_cpu_second"] / base["delivered_per_cpu_second"], 3)
        # If the extension's own code cost nothing, only the kernel's work
        # for the packets would remain: the most this row could reach.
        if t["system_cpu_seconds"]:
            t["of_qos0_at_most"] = round(t["delivered"] / t["system_cpu_seconds"] / base["delivered_per_cpu_second"], 3)
    return rows


def median_run(runs):
    """The run of a cell with the median messages per CPU-second (the lower
    of the middle two for an even count), with every run's figure."""
    ranked = sorted(runs, key=lambda t: t["delivered_per_cpu_second"] or 0)
    t = dict(ranked[(len(ranked) - 1) // 2])
    t["profile"] = next((r["profile"] for r in runs if r["profile"]), None)
    t["each_run"] = [r["delivered_per_cpu_second"] for r in runs]
    return t


def latency(throughput, secs, builds, rounds):
    """Pub-to-sub latency at 1,000 msg/s, p2p, 16 B: what coalescing acks must
    not raise. Builds alternate run for run, `rounds` times per QoS, so that
    the spread of one build shows what is noise."""
    rows = []
    for qos in (0, 1, 2):
        for n in range(rounds):
            for build, k6 in builds.items():
                t = throughput(qos, 1000, secs, 100, k6=k6)
                t["build"], t["round"] = build, n + 1
                rows.append(t)
    return rows


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


def qos(throughput, a, secs, builds, profiles):
    """The section's figures."""
    out = {
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "matrix": matrix(throughput, secs, a.full, builds, profiles, a.rounds),
        "latency": latency(throughput, 3 if a.quick else 10, builds, 1 if a.quick else 3),
    }
    out["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    if profiles:
        out["profiles"] = {Path(t["profile"]).stem: pprof_top(t["profile"]) for t in out["matrix"] if t["profile"]}
    return out


def pct(x):
    return f"{100 * x:.0f}%"


def kernel_share(t):
    """The share of a row's CPU time spent in the kernel ("-" for a row measured without it)."""
    if t.get("system_cpu_seconds") is None or not t["generator_cpu_seconds"]:
        return "-"
    return pct(t["system_cpu_seconds"] / t["generator_cpu_seconds"])


def split_note(matrix):
    """The rows whose split is not perf's samples (no perf on the machine), named."""
    hows = {t.get("cpu_split_by", "/proc utime and stime") for t in matrix}
    other = sorted(how for how in hows if not how.startswith("perf "))
    return [f"Here some rows' split is {' and '.join(other)}."] if other else []


def ceiling_note(matrix):
    """What the kernel's share means for the ratios: the range, over this
    run's rows, of each level's ceiling."""
    lines = []
    shares = [t["system_cpu_seconds"] / t["generator_cpu_seconds"] for t in matrix if t.get("system_cpu_seconds")]
    if not shares:
        return lines
    lines += [
        "",
        f"The kernel took {pct(min(shares))} to {pct(max(shares))} of the generator's CPU. A QoS 1 message is",
        "four packets through the generator's sockets (PUBLISH and PUBACK on each side), a QoS 2 message",
        "eight, a QoS 0 message two; with one message in flight per connection at a time (100 msg/s",
        "each, answered within a millisecond), a poll cycle rarely finds two packets of one connection",
        "to write together, so each packet costs the kernel its own TCP work, whether its write or read is",
        "a system call of its own or one of an io_uring batch. Hence the ceilings:",
    ]
    for level in (1, 2):
        at_most = [t["of_qos0_at_most"] for t in matrix if t["qos"] == level and t.get("of_qos0_at_most")]
        if at_most:
            lines.append(f"QoS {level} {pct(min(at_most))} to {pct(max(at_most))} of QoS 0 in this run's rows.")
    return lines


def syscall_table(matrix, builds):
    """System calls per delivered message by kind (cpu.SYSCALL_KINDS):
    which calls a change cut, and which are left."""
    rows = [t for t in matrix if t.get("syscalls_by_kind")]
    if not rows:
        return []
    kinds = [k for k in (*SYSCALL_KINDS, "other") if any(k in t["syscalls_by_kind"] for t in rows)]
    lines = [
        "",
        "### System calls per delivered message, by kind",
        "",
        "The rows above, their system calls counted by each kind's entry tracepoint",
        "(`syscalls:sys_enter_NAME`): " + "; ".join(f"{k}: {', '.join(v)}" for k, v in SYSCALL_KINDS.items()) + ";",
        "other: every other call (the Go runtime's madvise, sched_yield, tgkill...). In this generator a",
        "write is one connection's packets of one look or pacing tick, a read one ready socket's bytes, and",
        "an io_uring call a batch of them, every ready socket's read or every due connection's write of one",
        "look or tick (where the kernel offers io_uring; else they are writes and reads); epoll is the",
        "pollers' looks (epoll_wait) and Go's scheduler checking its netpoller whenever a processor runs",
        "out of work (epoll_pwait); futex, Go's threads parked and woken.",
        "",
        f"| build | topology | payload | QoS | all | {' | '.join(kinds)} |",
        "|---|---|---|---|---|" + "---|" * len(kinds),
    ]
    for t in sorted(rows, key=lambda t: (t["topology"], t["payload_bytes"], t["qos"], builds.index(t["build"]))):
        by = t["syscalls_by_kind"]
        lines.append(
            f"| {t['build']} | {t['topology']} | {t['payload_bytes']:,} B | {t['qos']} | {by['all']} | "
            + " | ".join(str(by.get(k, "-")) for k in kinds)
            + " |"
        )
    return lines


def qos_section(q, command, before_version=None):
    """The section of docs/benchmarks.md on QoS 0, 1 and 2."""
    builds = sorted({t["build"] for t in q["matrix"]}, key=lambda b: b != "before")
    lines = [
        QOS_TITLE,
        "",
        f"Measured {q['date']} with `{command}`; load average (1, 5, 15 min) {q['load_average']} at the start",
        f"and {q['load_average_after']} at the end (the machine is shared).",
    ]
    if len(builds) > 1:
        lines += [
            f"`before` is the earlier build (`{q.get('k6_before', '')}`), measured run for run alternately",
            "with this one, so that a busy spell of the machine weighs on both alike.",
        ]
    lines += [
        "",
        "### Delivered per generator CPU-second",
        "",
        "Mosquitto on loopback, 10,000 messages delivered per second for the run's length. p2p: 100",
        "publishers, each to its own subscriber; fan-in: 100 publishers, one subscriber of them all;",
        "fan-out: one publisher at 100 msg/s, 100 subscribers of its topic. For each topology and",
        'payload the three QoS levels run one after another, so that their ratios ("of QoS 0") compare',
        "runs made close together; with several rounds a cell shows its median run, and each run's",
        "figure beside it. RSS: the k6 process's at the end of the run. In the kernel: the",
        "share of the generator's CPU time spent in the kernel, mostly the TCP stack's work for each",
        "packet written or read. At most: the ratio this row would reach if the extension's own code",
        "cost nothing and only that kernel time remained. User / system: the generator's CPU seconds in",
        "its own code and in the kernel, told apart by perf's cpu-clock samples of every CPU (about 4,000",
        "a second each) that caught the k6 process, not by /proc's utime and stime: the scheduler's 4 ms",
        "tick splits those at nearly the same moment of each 10 ms pacing wake-up all run long, so that",
        "fan-out runs of one build read 6% and 18% in its own code (`mqttbench/generator_bench/cpu.py`).",
        *split_note(q["matrix"]),
        "System calls per delivered: every system call of the k6 process",
        "(all threads; recvmsg, write, epoll_wait, the Go runtime's futex...) over the publishing phase,",
        "per message delivered, counted by the kernel's `raw_syscalls:sys_enter` tracepoint (`perf stat`).",
        "",
        "| build | topology | payload | QoS | delivered | lost | delivered per CPU-second | each run | of QoS 0 "
        "| user / system s | in the kernel | system calls per delivered | of QoS 0 at most | RSS MB "
        "| latency p50 / p99 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in sorted(
        q["matrix"],
        key=lambda t: (t["topology"] != "p2p", t["topology"], t["payload_bytes"], builds.index(t["build"]), t["qos"]),
    ):
        lines.append(
            f"| {t['build']} | {t['topology']} | {t['payload_bytes']:,} B | {t['qos']} | "
            f"{t['delivered']:,} | {t['lost']} | "
            f"{t['delivered_per_cpu_second'] or 0:,} | {' / '.join(f'{x or 0:,}' for x in t.get('each_run', []))} | "
            f"{pct(t['of_qos0'])} | {t.get('user_cpu_seconds', '-')} / {t.get('system_cpu_seconds', '-')} | "
            f"{kernel_share(t)} | {t.get('syscalls_per_delivered') or '-'} | "
            f"{pct(t['of_qos0_at_most']) if t.get('of_qos0_at_most') else '-'} | {t['rss_mb']} | "
            f"{t['latency_p50_ms']} / {t['latency_p99_ms']} |"
        )
    lines += ceiling_note(q["matrix"])
    lines += syscall_table(q["matrix"], builds)
    lines += [
        "",
        "### Latency at 1,000 msg/s",
        "",
        "p2p, 16 B, 100 publishers and 100 subscribers, pub-to-sub latency of each whole run, the runs in",
        "the order they were made: acks written in fewer writes must not make messages arrive later.",
        "",
        "| QoS | build | p50 ms, run by run | p99 ms, run by run |",
        "|---|---|---|---|",
    ]
    for level in (0, 1, 2):
        for b in builds:
            runs = [t for t in q["latency"] if t["qos"] == level and t["build"] == b]
            p50 = " / ".join(str(t["latency_p50_ms"]) for t in runs)
            p99 = " / ".join(str(t["latency_p99_ms"]) for t in runs)
            lines.append(f"| {level} | {b} | {p50} | {p99} |")
    if q.get("profiles"):
        lines += [
            "",
            "### CPU profiles",
            "",
            "Of the p2p 16 B runs above (k6's pprof endpoint, `--profiling-enabled`, over the publishing",
            "phase): the top entries by cumulative share, among the extension's functions and the system",
            "calls they make (`go tool pprof -top -cum`).",
        ]
        for name, top in q["profiles"].items():
            lines += ["", f"`{name}`:", "", "```", top, "```"]
    return [*lines, ""]


def splice_qos(page, section):
    """The page with its QoS section replaced (or added before Memory)."""
    text = Path(page).read_text()
    block = "\n".join(section)
    if QOS_TITLE + "\n" in text:
        head, rest = text.split(QOS_TITLE + "\n", 1)
        tail = rest.split("\n## ", 1)
        return head + block + ("\n## " + tail[1] if len(tail) > 1 else "")
    head, rest = text.split("## Memory", 1)
    return head + block + "\n## Memory" + rest
