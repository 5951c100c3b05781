"""scripts/compare.sh --target NAME=URL,pid=N (or ,process=NAME): a broker
started by hand on this host gets its CPU and RSS in the comparison, as a
broker the stack starts does, from Telegraf's procstat (the stack's own
telegraf/native/procstat.conf) on that process."""

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from compare_runs import REPORTS, cleanup, compare, table
from conftest import loopback_port, wait_until
from loopback_brokers import listening


@pytest.fixture
def hand_started(tmp_path):
    """Two Mosquittos started by hand, as a user would: one under Debian's
    binary (found by its pid), one under a copy named mqttbench-tgt-<pid>
    (found by that process name)."""
    exe = tmp_path / f"mqb-{time.time_ns() % 100000}"  # a process name (comm) has at most 15 characters
    shutil.copy(shutil.which("mosquitto"), exe)
    ports = {"bypid": loopback_port(11934), "byname": loopback_port(11935)}
    procs = {}
    for name, port in ports.items():
        assert not listening(port), f"port {port} is taken"
        conf = tmp_path / f"{name}.conf"
        conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        binary = "mosquitto" if name == "bypid" else str(exe)
        procs[name] = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for port in ports.values():
            assert wait_until(lambda p=port: listening(p), timeout=10)
        yield {n: f"mqtt://127.0.0.1:{p}" for n, p in ports.items()}, procs, exe.name
    finally:
        for p in procs.values():
            p.terminate()
            p.wait(timeout=10)


def test_a_target_with_its_process_has_its_cpu_and_rss(stack, hand_started):
    urls, procs, exe_name = hand_started
    compare_id = f"cmp-proc-{time.time_ns()}"
    r = compare(
        "--native",
        "--target",
        f"bypid={urls['bypid']},pid={procs['bypid'].pid}",
        "--target",
        f"byname={urls['byname']},process={exe_name}",
        "--scenario",
        "p2p",
        "--id",
        compare_id,
        "-e",
        "DURATION=4s",
        "-e",
        "SCALE=0.1",
        env=stack.env,
    )
    out = REPORTS / f"compare-{compare_id}"
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        md = (out / "compare.md").read_text()
        cpu = {row[0]: row[1:] for row in table(md, "CPU (%)")[1:]}
        memory = {row[0]: row[1:] for row in table(md, "Memory (MB)")[1:]}
        for row in ("broker process avg", "broker process max"):
            assert all(v != "n/a" and float(v) >= 0 for v in cpu[row]), cpu
        assert all(v != "n/a" and float(v) > 0.5 for v in memory["broker RSS max"]), memory
        # The points are the targets' processes', under their own tags:
        # procstat read each one's pid file, which names its pid.
        for name in ("bypid", "byname"):
            rows = stack.flux(
                'from(bucket: "mqtt-bench") |> range(start: -10m) |> filter(fn: (r) => r._measurement == "procstat"'
                f' and r.broker == "{name}" and r._field == "memory_rss") |> group(columns: ["pidfile"]) |> last()'
            )
            assert [Path(x["pidfile"]).read_text().strip() for x in rows] == [str(procs[name].pid)], rows
        results = json.loads((out / "results.json").read_text())
        assert {b["name"]: b["pid"] for b in results["brokers"]} == {n: procs[n].pid for n in procs}
        assert f"its process (pid {procs['bypid'].pid}) was watched" in md
        for name in procs:
            assert not host_missing(compare_id, name)
    finally:
        cleanup(compare_id)


def host_missing(compare_id, name):
    """What a target's own report (reports/<compare id>-<name>/) says is missing of this host's CPU and memory."""
    own = json.loads((REPORTS / f"{compare_id}-{name}" / "results.json").read_text())
    return [m for m in own["missing"] if m.startswith("host ")]


def test_a_target_named_like_the_stacks_broker_keeps_its_process(stack, hand_started):
    """A target named mosquitto, as the native stack's broker is tagged: its
    process's CPU and RSS are still its own, neither n/a nor mixed with the
    stack broker's points, in the comparison and in its own report."""
    urls, procs, _ = hand_started
    compare_id = f"cmp-same-{time.time_ns()}"
    target = f"mosquitto={urls['bypid']},pid={procs['bypid'].pid}"
    args = f"--native --target {target} --scenario p2p --id {compare_id} -e DURATION=4s -e SCALE=0.1".split()
    r = compare(*args, env=stack.env)
    out = REPORTS / f"compare-{compare_id}"
    try:
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        md = (out / "compare.md").read_text()
        cpu = {row[0]: row[1:] for row in table(md, "CPU (%)")[1:]}
        memory = {row[0]: row[1:] for row in table(md, "Memory (MB)")[1:]}
        assert all(v != "n/a" for v in cpu["broker process avg"] + memory["broker RSS max"]), (cpu, memory)
        # Its own process's RSS: one of the points read from its pid file
        # (1 s windows of 1 s points), not a mean with the stack broker's.
        rows = stack.flux(
            'from(bucket: "mqtt-bench") |> range(start: -10m) |> filter(fn: (r) => r._measurement == "procstat"'
            f' and r.pidfile == "{out / "logs/mosquitto.pid"}" and r._field == "memory_rss")'
        )
        own_rss = {float(x["_value"]) for x in rows}
        figures = json.loads((out / "results.json").read_text())["brokers"][0]["figures"]
        assert figures["broker_rss_max_mb"] * 2**20 in own_rss, (figures, own_rss)
        own = json.loads((REPORTS / f"{compare_id}-mosquitto" / "results.json").read_text())
        assert own["mqttbs"]["broker_rss_max"] in own_rss, (own["mqttbs"], own_rss)
        assert not host_missing(compare_id, "mosquitto")
    finally:
        cleanup(compare_id)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("a=mqtt://10.0.0.5:1883,pid=1", ["not on loopback"]),
        ("a=mqtt://127.0.0.1:1883,pid=999999999", ["pid=999999999 is no running process"]),
        ("a=mqtt://127.0.0.1:1883,process=no-such-process-here", ["no process is named 'no-such-process-here'"]),
        ("a=mqtt://127.0.0.1:1883,cpu=1", ["pid=N or process=NAME"]),
    ],
)
def test_a_bad_process_is_refused_before_anything_runs(spec, words):
    r = compare("--target", spec)
    assert r.returncode == 2, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def test_a_process_name_several_processes_have_is_refused(tmp_path):
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        r = compare("--target", "a=mqtt://127.0.0.1:1883,process=sleep")
    finally:
        for s in sleepers:
            s.kill()
    assert r.returncode == 2 and "processes are named 'sleep'" in r.stderr and "pid=N" in r.stderr, r.stderr
    assert str(sleepers[0].pid) in r.stderr
