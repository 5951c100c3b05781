"""The comparison of brokers that scripts/compare.sh writes: one report, in
mqttbs's format, with a table per metric and the brokers as its columns, the
charts side by side, and each broker's disclosure.

    python -m report.brokers MANIFEST [--results DIR] [--out DIR]

MANIFEST (compare.sh writes it, reports/compare-<id>/manifest.json): the
comparison's scenario, -e parameters and limits, and per broker its name,
kind (broker: started by this stack; target: already running), status (ran,
or not run with the reason), run id (or, with --search, the capacity
search's id), version, and whether its metrics went to InfluxDB. A broker
that did not run keeps its column, marked with the reason.

The figures are the single-run report's (tables.build, tables.success,
tables.latency), from the result files and InfluxDB; a capacity search's are
those of scripts/capacity.sh's capacity.json. Writes compare.md, the charts
and results.json beside the manifest (or in --out)."""

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from jinja2 import Environment, FileSystemLoader  # noqa: E402

import broker_facts  # noqa: E402
import flux_filters as ff  # noqa: E402

from . import tables  # noqa: E402
from .influx import Influx  # noqa: E402
from .results import MissingData, find  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOT_RUN = "not run"  # did not start, could not be reached, or wrote no result
NO_RESULT = "no result"  # a capacity search that ran and found no rate


class HostTagged:
    """InfluxDB as seen for a target on this host: host CPU and memory are
    this host's Telegraf's, whose points carry the native stack's broker tag
    (host_tag); the target's own process is not the stack's, so its CPU and
    RSS are read under the target's own tag (n/a unless a Telegraf of its
    own reports them), and never the stack broker's."""

    def __init__(self, influx, name, host_tag):
        self.influx, self.name, self.host_tag = influx, name, host_tag

    def __getattr__(self, attr):
        return getattr(self.influx, attr)

    def point_times(self, start, end, predicate):
        return self.influx.point_times(
            start, end, predicate.replace(ff.tag("broker", self.name), ff.tag("broker", self.host_tag))
        )

    def host_cpu(self, start, end, broker):
        return self.influx.host_cpu(start, end, self.host_tag)

    def host_mem(self, start, end, broker):
        return self.influx.host_mem(start, end, self.host_tag)

    def broker_host(self, start, end, broker):
        return self.influx.broker_host(start, end, self.host_tag)

    def broker_process(self, start, end, broker):
        if broker == self.host_tag:  # the stack's own broker process, not the target
            return [], []
        return self.influx.broker_process(start, end, broker)


def connect_influx():
    try:
        return Influx.from_env(), None
    except MissingData as e:
        return None, str(e)


def mb(x):
    return None if x is None else x / 2**20


def run_figures(run, influx, cpu_target):
    """The figures of one run, computed by the single-run report's tables."""
    tables.require(run)
    res, t = tables.build(run, influx, cpu_target)
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
        "connections_ok": c["established"],
        "connections_failed": c["failed"],
        "connection_success_pct": c["success_pct"],
        "connect_p99_ms": c["connect_p99_ms"],
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
        "Connections",
        None,
        [
            ("established", "connections_ok", 0),
            ("failed", "connections_failed", 0),
            ("success %", "connection_success_pct", 3),
            ("connect p99 ms", "connect_p99_ms", 3),
        ],
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


def header(b):
    if b["status"] == "ran":
        return b["name"]
    return f"{b['name']} — {b['status']}: {b.get('short') or b.get('reason') or 'see its disclosure'}"


def build_tables(brokers, spec, key="figures"):
    out = []
    for title, note, rows in spec:
        lines = []
        for label, k, d in rows:
            cells = [b["status"] if b["status"] != "ran" else fmt((b.get(key) or {}).get(k), d) for b in brokers]
            lines.append([label, *cells])
        out.append({"title": title, "note": note, "header": [header(b) for b in brokers], "rows": lines})
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
    return {"title": "Search", "note": None, "header": [header(b) for b in brokers], "rows": rows}


# --- Charts ----------------------------------------------------------------


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


# --- Per broker ------------------------------------------------------------


