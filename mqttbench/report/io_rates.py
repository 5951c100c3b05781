"""The disk and network rates of a run, beside its CPU and memory: what the
broker process and the broker's host wrote to disk per second, and the
packets per second on the interface the broker's traffic used. A broker
that persists writes: VerneMQ queues QoS 1/2 messages in LevelDB, Mosquitto
saves its persistence file. A figure not gathered is None, and `why` says
why, in words the report and the comparison print beside n/a."""

from urllib.parse import urlparse

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _within(series, start, end):
    return [v for t, v in series if start <= t < end]


def _avg_max(series, start, end):
    values = _within(series, start, end)
    return (sum(values) / len(values), max(values)) if values else (None, None)


def interface(run, influx, start, end, broker):
    """(name the report shows, interface or None for the broker container, why not known).

    Under compose the docker input counts the broker container's own
    packets; natively a broker on loopback (one host) talks over lo; else
    the broker host's busiest interface other than lo, named as such."""
    if influx.host_net(start, end, broker, "rx_packets", None):
        return "broker container", None, None
    host = urlparse(run["parameters"].get("url") or "").hostname or ""
    if host in LOOPBACK or host.startswith("127."):
        return "lo", "lo", None
    busy = [i for i, n in influx.interfaces(start, end, broker).items() if i != "lo" and n > 0]
    if not busy:
        return None, None, f"no interface of the broker host but lo carried packets (Telegraf net, broker={broker})"
    return busy[0], busy[0], None


def figures(run, influx):
    """{broker_disk_write_avg, _max, host_disk_write_avg, _max (bytes/s),
    interface, packets_recv_avg, packets_sent_avg (per second), why}."""
    out = {
        "broker_disk_write_avg": None,
        "broker_disk_write_max": None,
        "host_disk_write_avg": None,
        "host_disk_write_max": None,
        "interface": None,
        "packets_recv_avg": None,
        "packets_sent_avg": None,
        "why": {},
    }
    why = out["why"]
    if influx is None:
        reason = "InfluxDB was not read (see Missing data)"
        why.update(broker_disk_write=reason, host_disk_write=reason, packets=reason)
        return out
    start, end = run.window()
    broker = run["broker"]
    # A counter's first point in a range has no rate: the range starts one
    # Telegraf interval (5 s by default) early; the figures are the run's.
    span = (start - 5000, end)
    out["broker_disk_write_avg"], out["broker_disk_write_max"] = _avg_max(influx.broker_disk(*span, broker), start, end)
    if out["broker_disk_write_avg"] is None:
        why["broker_disk_write"] = (
            f"no point of the broker process's disk writes for broker={broker} during the run: its process was not "
            "watched (a target: compare.sh --target NAME=URL,pid=N), or its Telegraf gathers no procstat "
            "disk_write_bytes (telegraf/native/procstat.conf) or docker blkio (telegraf/compose/docker.conf)"
        )
    out["host_disk_write_avg"], out["host_disk_write_max"] = _avg_max(influx.host_disk(*span, broker), start, end)
    if out["host_disk_write_avg"] is None:
        why["host_disk_write"] = (
            f"no point of Telegraf's diskio for broker={broker} during the run (telegraf/telegraf.d/host.conf "
            "gathers it on the broker's host)"
        )
    shown, name, unknown = interface(run, influx, *span, broker)
    out["interface"] = shown
    if unknown:
        why["packets"] = unknown
        return out
    fields = ("rx_packets", "tx_packets") if name is None else ("packets_recv", "packets_sent")
    for key, f in zip(("packets_recv_avg", "packets_sent_avg"), fields, strict=True):
        out[key] = _avg_max(influx.host_net(*span, broker, f, name), start, end)[0]
    if out["packets_recv_avg"] is None:
        why["packets"] = f"no point of Telegraf's net input on {shown} for broker={broker} during the run"
    return out
