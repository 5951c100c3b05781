"""The numbers of a report: the EMQX guide's per-step table, mqttbs's tables,
success rates, the generator's share of the host and the capacity search."""

import os
import re
from urllib.parse import urlparse

from mqttbench import flux_filters as ff

from . import connect_cost, gaps, instances, io_rates
from .connection_tables import connections
from .results import MissingData, latency


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def within(series, start, end):
    """Values of points time-stamped in [start, end): the series carry each
    window's start, so this matches a Flux range over the same bounds."""
    return [v for t, v in series if start <= t < end]


class Resources:
    """Host and broker time series of the run, or what is missing of them."""

    def __init__(self, influx, run):
        self.missing = []
        self.host_cpu = self.host_cpu_us = self.mem_pct = self.mem_used = self.broker_cpu = self.broker_rss = []
        self.broker_host = {}
        self.telegraf_points = []
        if influx is None:
            return
        start, end = run.window()
        broker = run["broker"]
        # Monitoring gaps are read off one series Telegraf collects every interval.
        self.telegraf_points = influx.point_times(start, end, ff.host_cpu("usage_idle", broker))
        self.host_cpu, self.host_cpu_us = influx.host_cpu(start, end, broker)
        self.mem_pct, self.mem_used = influx.host_mem(start, end, broker)
        self.broker_cpu, self.broker_rss = influx.broker_process(start, end, broker)
        self.broker_host = influx.broker_host(start, end, broker)
        for name, s in [
            ("host CPU (telegraf cpu)", self.host_cpu),
            ("host memory (telegraf mem)", self.mem_pct),
            ("broker process CPU (procstat or docker)", self.broker_cpu),
            ("broker process memory (procstat or docker)", self.broker_rss),
        ]:
            if not s:
                self.missing.append(
                    f"{name}: no points for broker={broker} between the run's start and end in InfluxDB"
                )


def timeline_between(run, start, end):
    # A timeline row covers the second before its time stamp; allow one
    # second after the step for messages still in flight.
    return [r for r in run.data.get("timeline", []) if start < r["t"] <= end + 1000]


def weighted(rows, key, weight="received"):
    total = sum(r[weight] for r in rows if r.get(key) is not None)
    if not total:
        return None
    return sum(r[key] * r[weight] for r in rows if r.get(key) is not None) / total


def step_rows(run, res):
    """One row per step: the EMQX guide's recommended-workload table."""
    steps = run.data.get("steps") or []
    single = len(steps) == 1
    lat = latency(run)
    rows = []
    for s in steps:
        secs = (s["end"] - s["start"]) / 1000
        tl = timeline_between(run, s["start"], s["end"])
        received = sum(r["received"] for r in tl)
        row = {
            "rate": s["rate"],
            "payload": s.get("payload"),
            "seconds": round(secs, 1),
            "target_rate": s["target_rate"],
            "achieved_rate": s["achieved_rate"],
            "tps_in": s["sent"] / secs if secs else None,
            "tps_out": received / secs if secs else None,
            "cpu_avg": mean(within(res.host_cpu, s["start"], s["end"])),
            "mem_avg": mean(within(res.mem_pct, s["start"], s["end"])),
            "broker_cpu_avg": mean(within(res.broker_cpu, s["start"], s["end"])),
            # One step: the exact whole-run HDR values; several: the
            # per-second values weighted by messages received.
            "latency_avg": lat.get("avg") if single else weighted(tl, "latency_avg_ms"),
            "latency_p99": lat.get("p99") if single else weighted(tl, "latency_p99_ms"),
        }
        row["tps"] = (row["tps_in"] or 0) + (row["tps_out"] or 0)
        # The verdict package's, written into each step (reached, and its
        # latency p99 under the bound); a file written before it was: none.
        row["passed"] = s.get("passed") is True
        rows.append(row)
    return rows


