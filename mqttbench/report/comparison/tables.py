"""The comparison's tables (scripts/compare.sh, report.comparison.write): a table per
metric with the brokers as its columns, from each broker's figures or its
capacity search; a broker that did not run keeps its column, marked."""

import json

from .. import tables


def mb(x):
    return None if x is None else x / 2**20


def kbs(x):
    return None if x is None else x / 1024


def run_figures(run, influx, cpu_target, built=None):
    """The figures of one run, computed by the single-run report's tables
    (built: the (res, t) its report already built, not queried again)."""
    if built is None:
        tables.require(run)
        built = tables.build(run, influx, cpu_target)
    res, t = built
    start, end = run.window()
    host = tables.within(res.host_cpu, start, end)
    mem_pct = tables.within(res.mem_pct, start, end)
    m, s, c = t["mqttbs"], tables.success(run), t["connections"]
    lat = tables.latency(run)
    failed = sorted(k for k, ok in (run.data.get("thresholds") or {}).items() if not ok)
    return t, {
        "target_rate": run["parameters"].get("rate"),
        "pub_rate": m["pub_rate"],
        "sub_rate": m["sub_rate"],
        "delivery_success_pct": s["delivery_success_pct"],
        "published": s["published"],
        "received": s["received"],
        "lost": s["lost"],
        "duplicates": s["duplicates"],
        "publish_failures": s["publish_failures"],
        "latency_avg": lat.get("avg"),
        **{f"latency_{k}": v for k, v in m["percentiles"].items()},
        "latency_max": lat.get("max"),
        "host_cpu_avg": tables.mean(host),
        "host_cpu_max": max(host) if host else None,
        "cpu_us_avg": m["cpu_us_avg"],
        "cpu_us_max": m["cpu_us_max"],
        "broker_cpu_avg": m["broker_cpu_avg"],
        "broker_cpu_max": m["broker_cpu_max"],
        "mem_pct_avg": tables.mean(mem_pct),
        "mem_used_avg_mb": mb(m["mem_used_avg"]),
        "mem_used_max_mb": mb(m["mem_used_max"]),
        "broker_rss_max_mb": mb(m["broker_rss_max"]),
        **{f"{k}_kbs": kbs(t["io"][k]) for k in ("broker_disk_write_avg", "broker_disk_write_max")},
        **{f"{k}_kbs": kbs(t["io"][k]) for k in ("host_disk_write_avg", "host_disk_write_max")},
        "disk_na": "; ".join(
            t["io"]["why"].get(k) for k in ("broker_disk_write", "host_disk_write") if k in t["io"]["why"]
        ),
        "interface": t["io"]["interface"],
        "packets_recv_avg": t["io"]["packets_recv_avg"],
        "packets_sent_avg": t["io"]["packets_sent_avg"],
        "packets_na": t["io"]["why"].get("packets", ""),
        "connections_ok": c["established"],
        "connections_failed": c["failed"],
        "connection_success_pct": c["success_pct"],
        "connect_p99_ms": c["connect_p99_ms"],
        "broker_cpu_ms_per_connect": c["broker_cpu_ms_per_connect"],
        "transport": c["transport_short"],
        "tls_version": c["tls_version"],
        **{f"reconnect_{k}": t["reconnect"].get(k) for k in ("p50", "p99", "max")},
        "passed": run["passed"],
        "failed_thresholds": failed,
    }


