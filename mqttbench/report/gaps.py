"""Periods a report must not pass over in silence: monitoring gaps (Telegraf
wrote no point for more than two collection intervals, so host and broker
figures there are not measured) and broker outages (connections down, from
the result file's optional `outages`)."""

from statistics import median

# A gap is a silence longer than this many collection intervals.
GAP_INTERVALS = 2


def interval_ms(times, fallback_ms):
    """Telegraf's collection interval, as the median spacing of its points:
    the data says how it was collected, whatever the environment of the
    report says (TELEGRAF_INTERVAL is the stack's, not necessarily this
    shell's). fallback_ms when there are too few points to tell."""
    steps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
    return median(steps) if len(steps) >= 2 else fallback_ms


def monitoring_gaps(times, start, end, interval):
    """[{start_ms, end_ms, duration_s}] of the silences in [start, end] longer
    than GAP_INTERVALS intervals, between consecutive points and at either
    edge of the window. No points at all is not a gap but missing data (the
    report names it as such)."""
    pts = sorted(t for t in times if start <= t <= end)
    if not pts:
        return []
    bounds = [start, *pts, end]
    out = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        if b - a > GAP_INTERVALS * interval:
            out.append({"start_ms": a, "end_ms": b, "duration_s": round((b - a) / 1000, 3)})
    return out


def outages(run):
    """The result file's broker outages, each with the end the charts use
    (the run's end when the run ended during the outage). Older result files
    have none."""
    rows = run.data.get("outages") or []
    run_end = run.window()[1]
    timeline = run.open_connections()
    out = []
    for o in rows:
        end = o.get("end_ms")
        span_end = end if end is not None else max(run_end, o["start_ms"])
        out.append(
            {
                "start_ms": o["start_ms"],
                "end_ms": end,
                "ongoing_at_end": end is None,
                "span_end_ms": span_end,
                "duration_s": o.get("duration_s"),
                "max_down": o.get("max_down"),
                "peak_back_per_s": peak_back(timeline, o["start_ms"], span_end),
            }
        )
    return out


def peak_back(timeline, start, end):
    """The most connections the broker took back in one second of an outage
    (each second's rise of the open connections, CONNACKs received, in the
    timeline's seconds that end within it or in the second after), or None."""
    rises = [b[1] - a[1] for a, b in zip(timeline, timeline[1:], strict=False) if start <= b[0] <= end + 1000]
    peak = max(rises, default=0)
    return peak if peak > 0 else None