def capacity(rows, cpu_target, run_ok, cores=None):
    """The guide's method: the highest step whose average CPU stays at or
    under the target with its checks passing. None for fewer than two steps:
    one load level shows no limit, so it has no capacity. The CPU judged
    (each row's cpu_judged) is the broker process's, as a share of the
    broker host's cores, where InfluxDB has it for every step; else the
    host's (1 - idle), which counts every process (the generator's too),
    and the result says so. A warning names a step where other processes
    used more of the host than the broker did."""
    if len(rows) < 2:
        return None
    broker = cores and all(r.get("broker_cpu_avg") is not None for r in rows)
    for r in rows:
        r["cpu_judged"] = r["broker_cpu_avg"] / cores if broker else r["cpu_avg"]
    out = {"cpu_target": cpu_target, "recommended": None, "reason": None, "warning": None}
    if broker:
        out["cpu"] = f"the broker process's CPU as a share of the broker host's {cores} cores"
        others = [r for r in rows if r["cpu_avg"] is not None and r["cpu_avg"] - r["cpu_judged"] > r["cpu_judged"]]
        if others:
            r = others[-1]
            out["warning"] = (
                f"other processes used more of the host's CPU than the broker (at step {r['rate']:,.1f} msg/s "
                f"the host was {r['cpu_avg']:.1f}% busy, the broker {r['cpu_judged']:.1f}%): "
                "host CPU is not the broker's"
            )
    else:
        out["cpu"] = "host CPU (1 - idle): every process on the host, not the broker's alone (no broker-process CPU)"
    fits = [r for r in rows if r["cpu_judged"] is not None and r["cpu_judged"] <= cpu_target and r["passed"]]
    if all(r["cpu_judged"] is None for r in rows):
        out["reason"] = "host CPU is missing from InfluxDB for every step"
    elif not fits:
        out["reason"] = f"no step stayed at or under {cpu_target}% CPU with its checks passing"
    else:
        best = max(fits, key=lambda r: r["tps"])
        out["recommended"] = best
        if not run_ok:
            out["reason"] = "the run lost messages or connections: the recommendation is not trustworthy"
    return out


def mqttbs(run, res):
    c = run["counts"]
    lat = latency(run)
    steps = run.data.get("steps") or []
    secs = sum((s["end"] - s["start"]) / 1000 for s in steps)
    start, end = run.window()
    us = within(res.host_cpu_us, start, end)
    used = within(res.mem_used, start, end)
    return {
        "pub_rate": c["mqtt_publishes"] / secs if secs else None,
        "sub_rate": c["mqtt_receives"] / secs if secs else None,
        "latency_avg": lat.get("avg"),
        "cpu_us_max": max(us) if us else None,
        "cpu_us_avg": mean(us),
        "mem_used_max": max(used) if used else None,
        "mem_used_avg": mean(used),
        "broker_cpu_max": max(within(res.broker_cpu, start, end), default=None),
        "broker_cpu_avg": mean(within(res.broker_cpu, start, end)),
        "broker_rss_max": max(within(res.broker_rss, start, end), default=None),
        "percentiles": {k: lat.get(k) for k in ("p50", "p75", "p90", "p95", "p99")},
    }


def success(run):
    """Delivery; connection success is in connections()."""
    c = run["counts"]
    delivered = c["mqtt_receives"] - c["mqtt_duplicates"]
    expected = delivered + c["mqtt_lost"]
    return {
        "published": c["mqtt_publishes"],
        "received": c["mqtt_receives"],
        "lost": c["mqtt_lost"],
        "duplicates": c["mqtt_duplicates"],
        "out_of_order": c["mqtt_out_of_order"],
        "publish_failures": c["mqtt_publish_failures"],
        "delivery_success_pct": 100.0 * delivered / expected if expected else None,
    }


