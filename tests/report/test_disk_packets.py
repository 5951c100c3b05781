"""Disk I/O and packet rates (issue 34): Telegraf gathers the host's disk
I/O (inputs.diskio), the broker process's disk reads and writes (procstat)
and the packets of each interface (inputs.net); the report and compare.sh
give the broker's and the host's disk write rate and the packets per second
on the interface the broker's traffic used; the Host dashboard draws disk
bytes and IOPS per device. A broker that writes: a second Mosquitto with
persistence on, saving every second, under QoS 1 to persistent sessions,
watched as compare.sh watches a target's process (pid=N)."""

import getpass
import json
import subprocess
import time
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from compare_runs import REPORTS, cleanup, compare, table
from conftest import ROOT, loopback_port, wait_until
from dashboard_answers import bind, dashboard_queries
from loopback_brokers import listening


def test_telegraf_gathers_disk_io_process_io_and_packets():
    host = tomllib.loads((ROOT / "telegraf/telegraf.d/host.conf").read_text())
    assert "diskio" in host["inputs"], host["inputs"].keys()
    net = host["inputs"]["net"][0]
    assert "lo" in net["interfaces"] and "packets_recv" not in net.get("fieldexclude", [])
    procstat = tomllib.loads((ROOT / "telegraf/native/procstat.conf").read_text())["inputs"]["procstat"][0]
    # /proc/<pid>/io read_bytes and write_bytes, which Telegraf 1.37 names
    # disk_*: its read_bytes and write_bytes are every read and write, sockets too.
    assert {"disk_read_bytes", "disk_write_bytes"} <= set(procstat["fieldinclude"])
    docker = tomllib.loads((ROOT / "telegraf/compose/docker.conf").read_text())["inputs"]["docker"][0]
    assert "blkio" in docker["total_include"]


@pytest.fixture
def persisting(tmp_path):
    """A Mosquitto that saves its store every second (persistence true,
    autosave_interval 1) in tmp_path: the broker writing to disk."""
    port = loopback_port(11936)
    assert not listening(port), f"port {port} is taken"
    conf = tmp_path / "persist.conf"
    conf.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
        f"persistence_location {tmp_path}/\nautosave_interval 1\n"
        # Run as root, Mosquitto would become the user mosquitto, who cannot write here.
        f"user {getpass.getuser()}\n"
    )
    proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: listening(port), timeout=10)
        yield f"mqtt://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def rows(md, title):
    return {row[0]: row[1:] for row in table(md, title)[1:]}


def number(cell):
    return float(cell.replace(",", ""))


def test_a_persisting_broker_has_its_disk_writes_and_the_loopback_packets(stack, persisting):
    url, proc = persisting
    compare_id = f"cmp-disk-{time.time_ns()}"
    start = (datetime.now(UTC) - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    r = compare(
        "--native",
        "--target",
        f"persist={url},pid={proc.pid}",
        "--scenario",
        "p2p",
        "--id",
        compare_id,
        *("-e", "DURATION=6s", "-e", "SCALE=0.1", "-e", "QOS=1", "-e", "CLEAN_SESSION=false"),
        env=stack.env,
    )
    out = REPORTS / f"compare-{compare_id}"
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        md = (out / "compare.md").read_text()
        disk = rows(md, "Disk write (KB/s)")
        for row in ("broker process avg", "broker process max", "host avg", "host max"):
            assert number(disk[row][0]) > 0, disk
        packets = rows(md, "Packets (per second)")
        assert packets["interface"] == ["lo"], packets
        for row in ("received avg", "sent avg"):
            assert number(packets[row][0]) > 10, packets  # p2p at SCALE 0.1: 100 msg/s at QoS 1, and their acks
        figures = json.loads((out / "results.json").read_text())["brokers"][0]["figures"]
        assert figures["broker_disk_write_avg_kbs"] > 0 and figures["host_disk_write_avg_kbs"] > 0, figures

        # The target's own report: the same figures in its mqttbs table.
        own = json.loads((REPORTS / f"{compare_id}-persist" / "results.json").read_text())
        io = own["io"]
        # Computed once: the comparison's figure is the report's, in KB/s.
        assert io["broker_disk_write_avg"] / 1024 == pytest.approx(figures["broker_disk_write_avg_kbs"]), (io, figures)
        assert io["interface"] == "lo" and io["packets_recv_avg"] > 10 and io["packets_sent_avg"] > 10, io
        assert io["why"] == {}, io["why"]
        report = (REPORTS / f"{compare_id}-persist" / "report.md").read_text()
        lines = report.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("| Actual msg rate"))
        mqttbs = lines[at : at + 3]
        assert "Broker disk write max / avg" in mqttbs[0] and "Packets received / sent per s (lo)" in mqttbs[0], mqttbs
        assert "n/a" not in mqttbs[2], mqttbs

        # The Host dashboard's disk panels: every device that wrote, bytes and IOPS.
        host = {w: q for b, w, q in dashboard_queries() if b == "host.json" and w.startswith("Disk ")}
        assert set(host) == {"Disk read / written (bytes/s)", "Disk IOPS (reads, writes per second)"}, host
        for title, q in host.items():
            answer = stack.flux(bind(q, start, f"{compare_id}-persist", "p2p"))
            written = [float(x["_value"]) for x in answer if x.get("_field", "").endswith((" written", " writes"))]
            assert written and max(written) > 0, (title, answer[:5])
    finally:
        cleanup(compare_id)


