"""What the dashboards (mqttbench/dashboards/__main__.py) and the report
(mqttbench/report/influx.py) select in InfluxDB: the measurement names that
Telegraf and k6 write, and the Flux filter predicates over them. Written
once, so that a dashboard panel and a report table cannot disagree about
what, say, "broker CPU" is.

Each function returns the body of a `filter(fn: (r) => ...)`. Tag values
are passed in: a real broker or run id (the report) or a Grafana template
variable such as "${broker}" (the dashboards).

A capacity search (mqttbench/capacity) runs its trials as runs of their own,
run_id `<search id>-tNN-r<rate>`, and gives every k6 sample of each the k6
tag `search=<search id>`; runs outside a search have no `search` tag. The k6
filters take either id (run()): a run id selects that run (or one trial), a
search id every trial of the search."""

# Telegraf (telegraf/): the host, the broker process natively (procstat) or
# its container under compose (docker), and the Prometheus scrapes (one
# measurement, told apart by the `source` tag: the broker or node_exporter).
CPU = "cpu"
MEM = "mem"
PROCSTAT = "procstat"
DOCKER_CPU = "docker_container_cpu"
DOCKER_MEM = "docker_container_mem"
DOCKER_BLKIO = "docker_container_blkio"
DOCKER_NET = "docker_container_net"
DISKIO = "diskio"
NET = "net"
PROMETHEUS = "prometheus"
NODE_EXPORTER = "node_exporter"
MOSQUITTO_SYS = "mosquitto_sys"  # Mosquitto's $SYS topics, tagged `topic`

# k6 metrics of the extension, through Telegraf's InfluxDB v1 listener:
# one measurement per metric, its value in the field "value".
PUBLISHES = "mqtt_publishes"
RECEIVES = "mqtt_receives"
LOST = "mqtt_lost"
DUPLICATES = "mqtt_duplicates"
CONNECTS = "mqtt_connects"
CONNECT_FAILURES = "mqtt_connect_failures"
PUBLISH_FAILURES = "mqtt_publish_failures"
RECONNECTS = "mqtt_reconnects"
ERRORS = "mqtt_errors"
CONNECTIONS = "mqtt_connections"
TARGET_RATE = "mqtt_target_rate"
STEP_RATE = "mqtt_step_rate"
RATE_ACHIEVED_RATIO = "mqtt_rate_achieved_ratio"
# A histogram's whole-run gauges, <stem>_<stat> (p50, p99, max...), pushed
# once it has a sample: a drop to its reconnect's CONNACK.
RECONNECT_DURATION = "mqtt_reconnect_duration"
# Per-second summaries, one series per `stat` tag (p50, p99, ...).
LATENCY_1S = "mqtt_latency_1s"
LATENCY_INTENDED_1S = "mqtt_latency_intended_1s"
SEND_LAG_1S = "mqtt_send_lag_1s"
# Each flow's pub-to-sub latency per second (a composite's parts), tags flow and stat.
FLOW_LATENCY_1S = "mqtt_flow_latency_1s"
# One point per finished run, written by its report (report/history.py): the History dashboard's.
RUN_SUMMARY = "mqtt_bench_run"


def tag(key, value):
    return f'r.{key} == "{value}"'


def measurement(name):
    return tag("_measurement", name)


def field(name):
    return tag("_field", name)


def run(run_id):
    """The samples of one run, or of every trial of a search: run_id is
    either id. Where a sample has no `search` tag, r.search is null and that
    side is false (no run id equals a search id: a trial's id extends its
    search's). The one run filter of every k6 query."""
    return f"({tag('run_id', run_id)} or {tag('search', run_id)})"


def k6_value(name, run_id):
    """A k6 metric of one run (or of all trials of a search, see run())."""
    return f"{measurement(name)} and {run(run_id)} and {field('value')}"


def k6_stats(name, run_id, stats):
    """The given stats (p50, p99, ...) of a per-second k6 summary of one run
    (or of all trials of a search, see run())."""
    either = " or ".join(tag("stat", s) for s in stats)
    return f"{measurement(name)} and {run(run_id)} and ({either})"


def flows(pattern):
    """The samples of the flows (k6/lib/run.js tags each group's) whose name
    the regex pattern matches whole; a sample of no flow never does."""
    return f"exists r.flow and r.flow =~ /^{pattern}$/"


