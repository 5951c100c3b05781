"""Benchmark of the k6 MQTT extension as a load generator:

  delivered messages per generator CPU-second (p2p, 16-byte payload, QoS 0 and 1),
  the QoS section: QoS 0/1/2 x 16 B/4 KB at 10,000 delivered msg/s, p2p (--full:
    also fan-in and fan-out), delivered per CPU-second, RSS, the ratios to QoS 0,
    and pub-to-sub latency at 1,000 msg/s (mqttbench/generator_bench/qos.py),
  the transports section (mqttbench/generator_bench/transports.py),
  generator RSS per idle connection at 10,000 connections,
  generator RSS after 1M and after 10M messages.

The k6 process is measured from outside (/proc, and perf: cpu.py), against the broker of the
native stack (scripts/stack.sh up). Prints its figures; writes them as JSON
with --json, and as the page docs/benchmarks.md (date, machine, command)
with --docs. --k6 measures another k6 build; --before K6 measures an earlier
build too in the QoS section, run for run alternately, so that a busy machine
skews both alike. --profile takes CPU profiles (k6's pprof endpoint) of the
p2p 16 B runs. --rounds N runs each cell of the QoS matrix N times and keeps
its median run. --qos-only and --transports-only measure one section and
replace it in the --docs page, keeping the rest.
(`python -m mqttbench generator-bench instances --help`: a run split over k6
processes, merged, docs/benchmarks-instances.md.)
Usage: python -m mqttbench generator-bench [--quick] [--full] [--before K6] [--profile] [--rounds N]
         [--qos-only | --transports-only] [--json FILE] [--docs FILE] [--k6 PATH]
"""

import argparse
import json
import os
import platform
import tempfile
from pathlib import Path

from mqttbench import ROOT

from .page import benchmarks_page
from .process import k6_bin, k6_version, run, use_build
from .qos import qos, qos_section, splice_qos
from .transports import splice_transports, transports, transports_section