def test_without_the_processs_points_the_cells_say_why(stack, persisting, tmp_path):
    """A target without pid=: no Telegraf of this stack watched its process,
    so its disk write is n/a and the report says why; the host's figures
    and the packets are still there (this host's Telegraf)."""
    url, _ = persisting
    compare_id = f"cmp-nodisk-{time.time_ns()}"
    args = f"--native --target bare={url} --scenario p2p --id {compare_id} -e DURATION=3s -e SCALE=0.1".split()
    r = compare(*args, env=stack.env)
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        md = (REPORTS / f"compare-{compare_id}" / "compare.md").read_text()
        disk = rows(md, "Disk write (KB/s)")
        assert disk["broker process avg"] == ["n/a"] and number(disk["host avg"][0]) > 0, disk
        assert "not watched" in disk["n/a because"][0], disk
        own = json.loads((REPORTS / f"{compare_id}-bare" / "results.json").read_text())["io"]
        assert "broker_disk_write" in own["why"], own
        report = (REPORTS / f"{compare_id}-bare" / "report.md").read_text()
        assert own["why"]["broker_disk_write"] in report
    finally:
        cleanup(compare_id)


def test_the_reasons_without_influxdb():
    from mqttbench.report import io_rates

    class Run:
        run_id = "x"
        data = {"parameters": {"url": "mqtt://127.0.0.1:1883"}}

        def __getitem__(self, k):
            return {"broker": "mosquitto", "parameters": self.data["parameters"]}[k]

        def window(self):
            return 0, 1000

    figures = io_rates.figures(Run(), None)
    assert figures["broker_disk_write_avg"] is None and figures["packets_recv_avg"] is None
    assert set(figures["why"]) == {"broker_disk_write", "host_disk_write", "packets"}, figures["why"]
    assert Path(ROOT / "mqttbench/report/io_rates.py").read_text().count("\n") < 300


def test_under_compose_the_container_s_block_io_and_network(stack):
    """What Telegraf's docker input writes under compose (the broker
    container's blkio and network totals) and diskio per device, an hour ago
    under a broker tag of their own: the figures are the container's, and
    the host's disks are counted once (a partition and a volume of the disk
    are left out of the sum)."""
    import requests

    from mqttbench.report import io_rates
    from mqttbench.report.influx import Influx

    # Integers, as Telegraf's influxdb_v2 output writes its unsigned counters.
    broker, now = f"cmpz{time.time_ns() % 10**6}", (time.time_ns() // 10**9 - 3600) * 10**9
    lines = []
    for s in range(12):
        t = now + s * 10**9
        lines.append(
            f"docker_container_blkio,broker={broker},device=total io_service_bytes_recursive_write={4096 * s}i {t}"
        )
        lines.append(
            f"docker_container_net,broker={broker},network=total rx_packets={300 * s}i,tx_packets={200 * s}i {t}"
        )
        for name, per_s in (("sda", 10_000), ("sda1", 10_000), ("dm-0", 7_000)):  # sda1 and dm-0 lie on sda
            lines.append(f"diskio,broker={broker},name={name} write_bytes={per_s * s}i {t}")
    w = requests.post(
        f"{stack.influx}/api/v2/write",
        params={"org": "mqtt-bench", "bucket": "mqtt-bench", "precision": "ns"},
        headers={"Authorization": f"Token {stack.token}"},
        data="\n".join(lines),
        timeout=10,
    )
    assert w.ok, w.text

    class Run:
        run_id = "compose-like"

        def __getitem__(self, k):
            return {"broker": broker, "parameters": {"url": "mqtt://mosquitto:1883"}}[k]

        def window(self):
            return now // 10**6 + 2000, now // 10**6 + 10_000

    influx = Influx(stack.influx, stack.token, "mqtt-bench", "mqtt-bench")
    io = io_rates.figures(Run(), influx)
    assert io["why"] == {}, io["why"]
    assert io["broker_disk_write_avg"] == pytest.approx(4096) and io["host_disk_write_avg"] == pytest.approx(10_000)
    assert io["interface"] == "broker container", io
    assert io["packets_recv_avg"] == pytest.approx(300) and io["packets_sent_avg"] == pytest.approx(200), io