def generator(run, res):
    """The generator's CPU, and a warning when it shares the broker's host."""
    g = run.data.get("generator") or {}
    dur = run.data.get("duration_s") or 0
    cpu_s = (g.get("cpu_user_s") or 0) + (g.get("cpu_system_s") or 0) if g else None
    pct = 100.0 * cpu_s / dur if dur and cpu_s is not None else None
    url_host = urlparse(run["parameters"]["url"]).hostname or ""
    shared = url_host in ("127.0.0.1", "localhost", "::1") or (
        res.broker_host.get("nodename") and res.broker_host.get("nodename") == run["host"].get("hostname")
    )
    warning = None
    if shared and pct is not None:
        warning = (
            f"the load generator ran on the broker's host and used {pct:.0f}% of one core "
            f"({cpu_s:.1f} CPU-s over {dur:.0f} s); host CPU includes it, the broker-process CPU does not"
        )
    elif shared:
        warning = (
            "the load generator ran on the broker's host; host CPU includes it, the broker-process CPU "
            "does not (its own CPU use is not recorded in this result file)"
        )
    counts = run["counts"]
    shared_reads = counts.get("mqtt_receives_shared_read")  # absent from results before the poller
    received = counts.get("mqtt_receives") or 0
    return {
        "cpu_seconds": cpu_s,
        "cpu_pct_of_one_core": pct,
        "max_rss_kb": g.get("max_rss_kb"),
        "shares_broker_host": bool(shared),
        "warning": warning,
        "shared_read_pct": 100.0 * shared_reads / received if shared_reads is not None and received else None,
    }


def telegraf_interval_ms(value=None):
    """TELEGRAF_INTERVAL (default 5s) in ms: the fallback when the points are too few to tell the interval."""
    v = value if value is not None else os.environ.get("TELEGRAF_INTERVAL") or "5s"
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", v.strip())
    if not m:
        return 5000.0
    return float(m.group(1)) * {"ms": 1, "s": 1000, "m": 60_000}[m.group(2)]


def monitoring(run, res, influx):
    """Telegraf's collection interval and the gaps in its points during the run; None without
    InfluxDB or without any of Telegraf's points (then the missing data says so)."""
    if influx is None or not res.telegraf_points:
        return None
    start, end = run.window()
    interval = gaps.interval_ms(res.telegraf_points, telegraf_interval_ms())
    return {
        "series": "host CPU (telegraf cpu, cpu-total)",
        "interval_s": interval / 1000,
        "points": len(res.telegraf_points),
        "gaps": gaps.monitoring_gaps(res.telegraf_points, start, end, interval),
    }


def build(run, influx, cpu_target):
    res = Resources(influx, run)
    rows = step_rows(run, res)
    ok = run["counts"]["mqtt_lost"] == 0 and run["counts"]["mqtt_connect_failures"] == 0
    return res, {
        "run_id": run.run_id,
        "scenario": run["scenario"],
        "broker": run["broker"],
        "passed": run["passed"],
        "steps": rows,
        "capacity": capacity(rows, cpu_target, ok, res.broker_host.get("cpus") or local_cores(run, res)),
        "mqttbs": mqttbs(run, res),
        "success": success(run),
        "connections": {**connections(run), **connect_cost.broker_cpu_per_connect(run, res.broker_cpu)},
        "generator": generator(run, res),
        "io": io_rates.figures(run, influx),  # disk writes and packets, beside CPU and memory
        "instances": instances.of(run),
        "monitoring": monitoring(run, res, influx),
        "outages": gaps.outages(run),
        "reconnect": latency(run, "reconnect"),  # each drop → its reconnect's CONNACK
        "missing": res.missing,
    }


def local_cores(run, res):
    """The generator host's cores when it is the broker's host (node_exporter
    names the broker host's own when it reports)."""
    return (run["host"].get("cpus") or None) if generator(run, res)["shares_broker_host"] else None


def require(run):
    for key in ("counts", "latency_ms", "parameters", "host"):
        if key not in run.data:
            raise MissingData(
                f"run {run.run_id}: the result file {run.path} lacks '{key}' (written by an older k6/lib?)"
            )
