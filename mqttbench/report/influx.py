"""The InfluxDB side of a run: host and broker resources, through the
official client. Every query is bounded by the run's window; the filters are
those of the dashboards (flux_filters.py)."""

import os
import urllib.error
import urllib.request
from datetime import UTC, datetime

from influxdb_client import InfluxDBClient
from influxdb_client.rest import ApiException

from mqttbench import flux_filters as ff

from .results import MissingData


def _reason(e):
    """The innermost cause of a connection error, in one short line (the
    client's own message repeats the pool's internals)."""
    while e.__cause__ is not None or e.__context__ is not None:
        e = e.__cause__ or e.__context__
    text = str(e).splitlines()[0] if str(e) else e.__class__.__name__
    return text[-200:]


def _probe(url):
    """Why url/ping fails, for the message (the client's ping() only says that it does)."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/ping", timeout=5) as r:
            return f"/ping answered HTTP {r.status}"
    except urllib.error.HTTPError as e:
        return f"/ping answered HTTP {e.code}"
    except (urllib.error.URLError, OSError) as e:
        return _reason(e.reason if isinstance(e, urllib.error.URLError) and isinstance(e.reason, BaseException) else e)


def _iso(ms):
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Queries:
    """The figures a report reads, built from five primitives that a source
    answers (series, counter_rate, interfaces, point_times, broker_host): live
    from InfluxDB (Influx), or from a run folder's saved answers (series.py)."""

    def host_disk(self, start, end, broker, name="write_bytes"):
        return self.counter_rate(start, end, ff.host_disk(name, broker, disks_only=True))

    def broker_disk(self, start, end, broker, direction="write"):
        return self.counter_rate(start, end, ff.broker_disk(direction, broker))

    def host_net(self, start, end, broker, name, interface=None):
        """A net counter's rate on one interface; interface None: the broker container's (compose)."""
        pred = ff.container_net(name, broker) if interface is None else ff.host_net(name, broker, interface)
        return self.counter_rate(start, end, pred)

    def host_cpu(self, start, end, broker):
        """CPU % (1 - idle), and user+system %, of the broker host."""
        idle = self.series(start, end, ff.host_cpu("usage_idle", broker))
        user = dict(self.series(start, end, ff.host_cpu("usage_user", broker)))
        system = dict(self.series(start, end, ff.host_cpu("usage_system", broker)))
        us = sorted((t, user[t] + system[t]) for t in user.keys() & system.keys())
        return [(t, 100.0 - v) for t, v in idle], us

    def host_mem(self, start, end, broker):
        return (
            self.series(start, end, ff.host_mem("used_percent", broker)),
            self.series(start, end, ff.host_mem("used", broker)),
        )

    def broker_process(self, start, end, broker):
        return (self.series(start, end, ff.broker_cpu(broker)), self.series(start, end, ff.broker_rss(broker)))