# A table per metric: (title, note, [(row label, figure key, decimals)]).
RUN_TABLES = [
    (
        "Actual message rate (msg/s)",
        "Publish: messages sent per second of the publish steps; subscribe: messages received per second.",
        [("target", "target_rate", 0), ("publish", "pub_rate", 1), ("subscribe", "sub_rate", 1)],
    ),
    (
        "Delivery",
        None,
        [
            ("delivery success %", "delivery_success_pct", 3),
            ("published", "published", 0),
            ("received", "received", 0),
            ("lost", "lost", 0),
            ("duplicates", "duplicates", 0),
            ("publish failures", "publish_failures", 0),
        ],
    ),
    (
        "Latency (ms)",
        "Publish to subscribe, over the whole run (the result file's histogram).",
        [(k, f"latency_{k}", 3) for k in ("avg", "p50", "p75", "p90", "p95", "p99", "max")],
    ),
    (
        "CPU (%)",
        "Host: 1 - idle, and user + system, of the broker's host (Telegraf); broker process: % of one core "
        "(procstat natively, the docker input under compose), n/a for a target no Telegraf of this stack watches.",
        [
            ("host avg (1 - idle)", "host_cpu_avg", 1),
            ("host max (1 - idle)", "host_cpu_max", 1),
            ("host avg (user + system)", "cpu_us_avg", 1),
            ("host max (user + system)", "cpu_us_max", 1),
            ("broker process avg", "broker_cpu_avg", 1),
            ("broker process max", "broker_cpu_max", 1),
        ],
    ),
    (
        "Memory (MB)",
        None,
        [
            ("host used avg", "mem_used_avg_mb", 0),
            ("host used max", "mem_used_max_mb", 0),
            ("host used avg %", "mem_pct_avg", 1),
            ("broker RSS max", "broker_rss_max_mb", 1),
        ],
    ),
    (
        "Disk write (KB/s)",
        "What the broker process wrote to storage (procstat natively, the container's block I/O under compose) and "
        "the broker host's whole disks together (Telegraf diskio: every process's writes, InfluxDB's too when it runs "
        "there): a broker persisting messages writes here.",
        [
            ("broker process avg", "broker_disk_write_avg_kbs", 1),
            ("broker process max", "broker_disk_write_max_kbs", 1),
            ("host avg", "host_disk_write_avg_kbs", 1),
            ("host max", "host_disk_write_max_kbs", 1),
            ("n/a because", "disk_na", 0),
        ],
    ),
    (
        "Packets (per second)",
        "On the interface the broker's traffic used (Telegraf net: lo when broker and generator share the host, "
        "where every packet is both sent and received and every local process's count; under compose, the broker "
        "container's), averaged over the run.",
        [
            ("interface", "interface", 0),
            ("received avg", "packets_recv_avg", 0),
            ("sent avg", "packets_sent_avg", 0),
            ("n/a because", "packets_na", 0),
        ],
    ),
    (
        "Connections",
        None,
        [
            ("established", "connections_ok", 0),
            ("failed", "connections_failed", 0),
            ("success %", "connection_success_pct", 3),
            ("connect p99 ms", "connect_p99_ms", 3),
            ("broker CPU ms per new connection", "broker_cpu_ms_per_connect", 3),
            ("TLS version negotiated", "tls_version", 0),
        ],
    ),
    (
        "Reconnect delay (ms)",
        "From each connection's drop to the CONNACK of the reconnect that brought it back (the result file's "
        "histogram); n/a where no connection was lost and back.",
        [(k, f"reconnect_{k}", 1) for k in ("p50", "p99", "max")],
    ),
]

SEARCH_TABLES = [
    (
        "Recommended workload",
        "The highest rate whose trial passed every bound (scripts/capacity.sh).",
        [("rate (msg/s)", "rate", 0), ("TPS (in + out)", "tps", 0), ("success %", "success_pct", 3)],
    ),
    (
        "Latency at the recommended rate (ms)",
        None,
        [("p50", "latency_p50", 3), ("p99", "latency_p99", 3)],
    ),
    (
        "Resources at the recommended rate",
        None,
        [
            ("broker CPU %", "broker_cpu_pct", 1),
            ("host CPU %", "host_cpu_pct", 1),
            ("host memory %", "mem_pct", 1),
            ("broker RSS MB", "broker_rss_mb", 1),
        ],
    ),
]


def tls_mismatch(brokers):
    """A sentence when the columns that ran over TLS negotiated different
    TLS versions (Mosquitto 1.3, VerneMQ and NanoMQ 1.2 with their
    defaults): their handshake times and broker CPU per new connection then
    compare different protocols. None when they are alike."""
    versions = {b["name"]: (b.get("figures") or {}).get("tls_version") for b in brokers if b["status"] == "ran"}
    versions = {name: v for name, v in versions.items() if v}
    if len(set(versions.values())) < 2:
        return None
    each = ", ".join(f"{name} {v}" for name, v in versions.items())
    return (
        f"not like for like: the columns negotiated different TLS versions ({each}), so their TLS handshake "
        "times and broker CPU per new connection compare different protocols"
    )


