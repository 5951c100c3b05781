"""Nothing the native stack starts listens beyond loopback: every listening
socket of its processes (and their children) is on 127.0.0.1 or ::1.
Debian's Mosquitto 2.0.11 taught why this is checked, not assumed: its
WebSocket listener, written `listener PORT 127.0.0.1`, listened on `*:PORT`."""

import pytest

from host_processes import LOOPBACK, USER, descendants, listening
from native_stacks import OTHER_NATIVE


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