def throughput(
    qos, rate, seconds, clients, poll=None, template=None, url=None, transport="TCP", **more
):  # fmt: skip
    """rate: messages delivered per second. poll: the groups' poll_interval;
    "0" reads with a goroutine per connection. template: a PAYLOAD_TEMPLATE
    instead of filler. url: another listener of the broker (TLS, WebSocket),
    named transport. more: payload (bytes, 16), topology (p2p, fan-in,
    fan-out), k6 (another build), profile (a file for a CPU profile)."""
    payload, topology = more.get("payload", 16), more.get("topology", "p2p")
    env = {"MODE": "throughput", "QOS": str(qos), "RATE": str(rate), "SECONDS": str(seconds), "CLIENTS": str(clients)}
    env |= {"PAYLOAD": str(payload), "TOPOLOGY": topology}
    if url:
        env["MQTT_URL"] = url
    if poll is not None:
        env["POLL_INTERVAL"] = poll
    if template:
        env["PAYLOAD_TEMPLATE"] = template
    marks, r, _ = run(env, more.get("k6"), more.get("profile"))
    split = marks["publish-end"]["split"]
    cpu = split.cpu
    wall = marks["publish-end"]["t"] - marks["publish-start"]["t"]
    delivered = r["subscribe"]["unique"]
    syscalls = marks["publish-end"].get("syscalls") if delivered else None
    return {
        "qos": qos,
        "topology": topology,
        "target_rate": rate,
        "clients": clients,
        "reader": "goroutines" if poll == "0" or transport != "TCP" else "poller",
        "transport": transport,
        "payload": f"JSON template, {r['payload']} B" if template else f"{r['payload']} B",
        "payload_bytes": r["payload"],
        "seconds": round(wall, 2),
        "delivered": delivered,
        "lost": r["subscribe"]["lost"],
        "achieved_rate": round(r["publish"]["achieved_rate"]),
        "generator_cpu_seconds": round(cpu, 2),
        "delivered_per_cpu_second": round(delivered / cpu) if cpu else None,
        # The kernel's share: what no change to the extension's own code can cut.
        "system_cpu_seconds": round(split.system, 2),
        "user_cpu_seconds": round(split.user, 2),
        "cpu_split_by": split.split_by,
        # System calls per message delivered: what batching acknowledgements and reads cuts.
        "syscalls_per_delivered": round(syscalls["all"] / delivered, 2) if syscalls else None,
        # ... by kind (cpu.SYSCALL_KINDS): which calls a change cut.
        "syscalls_by_kind": {k: round(n / delivered, 2) for k, n in syscalls.items()} if syscalls else None,
        "rss_mb": round(marks["publish-end"]["rss_kb"] / 1024, 1),
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


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m mqttbench generator-bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--url", default=f"mqtt://127.0.0.1:{os.environ.get('MQTT_PORT', '1883')}")
    ap.add_argument("--tls-url", default=f"mqtts://127.0.0.1:{os.environ.get('MQTTS_PORT', '8883')}")
    ap.add_argument("--ws-url", default=f"ws://127.0.0.1:{os.environ.get('WS_PORT', '8083')}/mqtt")
    ap.add_argument(
        "--tls-ca",
        default=str(Path(os.environ.get("MQTTBENCH_STATE", ROOT / ".state")) / "tls/ca.pem"),
        help="the CA of the broker's TLS listener (default: the native stack's)",
    )
    ap.add_argument("--quick", action="store_true", help="short runs (smoke check of this script)")
    ap.add_argument("--full", action="store_true", help="the whole QoS matrix: fan-in and fan-out too")
    ap.add_argument("--before", help="an earlier k6 build to compare with in the QoS section")
    ap.add_argument("--profile", action="store_true", help="CPU profiles of the p2p 16 B runs (needs go)")
    ap.add_argument(
        "--rounds", type=int, default=1, help="runs of each cell of the QoS matrix; the page shows each cell's median"
    )
    only = ap.add_mutually_exclusive_group()
    for section in ("qos", "transports"):
        only.add_argument(
            f"--{section}-only",
            action="store_true",
            help=f"measure only the {section} section and replace it in the --docs page, keeping the rest",
        )
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--docs", help="write the figures as a Markdown page here (docs/benchmarks.md)")
    ap.add_argument("--k6", help="the k6 binary to measure (default: this checkout's build)")
    a = ap.parse_args(argv)
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds}: give 1 or more runs per cell")
    override = use_build(a.k6)
    os.environ["MQTT_URL"] = a.url
    os.environ["TLS_CA"] = a.tls_ca
    secs = 3 if a.quick else 20
    builds = {"after": k6_bin()}
    if a.before:
        builds = {"before": a.before, **builds}
    profiles = tempfile.mkdtemp(prefix="bench-extension-") if a.profile else None
    if a.transports_only:
        out = {"k6": k6_version(), "throughput": [], "transports": transports(throughput, a, secs)}
    elif a.qos_only:
        out = {"k6": k6_version(), "throughput": [], "qos": qos(throughput, a, secs, builds, profiles)}
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
            "qos": qos(throughput, a, secs, builds, profiles),
            "idle": idle(1000 if a.quick else 10000),
            "transports": transports(throughput, a, secs),
        }
        if not a.quick:
            out["soak"] = soak(100000)
    if a.before and "qos" in out:
        out["qos"]["k6_before"] = k6_version(a.before)
    report(out)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2))
    if a.docs:
        # The command that reproduces the page: --json only saves a copy.
        command = [
            "python -m mqttbench generator-bench",
            *(["--quick"] if a.quick else []),
            *(["--full"] if a.full else []),
        ]
        command += [*(["--before", a.before] if a.before else []), *(["--profile"] if a.profile else [])]
        command += ["--rounds", str(a.rounds)] if a.rounds > 1 else []
        command += ["--url", a.url, "--tls-url", a.tls_url, "--ws-url", a.ws_url]
        if override:
            command += ["--k6", override]
        command += [*(["--transports-only"] if a.transports_only else []), *(["--qos-only"] if a.qos_only else [])]
        command += ["--docs", a.docs]
        if a.transports_only:
            section = transports_section(out["transports"], " ".join(command))
            Path(a.docs).write_text(splice_transports(a.docs, section))
        elif a.qos_only:
            Path(a.docs).write_text(splice_qos(a.docs, qos_section(out["qos"], " ".join(command))))
        else:
            Path(a.docs).write_text(benchmarks_page(out, " ".join(command)))


def report(out):
    """Prints the figures."""
    for t in out["throughput"] + out.get("transports", {}).get("rows", []):
        print(
            f"p2p {t['transport']} {t['payload']} QoS {t['qos']} ({t['reader']}): {t['delivered']} delivered in "
            f"{t['seconds']} s (target {t['target_rate']}/s, achieved {t['achieved_rate']}/s, lost {t['lost']}), "
            f"generator CPU {t['generator_cpu_seconds']} s => {t['delivered_per_cpu_second']} msg per CPU-second; "
            f"latency p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms"
        )
    q = out.get("qos", {"matrix": [], "latency": []})
    for t in q["matrix"]:
        print(
            f"{t['build']}: {t['topology']} QoS {t['qos']} {t['payload']}: "
            f"{t['delivered']} delivered, lost {t['lost']}, "
            f"{t['delivered_per_cpu_second']} msg per CPU-second ({100 * t['of_qos0']:.0f}% of QoS 0), "
            f"RSS {t['rss_mb']} MB, latency p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms"
        )
    for t in q["latency"]:
        print(
            f"{t['build']}: QoS {t['qos']} at 1,000 msg/s: p50 {t['latency_p50_ms']} ms, p99 {t['latency_p99_ms']} ms"
        )
    for name, top in q.get("profiles", {}).items():
        print(f"profile {name}:\n{top}")
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