def load_run(b, dirs, influx, influx_problem, cpu_target):
    """Fills b with its figures, or marks it when its result cannot be read; returns the Run."""
    try:
        run = find(dirs, b["run_id"])
        source = None
        if b.get("influx") and influx is not None:
            source = HostTagged(influx, b["name"], b["host_tag"]) if b.get("host_tag") else influx
        t, figures = run_figures(run, source, cpu_target)
    except (MissingData, KeyError, TypeError, ValueError) as e:
        b.update(status=NOT_RUN, short="its result cannot be read", reason=f"{e.__class__.__name__}: {e}")
        return None
    missing = list(t["missing"])
    if not b.get("influx"):
        missing.insert(0, "InfluxDB: this run's metrics were not sent to InfluxDB (no Telegraf listener answered)")
    elif influx is None:
        missing.insert(0, influx_problem)
    b.update(
        figures=figures,
        missing=missing,
        generator_warning=t["generator"]["warning"],
        version=(run.data.get("versions") or {}).get("broker") or b.get("version"),
        parameters=run["parameters"],
        report=f"../{run.run_id}/report.md",
        result=str(run.path.relative_to(ROOT)) if run.path.is_relative_to(ROOT) else str(run.path),
    )
    return run


def load_search(b, root):
    """Fills b with its capacity search's figures (capacity.json); a search that found no rate keeps its reason."""
    d = root / f"capacity-{b['search_id']}"
    try:
        cap = json.loads((d / "capacity.json").read_text())
    except (OSError, ValueError):
        if b["status"] == "ran":
            b.update(
                status=NO_RESULT, short="no capacity.json", reason=f"{d / 'capacity.json'} is missing or unreadable"
            )
        return
    b["capacity"] = cap
    b["report"] = f"../capacity-{b['search_id']}/" + ("capacity.md" if (d / "capacity.md").exists() else "")
    rec = cap.get("recommended")
    if rec:
        b["figures"] = rec
    elif b["status"] == "ran":
        b.update(status=NO_RESULT, short=f"no capacity found ({cap.get('limit')})", reason=cap.get("limit_text"))