def fmt(x, d):
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, str):
        return x
    return f"{x:,.{d}f}"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def header(b, brokers=()):
    """A broker's column: its name, and the transport it ran over when any
    of the compared runs was not over plain TCP (so that one broker's runs
    over TCP, TLS and WebSocket compare side by side)."""
    if b["status"] == "ran":
        transports = {(x.get("figures") or {}).get("transport") for x in brokers if x["status"] == "ran"}
        transport = (b.get("figures") or {}).get("transport")
        return f"{b['name']} ({transport})" if transport and transports - {"TCP", None} else b["name"]
    return f"{b['name']} — {b['status']}: {b.get('short') or b.get('reason') or 'see its disclosure'}"


def markdown_table(t):
    """A table of build_tables (title, note, header, rows) in Markdown, the
    header's first cell empty: compare.md's and the docs page's one renderer."""
    lines = ["| " + " | ".join(cell(c) for c in ["", *t["header"]]) + " |", "|---" * (len(t["header"]) + 1) + "|"]
    return "\n".join(lines + ["| " + " | ".join(cell(c) for c in r) + " |" for r in t["rows"]])


def thresholds_table(brokers):
    """Each column's verdict as its result file gives it (figures.passed)."""
    verdicts = [
        "pass" if (b.get("figures") or {}).get("passed") else ("FAIL" if b["status"] == "ran" else b["status"])
        for b in brokers
    ]
    return {
        "title": "Thresholds",
        "note": None,
        "header": [header(b, brokers) for b in brokers],
        "rows": [["verdict", *verdicts]],
    }


# What a comparison's first run recorded of its parameters, less those that
# differ by broker or by run.
NOT_SHARED = ("url", "results_dir", "broker", "run_id")


def recorded(params):
    """The recorded parameters, as `k=v, ...` (lists and tables as JSON)."""
    return ", ".join(
        f"{k}={json.dumps(v) if isinstance(v, list | dict) else v}"
        for k, v in (params or {}).items()
        if k not in NOT_SHARED and v is not None and v != ""
    )


def figure_cell(b, key, k, d):
    """A figure; of a column in rounds (compare.sh --rounds), their median, then every round's value."""
    rounds = (b.get("round_values") or {}).get(k) if key == "figures" else None
    if rounds and len(rounds) > 1:
        return f"{fmt(b[key].get(k), d)} ({', '.join(fmt(v, d) for v in rounds)})"
    return fmt((b.get(key) or {}).get(k), d)


def build_tables(brokers, spec, key="figures"):
    out = []
    for title, note, rows in spec:
        lines = []
        for label, k, d in rows:
            cells = [b["status"] if b["status"] != "ran" else figure_cell(b, key, k, d) for b in brokers]
            if all(c == "" for c in cells):  # a row of reasons where nothing is n/a
                continue
            lines.append([label, *cells])
        out.append({"title": title, "note": note, "header": [header(b, brokers) for b in brokers], "rows": lines})
    return out


def search_table(brokers):
    """What each search found or why it stopped: shown for every broker with a capacity.json."""
    rows = []
    for label, f in [
        ("limit", lambda c: c.get("limit_text") or c.get("limit")),
        (
            "trials (passed)",
            lambda c: f"{len(c.get('trials') or [])} ({sum(1 for t in c.get('trials') or [] if t.get('good'))})",
        ),
        ("CPU target %", lambda c: fmt(c.get("cpu_target"), 0)),
        ("CPU basis", lambda c: c.get("cpu_basis")),
        ("p99 bound ms", lambda c: fmt(c.get("p99_ms"), 0)),
        ("search time s", lambda c: fmt(c.get("wall_s"), 0)),
    ]:
        rows.append([label, *[fmt(f(b["capacity"]), 0) if b.get("capacity") else b["status"] for b in brokers]])
    return {"title": "Search", "note": None, "header": [header(b, brokers) for b in brokers], "rows": rows}
