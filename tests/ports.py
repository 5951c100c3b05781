"""The port plan: every loopback port a test server listens on, as a base
that conftest.loopback_port moves by the checkout's and the worker's offset.

Why one plan: pytest-xdist runs the suite in several workers at once, each
moved by WORKER_STRIDE, so a base may serve one worker only if no other
base lies a whole number of strides away from it. tests/project/test_port_plan.py
checks that for MAX_WORKERS workers, and loopback_port refuses a base that
is not here, so the check covers every server the suite starts.

Every port also stays below the kernel's ephemeral range (32768 up, on
Debian): a client's source port may take any port there at any moment."""

# The session's native stack (conftest TEST_PORTS), with the live view.
NATIVE_STACKS = {11883, 12841, 12842, 12843, 17186, 18086, 19100, 15665}
# The other native brokers' stacks and a comparison's (tests/native_stacks.py
# SLOTS), each with its broker's own ports (an Erlang node's, metrics).
OTHER_NATIVE_STACKS = {
    *(15086, 15186, 15100, *range(15883, 15887), *range(15390, 15396)),
    *(16586, 16587, 16590, 16583, *range(16541, 16544), *range(16592, 16598)),
    *(17086, 17187, 17100, *range(17883, 17887), *range(17390, 17396)),
}
# The conformance suite's lone native broker (tests/native_broker.py).
CONFORMANCE = {16483, 16441, 16442, 16443, 16492, 16493, 16472, 16469}
# Single brokers and proxies of one test module each.
SINGLE = {
    *range(11884, 11900),
    *range(11931, 11941),
    *range(11950, 11972),
    *range(11975, 11986),
    *range(12851, 12855),
    12884,
    13474,
    13884,
    13890,
    18474,
    18476,
    18999,
}
# Compose stacks (e2e, impairment, the stand-in stack, port clashes): one
# worker runs them (the docker group), a base may serve several of them.
COMPOSE = {
    13030,
    13086,
    13100,
    13187,
    *range(13841, 13844),
    *range(13851, 13854),
    13883,
    *range(13960, 13970),
    14030,
    14086,
    14100,
    14186,
    14187,
    14474,
    *range(14841, 14844),
    *range(14883, 14887),
}
# The secrets test's stack and the user-stack snapshot's.
SECRETS = {21883, 24841, 24842, 24843, 25086, 25100, 25186, 25841, 25842, 25843, 25883, 27186, 28086, 29100}
# Spare ports for a server whose test asks for any free one (mqtt_wire.free_port).
SPARE = set(range(11800, 11830))

BASES = frozenset(NATIVE_STACKS | OTHER_NATIVE_STACKS | CONFORMANCE | SINGLE | COMPOSE | SECRETS | SPARE)

# One worker's ports from the next one's: no two bases above lie one, two
# or three strides of 817 apart (tests/project/test_port_plan.py finds another
# when a new base makes this one clash).
WORKER_STRIDE = 817
MAX_WORKERS = 4


def worker_index(worker_id):
    """pytest-xdist's worker id (gw0, gw1 ...; empty or "master" without
    workers) as a number."""
    return int(worker_id[2:]) if worker_id.startswith("gw") else 0


def worker_offset(worker_id):
    """How far one worker's ports lie from the bases."""
    index = worker_index(worker_id)
    if index >= MAX_WORKERS:
        raise ValueError(
            f"pytest-xdist worker {worker_id}: the port plan (tests/ports.py) serves at most {MAX_WORKERS} "
            f"workers; run with -n {MAX_WORKERS} or fewer"
        )
    return index * WORKER_STRIDE
