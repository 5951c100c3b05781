"""PNG charts of a run and of a comparison of brokers (matplotlib, no display)."""

from datetime import UTC, datetime

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _t(ms):
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _save(fig, path):
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name


# Shaded spans on the time-series charts: (colour, alpha, legend label).
SPAN_STYLE = {
    "gap": ("#808080", 0.25, "monitoring gap (no Telegraf point)"),
    "outage": ("#d62728", 0.25, "broker outage"),
}


def spans(t):
    """[(kind, start ms, end ms)] of a report's monitoring gaps and broker outages."""
    out = [("gap", g["start_ms"], g["end_ms"]) for g in ((t.get("monitoring") or {}).get("gaps") or [])]
    out += [("outage", o["start_ms"], o["span_end_ms"]) for o in t.get("outages") or []]
    return out


def _shade(ax, shaded):
    """Shades each span, behind the lines, without widening the time axis."""
    xlim = ax.get_xlim()
    labelled = set()
    for kind, a, b in shaded:
        colour, alpha, label = SPAN_STYLE[kind]
        ax.axvspan(_t(a), _t(b), color=colour, alpha=alpha, zorder=0, label=None if kind in labelled else label)
        labelled.add(kind)
    ax.set_xlim(xlim)


def _broken(pts, holes):
    """pts with a NaN between two points that a monitoring gap lies between,
    so that the line stops there instead of drawing values nobody measured."""
    out = []
    for prev, cur in zip([None, *pts], pts, strict=False):
        if prev and any(prev[0] <= a and b <= cur[0] for a, b in holes):
            out.append(((prev[0] + cur[0]) / 2, float("nan")))
        out.append(cur)
    return out


def _lines(path, title, ylabel, series, shaded=()):
    """series: [(label, [(ms, value)])]; None when there is nothing to draw."""
    series = [(label, pts) for label, pts in series if pts]
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(9, 3.6))
    holes = [(a, b) for kind, a, b in shaded if kind == "gap"]
    for label, pts in series:
        pts = _broken(pts, holes)
        ax.plot([_t(t) for t, _ in pts], [v for _, v in pts], label=label, linewidth=1.2)
    _shade(ax, shaded)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return _save(fig, path)


def run_charts(out, run, res, shaded=()):
    """The time-series charts; shaded: spans() of the report, drawn on each."""
    tl = run.data.get("timeline") or []

    def col(k):
        return [(r["t"], r[k]) for r in tl if r.get(k) is not None]

    made = {
        "throughput": _lines(
            out / "throughput.png",
            "Throughput",
            "msg/s",
            [("in (published)", col("published")), ("out (received)", col("received"))],
            shaded,
        ),
        "latency": _lines(
            out / "latency.png",
            "Pub-to-sub latency per second",
            "ms",
            [("p50", col("latency_p50_ms")), ("p99", col("latency_p99_ms")), ("max", col("latency_max_ms"))],
            shaded,
        ),
        "cpu": _lines(
            out / "cpu.png",
            "CPU",
            "% (host: 1 - idle; broker: of one core)",
            [("host", res.host_cpu), ("broker process", res.broker_cpu)],
            shaded,
        ),
        "memory": _lines(
            out / "memory.png",
            "Memory",
            "%  /  MB",
            [("host used %", res.mem_pct), ("broker RSS MB", [(t, v / 2**20) for t, v in res.broker_rss])],
            shaded,
        ),
    }
    if run.data.get("outages"):
        # The storm as a timeline: connections open per second, the outages shaded.
        made["connections"] = _lines(
            out / "connections.png", "Connections open", "connections", [("open", col("connections"))], shaded
        )
    return {k: v for k, v in made.items() if v}