def run_steps(run_id):
    """The step boundaries of exactly one run or trial (not a search):
    mqtt_step_rate is a step's rate when it starts and 0 after the last."""
    return f"{measurement(STEP_RATE)} and {tag('run_id', run_id)} and {field('value')}"


def trial_starts(search_id):
    """The step starts (rate > 0) of the trials of one capacity search."""
    return f"{measurement(STEP_RATE)} and {tag('search', search_id)} and {field('value')} and r._value > 0.0"


def host_cpu(name, broker):
    """A field of Telegraf's cpu input, all cores together (usage_idle, usage_user, ...)."""
    return f"{measurement(CPU)} and {field(name)} and {tag('broker', broker)} and {tag('cpu', 'cpu-total')}"


def host_mem(name, broker):
    """A field of Telegraf's mem input (used_percent, used, ...)."""
    return f"{measurement(MEM)} and {field(name)} and {tag('broker', broker)}"


def broker_cpu(broker):
    """The broker's own CPU, % of one core: procstat natively, the docker input under compose."""
    return (
        f"{tag('broker', broker)} and (({measurement(PROCSTAT)} and {field('cpu_usage')})"
        f" or ({measurement(DOCKER_CPU)} and {field('usage_percent')} and {tag('cpu', 'cpu-total')}))"
    )


def broker_rss(broker):
    """The broker's resident memory in bytes: procstat natively, the docker input under compose."""
    return (
        f"{tag('broker', broker)} and (({measurement(PROCSTAT)} and {field('memory_rss')})"
        f" or ({measurement(DOCKER_MEM)} and {field('usage')}))"
    )


# Devices whose I/O another device's counts already hold: partitions (of
# their disk), device-mapper and md volumes (of the disks under them), loop
# devices (of the file's disk); and RAM disks, which are no disk. The host's
# disk I/O is the sum over the rest, each write counted once.
NOT_A_DISK = r"/^((loop|ram|zram|md|dm-)[0-9]+|(sd|vd|xvd|hd)[a-z]+[0-9]+|(nvme[0-9]+n[0-9]+|mmcblk[0-9]+)p[0-9]+)$/"


def host_disk(name, broker, disks_only=False):
    """A counter of Telegraf's diskio input per device (write_bytes,
    read_bytes, writes, reads); disks_only: whole disks alone (NOT_A_DISK)."""
    only = f" and r.name !~ {NOT_A_DISK}" if disks_only else ""
    return f"{measurement(DISKIO)} and {field(name)} and {tag('broker', broker)}{only}"


def broker_disk(direction, broker):
    """The bytes the broker process wrote to (or read from) storage, a
    counter: procstat's disk_write_bytes natively, the docker input's blkio
    total under compose. direction: "write" or "read"."""
    return (
        f"{tag('broker', broker)} and (({measurement(PROCSTAT)} and {field(f'disk_{direction}_bytes')})"
        f" or ({measurement(DOCKER_BLKIO)} and {field(f'io_service_bytes_recursive_{direction}')}"
        f" and {tag('device', 'total')}))"
    )


def host_net(name, broker, interface):
    """A counter of Telegraf's net input on one interface (packets_recv, packets_sent, ...)."""
    return f"{measurement(NET)} and {field(name)} and {tag('broker', broker)} and {tag('interface', interface)}"


def container_net(name, broker):
    """A counter of the broker container's network, all its interfaces (the docker input, compose)."""
    return f"{measurement(DOCKER_NET)} and {field(name)} and {tag('broker', broker)} and {tag('network', 'total')}"


def watched(name, run_id):
    """A field of the procstat input (cpu_usage, memory_rss) of a target's
    process that scripts/compare.sh watched during one run: its points are
    tagged with the run's id (telegraf/native/watched.conf), which tells
    them from the native stack's broker even when both have one broker tag."""
    return f"{measurement(PROCSTAT)} and {tag('run_id', run_id)} and {field(name)}"


def prometheus(source, name, broker):
    """A metric scraped by Telegraf's prometheus input from `source` (a broker or node_exporter)."""
    return f"{measurement(PROMETHEUS)} and {tag('source', source)} and {field(name)} and {tag('broker', broker)}"


def mosquitto_sys(topic, broker):
    """One $SYS topic of Mosquitto."""
    return f"{measurement(MOSQUITTO_SYS)} and {tag('topic', topic)} and {tag('broker', broker)}"
