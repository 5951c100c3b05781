"""What a search found: capacity.json (the contract scripts/compare.sh and
reports read), capacity.md with every trial and the knee chart."""

from dataclasses import asdict

from mqttbench import verdict_policy
from mqttbench.report import charts

from .search import GENERATOR

# The search's own limits; any other is the cause a trial's diagnosis
# named (k6/extension/verdict), its text beside it.
LIMITS = {
    verdict_policy.CAUSE_BROKER_CPU: "the broker's CPU",
    "error": "a trial that could not be measured",
    "budget": "the time budget",
    "max_rate": "--max-rate",
}


def cpu_bound(a, target):
    """The CPU bound as the search judged it, or that it did not (--no-cpu)."""
    if a.no_cpu:
        return "broker CPU not judged (--no-cpu: not measured here)"
    return f"broker CPU <= {a.cpu_target:g}% ({target.cpu_basis})"


def summary(a, target, search, trials, wall_s):
    good = [t for t in trials if t.good]
    best = max(good, key=lambda t: t.rate) if good else None
    # What bounded the search: the first bad trial above the best good one.
    above = [t for t in trials if not t.good and (best is None or t.rate > best.rate)]
    first_bad = min(above, key=lambda t: t.rate) if above else None
    generator = any(t.limit == GENERATOR for t in trials)
    if generator:
        limit = GENERATOR
    elif first_bad:
        limit = first_bad.limit
    else:
        limit = search.stop or "budget"
    texts = {
        GENERATOR: "the load generator, not the broker, fell short of the rate: no broker capacity is reported "
        "(run more generator processes: scripts/bench.sh --instances, or hosts; README: Several generators)",
    }
    limit_text = texts.get(limit) or (
        f"{LIMITS.get(limit, limit)}: " + "; ".join(first_bad.reasons) if first_bad else LIMITS.get(limit, limit)
    )
    if search.stop == "budget" and limit != GENERATOR:
        limit_text += " (the time budget ended the search before the precision was reached)"
    recommended = None
    if best and not generator:
        recommended = {
            "rate": best.rate,
            "run_id": best.run_id,
            "tps": best.tps,
            "broker_cpu_pct": best.broker_cpu_pct,
            "broker_cpu_core_pct": best.broker_cpu_core_pct,
            "host_cpu_pct": best.host_cpu_pct,
            "mem_pct": best.mem_pct,
            "broker_rss_mb": best.broker_rss_mb,
            "latency_p50": best.latency_p50,
            "latency_p99": best.latency_p99,
            "success_pct": best.success_pct,
        }
    return {
        "schema": "mqtt-bench/capacity/v1",
        "search_id": a.search_id,
        "broker": target.name,
        "url": target.url,
        "scenario": a.scenario,
        "qos": a.qos,
        "cpu_target": None if a.no_cpu else a.cpu_target,
        "cpu_basis": target.cpu_basis,
        "cpu_bound": cpu_bound(a, target),
        "p99_ms": a.p99_ms,
        "precision": a.precision,
        "budget_s": a.budget,
        "trial": a.trial,
        "wall_s": round(wall_s, 1),
        "stopped_by": search.stop,
        "interval": {"good": search.good, "bad": search.bad},
        "recommended": recommended,
        "limit": limit,
        "limit_text": limit_text,
        "parameters": a.env,
        "trials": [dict(asdict(t), tps=t.tps) for t in trials],
    }


def n(x, d=1):
    return "n/a" if x is None else f"{x:,.{d}f}"


def write_report(out, r, trials, cpu_target):
    rows = [
        {"tps": t.tps, "cpu_avg": t.broker_cpu_pct, "latency_p99": t.latency_p99}
        for t in sorted(trials, key=lambda t: t.rate)
        if t.tps is not None
    ]
    chart = charts.knee(out, rows, cpu_target)
    rec = r["recommended"]
    lines = [
        f"# Capacity of {r['broker']}: {r['scenario']}, QoS {r['qos']}",
        "",
        f"Search `{r['search_id']}`: {len(trials)} trials of {r['trial']} in {r['wall_s']:.0f} s. Bounds: "
        f"{r['cpu_bound']}, and each trial's own thresholds (p99 < {r['p99_ms']:g} ms, no loss at QoS >= 1, no "
        "failed connection, the rate sent on schedule), a failed one named by its diagnosis. Host CPU (1 - idle) "
        "is shown beside: it includes the generator when it shares the host.",
        "",
    ]
    if rec:
        lines += [
            f"**Recommended load: {rec['rate']:,.0f} msg/s** (TPS in + out {n(rec['tps'], 0)}): broker CPU "
            f"{n(rec['broker_cpu_pct'])}% ({n(rec['broker_cpu_core_pct'])}% of one core), host CPU "
            f"{n(rec['host_cpu_pct'])}%, memory {n(rec['mem_pct'])}%, broker RSS {n(rec['broker_rss_mb'])} MB, "
            f"latency p50 {n(rec['latency_p50'], 3)} ms / p99 {n(rec['latency_p99'], 3)} ms, delivery success "
            f"{n(rec['success_pct'], 3)}% (run `{rec['run_id']}`).",
            "",
            f"**Limited by:** {r['limit_text']}.",
        ]
    else:
        lines += [f"**No broker capacity found.** {r['limit_text'][:1].upper() + r['limit_text'][1:]}."]
    lines += [
        "",
        "| trial | rate msg/s | achieved msg/s | TPS in + out | broker CPU % | of one core % | host CPU % "
        "| memory % | p50 ms | p99 ms | generator send lag p99 ms | lost | generator CPU % | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in trials:
        verdict = "good" if t.good else "out: " + "; ".join(t.reasons)
        lines.append(
            f"| `{t.run_id}` | {t.rate:,.0f} | {n(t.achieved_rate, 0)} | {n(t.tps, 0)} | {n(t.broker_cpu_pct)} | "
            f"{n(t.broker_cpu_core_pct)} | {n(t.host_cpu_pct)} | {n(t.mem_pct)} | {n(t.latency_p50, 3)} | "
            f"{n(t.latency_p99, 3)} | {n(t.send_lag_p99, 3)} | {t.lost} | {n(t.generator_cpu_pct)} | {verdict} |"
        )
    if chart:
        lines += ["", f"![capacity knee]({chart})", "", "Broker CPU (normalised) and p99 latency of every trial."]
    lines += ["", "Each trial's own report: `scripts/report.sh <trial run id>`.", ""]
    (out / "capacity.md").write_text("\n".join(lines))


def text(r, out):
    rec = r["recommended"]
    head = f"capacity of {r['broker']} ({r['scenario']}, QoS {r['qos']}): " + (
        f"{rec['rate']:,.0f} msg/s, broker CPU {n(rec['broker_cpu_pct'])}%, p99 {n(rec['latency_p99'], 3)} ms"
        if rec
        else "none found"
    )
    return f"{head}\n  limited by: {r['limit_text']}\n  report: {out / 'capacity.md'}"
