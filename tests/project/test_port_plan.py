"""The port plan (tests/ports.py) for four pytest-xdist workers: no two
workers share a port, none lies in the kernel's ephemeral range, and a
server cannot take a port the plan does not list."""

import pytest

import ports
from conftest import EPHEMERAL_PORTS, loopback_port


def plan(workers):
    """Each worker's ports, by worker id."""
    return {f"gw{i}": {b + ports.worker_offset(f"gw{i}") for b in ports.BASES} for i in range(workers)}


def test_four_workers_never_share_a_port_and_stay_below_the_ephemeral_range():
    taken = plan(ports.MAX_WORKERS)
    low, _ = EPHEMERAL_PORTS
    seen = {}
    for worker, ps in taken.items():
        for p in ps:
            assert p not in seen, f"port {p} is {seen.get(p)}'s and {worker}'s"
            seen[p] = worker
        inside = sorted(p for p in ps if p >= low)
        assert not inside, f"{worker}'s ports {inside} lie in the ephemeral range from {low}"


def test_a_fifth_worker_is_refused_naming_the_limit():
    with pytest.raises(ValueError, match=r"at most 4 workers"):
        ports.worker_offset("gw4")


def test_a_port_outside_the_plan_is_refused():
    with pytest.raises(ValueError, match=r"tests/ports\.py"):
        loopback_port(12000)
