"""stack.sh signals a pid only while it is still the process stack.sh
started: a pid file outliving its process (a reboot, a crash) may name an
unrelated process by the time `down` runs. These tests need no stack: they
plant pid files that point at a `sleep` the test started."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import Stack


def identity(pid):
    """What stack.sh records beside a pid: start time (field 22 of
    /proc/PID/stat) and executable, computed here independently."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    start = stat.rsplit(")", 1)[1].split()[19]
    return start, os.readlink(f"/proc/{pid}/exe")


@pytest.fixture
def sleeper():
    """An unrelated long-running process; killed at the end whatever happened."""
    procs = []

    def make():
        p = subprocess.Popen(["sleep", "300"])
        procs.append(p)
        return p

    yield make
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def plant(state, name, pid, ident=None):
    pids = Path(state) / "pids"
    pids.mkdir(parents=True, exist_ok=True)
    (pids / f"{name}.pid").write_text(f"{pid}\n")
    if ident is not None:
        (pids / f"{name}.id").write_text(f"{ident[0]} {ident[1]}\n")


def still_running(p):
    try:
        p.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return True
    return False


def test_down_leaves_a_recycled_pid_alone(tmp_path, sleeper):
    # The broker's pid file outlived its Mosquitto; the pid now belongs to another program.
    s = Stack(tmp_path / "st")
    other = sleeper()
    start, _ = identity(other.pid)
    plant(s.state, "broker", other.pid, (str(int(start) - 5000), "/usr/sbin/mosquitto"))
    r = s.run("down", check=False)
    assert r.returncode == 0, r.stderr
    assert still_running(other), "down signalled a process it did not start"
    assert f"broker: pid {other.pid}" in r.stderr and "is now another process" in r.stderr, r.stderr
    assert "/usr/bin/sleep" in r.stderr or "/bin/sleep" in r.stderr
    assert not list((s.state / "pids").iterdir()), "the stale pid file must be removed"
    assert "stopped: nothing was running" in r.stderr


def test_down_leaves_the_same_pid_with_another_start_time_alone(tmp_path, sleeper):
    # Same pid and executable, but not the same process: only the start time tells.
    s = Stack(tmp_path / "st")
    other = sleeper()
    start, exe = identity(other.pid)
    plant(s.state, "telegraf", other.pid, (str(int(start) + 1), exe))
    r = s.run("down", check=False)
    assert still_running(other), "down signalled a process started at another time"
    assert f"telegraf: pid {other.pid}" in r.stderr and "is now another process" in r.stderr, r.stderr
    assert not (s.state / "pids" / "telegraf.pid").exists()


def test_down_leaves_a_pid_without_identity_alone(tmp_path, sleeper):
    # A pid file with no record of its process (written by an older stack.sh, or by hand).
    s = Stack(tmp_path / "st")
    other = sleeper()
    plant(s.state, "influxd", other.pid)
    r = s.run("down", check=False)
    assert still_running(other)
    assert f"influxd: pid {other.pid}" in r.stderr and "has no record of the process" in r.stderr, r.stderr


def test_down_stops_the_process_its_record_names(tmp_path, sleeper):
    # The check is not "never signal": the recorded process itself is stopped.
    s = Stack(tmp_path / "st")
    ours = sleeper()
    plant(s.state, "node_exporter", ours.pid, identity(ours.pid))
    r = s.run("down", check=False)
    assert r.returncode == 0, r.stderr
    assert ours.wait(timeout=15) == -15, "down must stop (SIGTERM) the process it recorded"
    assert "stopped: node_exporter" in r.stderr


def test_down_stops_a_process_recorded_before_its_exec(tmp_path, sleeper):
    # On a busy machine start() may record the shell's executable before the
    # daemon's exec: the start time, which survives exec, is what decides.
    s = Stack(tmp_path / "st")
    ours = sleeper()
    start, _ = identity(ours.pid)
    plant(s.state, "node_exporter", ours.pid, (start, "/usr/bin/setsid"))
    r = s.run("down", check=False)
    assert r.returncode == 0, r.stderr
    assert ours.wait(timeout=15) == -15, "down must stop the process it started"


def test_status_reports_a_stale_pid_file(tmp_path, sleeper):
    s = Stack(tmp_path / "st")
    other = sleeper()
    start, exe = identity(other.pid)
    plant(s.state, "broker", other.pid, (str(int(start) + 1), exe))
    r = s.run("status", "broker", check=False)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "broker" in r.stdout and "stopped (stale pid file" in r.stdout and str(other.pid) in r.stdout
    assert still_running(other)


def test_status_refuses_an_unknown_service(tmp_path):
    r = Stack(tmp_path / "st").run("status", "mosquito", check=False)
    assert r.returncode != 0 and "unknown service 'mosquito'" in r.stderr
    assert "influxd node_exporter broker telegraf" in r.stderr
