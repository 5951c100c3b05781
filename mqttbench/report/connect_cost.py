"""The broker's CPU per new connection: what accepting a connection (a TLS
handshake, a WebSocket upgrade, a CONNECT) costs the broker, the figure
that tells TCP from TLS on one broker. Measured over the connect ramp (from
the run's start to the second all connections were open, the result's
timeline) from the broker process's CPU samples."""

from statistics import median


def ramp(run):
    """(start ms, end ms, connections opened) of the run's connect ramp, or None."""
    tl = run.open_connections()
    if not tl:
        return None
    top = max(n for _, n in tl)
    if top <= 0:
        return None
    # Each row closes its second: the ramp starts with the first one's second.
    end = next(t for t, n in tl if n >= top)
    return tl[0][0] - 1000, end, top


def cpu_seconds(samples, start, end):
    """CPU-seconds in [start, end] of a broker CPU series [(ms, % of one
    core)], each sample being the mean since the one before (Telegraf's
    procstat cpu_usage and docker usage_percent are deltas), the first one
    over the median interval."""
    if len(samples) < 2:
        return None, None
    dt = median(b[0] - a[0] for a, b in zip(samples, samples[1:], strict=False))
    total, prev = 0.0, samples[0][0] - dt
    for t, v in samples:
        overlap = min(t, end) - max(prev, start)
        if overlap > 0:
            total += v / 100 * overlap / 1000
        prev = t
    return total, dt


def broker_cpu_per_connect(run, broker_cpu):
    """{"broker_cpu_ms_per_connect", "connect_ramp_s", "connect_cost_note"}."""
    r = ramp(run)
    out = {"broker_cpu_ms_per_connect": None, "connect_ramp_s": None, "connect_cost_note": None}
    if r is None:
        return out
    start, end, opened = r
    out["connect_ramp_s"] = (end - start) / 1000
    cpu_s, dt = cpu_seconds(broker_cpu, start, end)
    if cpu_s is None:
        out["connect_cost_note"] = "no broker process CPU samples over the connect ramp"
    elif end - start < 2 * dt:
        # A sample is a mean over its interval: a ramp shorter than two of
        # them would be charged with the idle time around it.
        out["connect_cost_note"] = (
            f"the connect ramp ({(end - start) / 1000:.1f} s) is shorter than two broker CPU samples "
            f"({dt / 1000:.0f} s apart): lower CONNECT_RATE or raise the client count"
        )
    else:
        out["broker_cpu_ms_per_connect"] = 1000 * cpu_s / opened
    return out