class Influx(Queries):
    def __init__(self, url, token, org, bucket):
        if not token:
            raise MissingData(
                "INFLUX_TOKEN is not set, so host and broker metrics are missing: "
                "scripts/stack.sh up writes it to .env.local; under compose: "
                "INFLUX_TOKEN=$(scripts/compose.sh secret influx_token)"
            )
        self.url, self.org, self.bucket = url, org, bucket
        self.client = InfluxDBClient(url=url, token=token, org=org, timeout=30_000)
        try:
            if not self.client.ping():
                raise MissingData(
                    f"InfluxDB at {url} does not answer ({_probe(url)}), so host and broker metrics are missing: "
                    "start it (scripts/stack.sh up) or set INFLUX_URL"
                )
        except MissingData:
            raise
        except Exception as e:  # the client raises several kinds for a refused connection
            raise MissingData(
                f"InfluxDB at {url} is unreachable ({e.__class__.__name__}: {_reason(e)}), so host and broker "
                "metrics are missing: start it (scripts/stack.sh up) or set INFLUX_URL"
            ) from None
        # ping() needs no token: a wrong one (another stack's) is found here,
        # once, rather than as a crash in the first query.
        try:
            self.client.buckets_api().find_bucket_by_name(bucket)
        except ApiException as e:
            raise MissingData(
                f"InfluxDB at {url} refuses INFLUX_TOKEN (HTTP {e.status} {e.reason}), so host and broker metrics "
                "are missing: use the token of the stack that runs there (native: .env.local; compose: "
                "scripts/compose.sh secret influx_token)"
            ) from None

    @classmethod
    def from_env(cls):
        port = os.environ.get("INFLUXDB_PORT", "8086")
        return cls(
            os.environ.get("INFLUX_URL", f"http://127.0.0.1:{port}"),
            os.environ.get("INFLUX_TOKEN"),
            os.environ.get("INFLUXDB_ORG", "mqtt-bench"),
            os.environ.get("INFLUXDB_BUCKET", "mqtt-bench"),
        )

    def series(self, start_ms, end_ms, predicate, every="1s", fn="mean"):
        """[(unix ms, value)] of the points matching predicate, as one series aggregated per `every`."""
        q = (
            f'from(bucket: "{self.bucket}")\n'
            f"  |> range(start: {_iso(start_ms)}, stop: {_iso(end_ms)})\n"
            f"  |> filter(fn: (r) => {predicate})\n  |> group()\n"
            + f'  |> aggregateWindow(every: {every}, fn: {fn}, createEmpty: false, timeSrc: "_start")\n'
        )
        out = []
        for table in self.client.query_api().query(q, org=self.org):
            for rec in table.records:
                if rec.get_value() is not None:
                    out.append((int(rec.get_time().timestamp() * 1000), float(rec.get_value())))
        return sorted(out)

    def counter_rate(self, start_ms, end_ms, predicate, every="1s"):
        """[(unix ms, per second)] of the counters matching predicate (bytes
        written per device, ...): each series' rate, then their sum."""
        q = (
            f'from(bucket: "{self.bucket}")\n'
            f"  |> range(start: {_iso(start_ms)}, stop: {_iso(end_ms)})\n"
            f"  |> filter(fn: (r) => {predicate})\n"
            "  |> toFloat()\n  |> derivative(unit: 1s, nonNegative: true)\n"
            f'  |> aggregateWindow(every: {every}, fn: mean, createEmpty: false, timeSrc: "_start")\n'
            f'  |> group()\n  |> aggregateWindow(every: {every}, fn: sum, createEmpty: false, timeSrc: "_start")\n'
        )
        return sorted(
            (int(rec.get_time().timestamp() * 1000), float(rec.get_value()))
            for table in self.client.query_api().query(q, org=self.org)
            for rec in table.records
            if rec.get_value() is not None
        )

    def interfaces(self, start, end, broker):
        """{interface: packets received} of the net input over the window, busiest first."""
        q = (
            f'from(bucket: "{self.bucket}") |> range(start: {_iso(start)}, stop: {_iso(end)})'
            f" |> filter(fn: (r) => {ff.measurement(ff.NET)} and {ff.field('packets_recv')} and"
            f" {ff.tag('broker', broker)}) |> spread()"
        )
        got = {
            rec.values.get("interface"): float(rec.get_value())
            for table in self.client.query_api().query(q, org=self.org)
            for rec in table.records
        }
        return dict(sorted(got.items(), key=lambda kv: -kv[1]))

    def point_times(self, start_ms, end_ms, predicate):
        """Unix ms of every point matching predicate, as written (not aggregated)."""
        q = (
            f'from(bucket: "{self.bucket}")\n'
            f"  |> range(start: {_iso(start_ms)}, stop: {_iso(end_ms)})\n"
            f"  |> filter(fn: (r) => {predicate})\n  |> group()\n"
            '  |> keep(columns: ["_time"])\n'
        )
        return sorted(
            int(rec.get_time().timestamp() * 1000)
            for table in self.client.query_api().query(q, org=self.org)
            for rec in table.records
        )

    def broker_host(self, start, end, broker):
        """What node_exporter says of the broker host: kernel, OS, cores, memory."""
        api = self.client.query_api()

        def last(field, extra=""):
            q = (
                f'from(bucket: "{self.bucket}") |> range(start: {_iso(start - 120_000)}, stop: {_iso(end)})'
                f" |> filter(fn: (r) => {ff.prometheus(ff.NODE_EXPORTER, field, broker)}{extra}) |> last()"
            )
            return [rec for table in api.query(q, org=self.org) for rec in table.records]

        info = {}
        for rec in last("node_uname_info"):
            info.update({k: rec.values.get(k) for k in ("nodename", "sysname", "release", "version", "machine")})
        cores = {rec.values.get("cpu") for rec in last("node_cpu_seconds_total", f" and {ff.tag('mode', 'idle')}")}
        for rec in last("node_memory_MemTotal_bytes"):
            info["mem_total_bytes"] = rec.get_value()
        if cores:
            info["cpus"] = len(cores)
        return info


class HostTagged:
    """InfluxDB as seen for a target on this host: host CPU and memory are
    this host's Telegraf's, whose points carry the native stack's broker tag
    (host_tag). The target's own process is not the stack's: its CPU and RSS
    are those scripts/compare.sh watched during the run (tagged with its
    run id, whatever the target's name), else those a Telegraf of its own
    reports under its name; never the stack broker's."""

    def __init__(self, influx, name, host_tag, run_id):
        self.influx, self.name, self.host_tag, self.run_id = influx, name, host_tag, run_id

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

    def host_disk(self, start, end, broker, name="write_bytes"):
        return self.influx.host_disk(start, end, self.host_tag, name)

    def host_net(self, start, end, broker, name, interface=None):
        return self.influx.host_net(start, end, self.host_tag, name, interface)

    def interfaces(self, start, end, broker):
        return self.influx.interfaces(start, end, self.host_tag)

    def broker_disk(self, start, end, broker, direction="write"):
        own = self.counter_rate(start, end, ff.watched(f"disk_{direction}_bytes", self.run_id))
        if own or broker == self.host_tag:  # as broker_process: never the stack broker's for a target
            return own
        return self.influx.broker_disk(start, end, broker, direction)

    def broker_process(self, start, end, broker):
        cpu = self.series(start, end, ff.watched("cpu_usage", self.run_id))
        rss = self.series(start, end, ff.watched("memory_rss", self.run_id))
        if cpu or rss or broker == self.host_tag:  # under the stack's tag: the stack's broker, not the target
            return cpu, rss
        return self.influx.broker_process(start, end, broker)


def connect_influx():
    try:
        return Influx.from_env(), None
    except MissingData as e:
        return None, str(e)