def knee(out, rows, cpu_target):
    """Capacity knee: the CPU the capacity judged (tables.capacity's
    cpu_judged) and p99 latency against the workload of each step."""
    pts = [r for r in rows if r.get("cpu_judged") is not None]
    if len(pts) < 2:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    x = [r["tps"] for r in pts]
    ax.plot(x, [r["cpu_judged"] for r in pts], "o-", label="average CPU % judged (report: Capacity)")
    ax.axhline(cpu_target, color="red", linestyle="--", linewidth=1, label=f"{cpu_target}% CPU target")
    ax.set_xlabel("workload TPS (in + out)")
    ax.set_ylabel("CPU %")
    ax2 = ax.twinx()
    ax2.plot(x, [r["latency_p99"] for r in pts], "s-", color="tab:orange", label="p99 latency ms")
    ax2.set_ylabel("p99 latency ms")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper left", fontsize=8)
    ax.set_title("Capacity knee")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "knee.png", dpi=100)
    plt.close(fig)
    return "knee.png"


def _bars(ax, brokers, values, title):
    xs = range(len(brokers))
    for x, b, v in zip(xs, brokers, values, strict=True):
        if b["status"] != "ran":
            ax.text(x, 0, b["status"], ha="center", va="bottom", rotation=90, fontsize=8, color="tab:red")
        elif v is None:
            ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=8, color="grey")
        else:
            ax.bar(x, v, color="tab:blue")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([b["name"] for b in brokers], fontsize=8, rotation=30, ha="right")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", alpha=0.3)


def bar_chart(out, brokers, metrics, name):
    """One figure, a subplot per metric, a bar per broker."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(3 * len(metrics), 3.6))
    for ax, (title, key) in zip(axes, metrics, strict=True):
        _bars(ax, brokers, [(b.get("figures") or {}).get(key) for b in brokers], title)
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


def timeline_chart(out, brokers, runs, name="timeline.png"):
    """Throughput and latency per second, a column per broker that ran (seconds from its start), shared axes per row."""
    ran = [b for b in brokers if b["name"] in runs]
    if not ran:
        return None
    fig, axes = plt.subplots(2, len(ran), figsize=(4 * len(ran), 6), sharey="row", squeeze=False)
    for col, b in enumerate(ran):
        tl = runs[b["name"]].data.get("timeline") or []
        t0 = tl[0]["t"] if tl else 0

        def series(k, tl=tl, t0=t0):
            pts = [(r["t"], r[k]) for r in tl if r.get(k) is not None]
            return [(t - t0) / 1000 for t, _ in pts], [v for _, v in pts]

        top, bottom = axes[0][col], axes[1][col]
        for k, label in [("published", "in (published)"), ("received", "out (received)")]:
            top.plot(*series(k), label=label, linewidth=1.2)
        for k, label in [("latency_p50_ms", "p50"), ("latency_p99_ms", "p99")]:
            bottom.plot(*series(k), label=label, linewidth=1.2)
        top.set_title(f"{b['name']}: msg/s", fontsize=9)
        bottom.set_title(f"{b['name']}: latency ms", fontsize=9)
        bottom.set_xlabel("s from start")
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


def search_chart(out, brokers, name="search.png"):
    """The recommended rate per broker, then each search's trials: p99 and broker CPU against the rate."""
    with_trials = [b for b in brokers if (b.get("capacity") or {}).get("trials")]
    fig, axes = plt.subplots(1, 1 + len(with_trials), figsize=(4 * (1 + len(with_trials)), 3.8), squeeze=False)
    _bars(axes[0][0], brokers, [(b.get("figures") or {}).get("rate") for b in brokers], "recommended rate msg/s")
    for ax, b in zip(axes[0][1:], with_trials, strict=True):
        trials = sorted(b["capacity"]["trials"], key=lambda t: t.get("rate") or 0)
        x = [t.get("rate") for t in trials]
        ax.plot(x, [t.get("latency_p99") for t in trials], "-", color="tab:orange", linewidth=1)
        for t in trials:
            ax.plot(t.get("rate"), t.get("latency_p99"), "o" if t.get("good") else "x", color="tab:orange")
        ax.set_xlabel("rate msg/s")
        ax.set_ylabel("p99 ms (o passed, x failed)")
        ax2 = ax.twinx()
        ax2.plot(x, [t.get("broker_cpu_pct") for t in trials], "s--", color="tab:blue", linewidth=1, markersize=4)
        ax2.set_ylabel("broker CPU %", color="tab:blue")
        ax.set_title(f"{b['name']}: trials", fontsize=9)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name
