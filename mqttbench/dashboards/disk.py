"""The disk panels of the dashboards (mqttbench/dashboards/__main__.py adds
them): bytes read and written per second and IOPS, per device on Host, and
on Benchmark overview the host's whole disks together beside the broker
process's own. A broker that persists writes: VerneMQ queues QoS 1/2
messages in LevelDB, Mosquitto saves its persistence file. From Telegraf's
diskio and procstat (natively) or docker blkio (compose) inputs, with the
filters the report uses (flux_filters.py)."""

from mqttbench import flux_filters as ff
from mqttbench.dashboards.flux import HOST, named, where, window


def per_second(predicate):
    """Each counter's rate, per window."""
    return where(predicate) + "  |> derivative(unit: 1s, nonNegative: true)\n" + window("mean")


def per_device(read, write, words):
    """A series per device and direction: read and write are diskio's
    fields, words what the legend says after the device's name."""
    return per_second(
        f"{ff.measurement(ff.DISKIO)} and ({ff.field(read)} or {ff.field(write)}) and {ff.tag('broker', HOST)}"
    ) + named(f'r.name + (if r._field == "{read}" then " {words[0]}" else " {words[1]}")')


def summed(predicate, label):
    """The rates of every series matching predicate, added up per window."""
    return per_second(predicate) + "\n  |> group()\n" + window("sum") + named(label)


def host_total(field, label):
    return summed(ff.host_disk(field, HOST, disks_only=True), label)


def broker_total(direction, label):
    return summed(ff.broker_disk(direction, HOST), label)


DEVICE_NOTE = (
    "Per device that had I/O (Telegraf diskio on the broker's host; partitions and volumes beside their disks). "
)


def host_panels(board):
    board.panel(
        "Disk read / written (bytes/s)",
        [per_device("read_bytes", "write_bytes", ("read", "written"))],
        "Bps",
        description=DEVICE_NOTE + "A broker persisting messages writes here (VerneMQ's LevelDB queues, "
        "Mosquitto's persistence file).",
    )
    board.panel(
        "Disk IOPS (reads, writes per second)",
        [per_device("reads", "writes", ("reads", "writes"))],
        "ops",
        description=DEVICE_NOTE + "Completed reads and writes per second.",
    )


def overview_panels(board):
    board.panel(
        "Disk read / written, host and broker (bytes/s)",
        [
            host_total("read_bytes", '"host read"'),
            host_total("write_bytes", '"host written"'),
            broker_total("read", '"broker read"'),
            broker_total("write", '"broker written"'),
        ],
        "Bps",
        description="The broker host's whole disks together (Telegraf diskio), and what the broker process read "
        "from and wrote to storage (procstat natively, the container's block I/O under compose).",
    )
    board.panel(
        "Host disk IOPS",
        [host_total("reads", '"reads"'), host_total("writes", '"writes"')],
        "ops",
        description="Completed reads and writes per second, the broker host's whole disks together (Telegraf diskio).",
    )
