"""Nothing the native stack starts listens beyond loopback: every listening
socket of its processes (and their children) is on 127.0.0.1 or ::1.
Debian's Mosquitto 2.0.11 taught why this is checked, not assumed: its
WebSocket listener, written `listener PORT 127.0.0.1`, listened on `*:PORT`."""

import re
import subprocess
from pathlib import Path

import pytest

from native_stacks import OTHER_NATIVE

LOOPBACK = {"127.0.0.1", "::1", "[::1]", "[::ffff:127.0.0.1]"}
USER = re.compile(r"pid=(\d+)")


def descendants(pids):
    """The pids and every process below them, from /proc."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        parent[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(pids), set(pids)
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - found
        found |= frontier
    return found


def listening(pids):
    """(address, port, process) of every TCP and UDP socket the pids listen on."""
    out = subprocess.run(["ss", "-Htulnp"], text=True, capture_output=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        cols = line.split()
        owners = {int(p) for p in USER.findall(line)}
        if owners & pids:
            addr, port = cols[4].rsplit(":", 1)
            rows.append((addr.split("%")[0], port, cols[-1]))
    return rows


def test_every_listener_of_the_native_stack_is_on_loopback(stack):
    pids = descendants(set(stack.pids().values()))
    rows = listening(pids)
    # The broker's four listeners at least, so that an empty `ss` cannot pass.
    assert len(rows) >= 4, f"found only {rows} for the stack's processes {sorted(pids)}"
    beyond = [r for r in rows if r[0] not in LOOPBACK]
    assert not beyond, f"the native stack listens beyond loopback: {beyond}"


@pytest.mark.parametrize("broker", OTHER_NATIVE)
def test_every_listener_of_each_native_broker_is_on_loopback(broker, native_stack):
    # The run's one stack of that broker (tests/native_stacks.py), inspected.
    s = native_stack(broker)
    rows = listening(descendants(set(s.pids().values())))
    broker_pid = s.pids()["broker"]
    assert len([r for r in rows if int(USER.search(r[2])[1]) in descendants({broker_pid})]) >= 4, rows
    beyond = [r for r in rows if r[0] not in LOOPBACK]
    assert not beyond, f"the native stack with {broker} listens beyond loopback: {beyond}"
