"""How the suite runs in parallel (pytest-xdist, scripts/test.sh): the lanes
a test belongs to, which worker runs what, in which order, and which tests
get the host to themselves. A pytest plugin of conftest.py."""

import os
import tempfile
from pathlib import Path

import pytest

import host_lock

# The lanes (scripts/test.sh --fast leaves the first three out).
MARKERS = {
    "compose": "needs the Docker engine (the docker_engine fixture); one worker runs them all, in turn",
    "native_brokers": "runs HiveMQ CE or RabbitMQ natively; one worker holds their stacks (the native_stack fixture)",
    "slow": "takes more than about 25 s alone; such modules start first",
    "quiet": "measures latency against a bound: runs while no other test runs",
    "quiet_inside": "runs a script that holds the host alone for its measured step only",
    "stops_stack": "stops a shared native stack: runs after every other test of its group",
}


def pytest_configure(config):
    for name, what in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


# The shared setups that make a group: one worker holds each.
GROUPS = {"docker_engine": "compose", "native_stack": "native_brokers"}


def lane(item):
    """The group of the shared setup a test uses, or None."""
    return next((group for fixture, group in GROUPS.items() if fixture in item.fixturenames), None)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Lanes and workers from what a test uses: a test of the Docker engine is
    `compose`, one of a HiveMQ CE or RabbitMQ stack `native_brokers`. Under
    pytest-xdist (--dist loadgroup) each lane is one group, which one worker
    runs in turn (one engine, one stack per broker, never two compose stacks
    at once), and every other module is a group of its own, so its module
    fixtures (a recorded run, a broker) are made once. The longest groups
    start first (the lanes, then modules with a slow test), so that none is
    left to run alone at the end; tests that stop a shared stack go last."""
    for item in items:
        if lane(item):
            item.add_marker(getattr(pytest.mark, lane(item)))
        item.add_marker(pytest.mark.xdist_group(lane(item) or item.module.__name__))
    slow_modules = {item.module.__name__ for item in items if item.get_closest_marker("slow")}

    def order(item):
        first = {"compose": 0, "native_brokers": 1}.get(lane(item), 2 if item.module.__name__ in slow_modules else 3)
        return first, item.get_closest_marker("stops_stack") is not None

    items.sort(key=order)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Setup, call and teardown of a test under the host lock (tests/
    host_lock.py): a quiet test's latency is the broker's and the
    generator's, not the other workers'. A test marked quiet_inside holds
    nothing and hands the lock to the script it runs, which takes the host
    alone for its measured step (MQTTBENCH_QUIET_LOCKS). Only xdist's
    workers take it: a pytest that a test starts (scripts/conformance.sh)
    runs inside its test's hold."""
    worker = getattr(item.config, "workerinput", None)
    if worker is None:
        yield
        return
    locks = Path(tempfile.gettempdir()) / f"mqttbench-tests-{worker['testrunuid']}"
    if item.get_closest_marker("quiet_inside"):
        os.environ["MQTTBENCH_QUIET_LOCKS"] = str(locks)
        try:
            yield
        finally:
            del os.environ["MQTTBENCH_QUIET_LOCKS"]
        return
    with host_lock.hold(locks, item.get_closest_marker("quiet") is not None):
        yield