def disclosure(b, manifest):
    """Markdown lines: how this broker ran, its version and configuration."""
    name = b["name"]
    lines = []
    if b["status"] == "ran":
        lines.append("**Status:** ran.")
    else:
        lines.append(f"**Status:** {b['status']}: {b.get('reason') or b.get('short')}.")
    if b["kind"] == "target":
        lines.append(
            f"**Broker:** a target at `{b.get('url')}`, not managed: this comparison neither started, stopped "
            "nor configured it; its limits and configuration are its own, not disclosed here."
        )
    elif b["mode"] == "compose":
        lines.append(
            f"**Broker:** managed by this stack under compose: profile `{name}` up for its turn, its services "
            f"(`{name}`, `telegraf-{name}`) stopped after it; InfluxDB and Grafana stay up."
        )
    else:
        lines.append("**Broker:** managed by this stack, natively (`scripts/stack.sh`).")
    if b["kind"] != "target" and manifest.get("limits"):
        lines.append(f"**Limits:** {manifest['limits']}.")
    lines.append(f"**Version:** {b.get('version') or 'not recorded'}.")
    if b["kind"] != "target" and b["status"] != "ran" and broker_facts.load(name):
        lines.append(f"**Configuration:** `brokers/{name}/broker.toml` (not shown: the broker did not run).")
    elif b["kind"] != "target":
        facts = broker_facts.load(name)
        if facts:
            lines += [
                f"**Configuration changes from defaults** (`brokers/{name}/broker.toml`):",
                "",
                broker_facts.markdown(facts),
                "",
            ]
        else:
            lines.append(f"**Configuration:** no facts file (`brokers/{name}/broker.toml`): not disclosed.")
    if manifest.get("search"):
        link = f", [its report]({b['report']})." if b.get("report") else "."
        lines.append(f"**Capacity search:** `{b['search_id']}`{link}")
        cap = b.get("capacity") or {}
        if cap:
            lines.append(f"**Search result:** {cap.get('limit_text') or cap.get('limit') or 'no limit recorded'}.")
    else:
        lines.append(
            f"**Run:** `{b['run_id']}`"
            + (f", [its report]({b['report']}), result file `{b['result']}`." if b.get("report") else " (no result).")
        )
        f = b.get("figures")
        if f:
            verdict = (
                "passed" if f["passed"] else "FAILED (" + ", ".join(f"`{k}`" for k in f["failed_thresholds"]) + ")"
            )
            lines.append(f"**Thresholds:** {verdict}.")
    if b.get("host_tag"):
        lines.append(
            f"**Host metrics:** this host's Telegraf (its points tagged broker={b['host_tag']}, the native stack's), "
            "the target being on loopback; the target's own process is not watched by it."
        )
    for m in b.get("missing") or []:
        lines.append(f"**Missing:** {m}.")
    if b.get("generator_warning"):
        lines.append(f"**Warning:** {b['generator_warning']}.")
    lines.append(f"Log: `{b['log']}`." if b.get("log") else "")
    return "\n\n".join(x for x in lines if x)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m report.brokers", description=__doc__)
    ap.add_argument("manifest")
    ap.add_argument("--results", action="append", help="directory of result files (default: reports/)")
    ap.add_argument("--out", help="where to write (default: the manifest's directory)")
    args = ap.parse_args(argv)
    mpath = Path(args.manifest)
    try:
        manifest = json.loads(mpath.read_text())
        brokers = manifest["brokers"]
        assert isinstance(brokers, list) and all("name" in b and "status" in b for b in brokers)
    except (OSError, ValueError, KeyError, AssertionError) as e:
        print(f"error: {mpath} is not a comparison manifest ({e.__class__.__name__}: {e})", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else mpath.parent
    out.mkdir(parents=True, exist_ok=True)
    dirs = args.results or [str(ROOT / "reports")]
    reports_root = Path(dirs[0])
    cpu_target = float(manifest.get("cpu_target") or 75)
    search = bool(manifest.get("search"))
    for b in brokers:
        b.setdefault("kind", "target")
        b.setdefault("mode", b["kind"])
        if b["status"] not in ("ran", NO_RESULT):
            b["status"] = NOT_RUN

    runs = {}
    if search:
        for b in brokers:
            load_search(b, reports_root)
    else:
        influx, problem = None, None
        if any(b.get("influx") and b["status"] == "ran" for b in brokers):
            influx, problem = connect_influx()
        for b in brokers:
            if b["status"] == "ran":
                run = load_run(b, dirs, influx, problem, cpu_target)
                if run is not None:
                    runs[b["name"]] = run

    if search:
        metric_tables = [*build_tables(brokers, SEARCH_TABLES), search_table(brokers)]
        made = {"search": search_chart(out, brokers)}
    else:
        metric_tables = build_tables(brokers, RUN_TABLES)
        verdicts = [
            "pass" if (b.get("figures") or {}).get("passed") else ("FAIL" if b["status"] == "ran" else b["status"])
            for b in brokers
        ]
        metric_tables.append(
            {
                "title": "Thresholds",
                "note": None,
                "header": [header(b) for b in brokers],
                "rows": [["verdict", *verdicts]],
            }
        )
        made = {
            "bars": bar_chart(
                out,
                brokers,
                [
                    ("delivered msg/s", "sub_rate"),
                    ("p99 latency ms", "latency_p99"),
                    ("host CPU % avg (1 - idle)", "host_cpu_avg"),
                    ("broker CPU % avg", "broker_cpu_avg"),
                    ("delivery success %", "delivery_success_pct"),
                ],
                "bars.png",
            ),
            "timeline": timeline_chart(out, brokers, runs),
        }
    made = {k: v for k, v in made.items() if v}

    params = next((b["parameters"] for b in brokers if b.get("parameters")), None)
    written = datetime.now(UTC).isoformat(timespec="seconds")
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), keep_trailing_newline=True)
    env.filters["cell"] = cell
    text = env.get_template("brokers.md.j2").render(
        m=manifest,
        brokers=brokers,
        tables=metric_tables,
        charts=made,
        params=params,
        disclosures={b["name"]: disclosure(b, manifest) for b in brokers},
        not_run=[b for b in brokers if b["status"] != "ran"],
        written=written,
    )
    (out / "compare.md").write_text(text)
    keep = (
        "name kind mode url status short reason version run_id search_id host_tag influx report result "
        "figures missing generator_warning log"
    ).split()
    (out / "results.json").write_text(
        json.dumps(
            {
                **{
                    k: manifest.get(k)
                    for k in ("compare_id", "scenario", "search", "mode", "cpu_target", "env", "limits")
                },
                "written_at": written,
                "charts": made,
                "brokers": [
                    {k: b.get(k) for k in keep}
                    | (
                        {"capacity": {k: v for k, v in b["capacity"].items() if k != "trials"}}
                        if b.get("capacity")
                        else {}
                    )
                    for b in brokers
                ],
            },
            indent=1,
            default=str,
        )
    )
    print(f"comparison: {out / 'compare.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
