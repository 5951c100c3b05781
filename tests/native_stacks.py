"""The native stack with each broker other than the session's Mosquitto
(HiveMQ CE, RabbitMQ: each folder of brokers/ with a [native] table), one
stack per broker for the whole run, on ports of its own so that they run
side by side: a JVM or an Erlang node is started once, and every test that
needs it (its own module's, the loopback check, the conformance suite)
inspects that one. A pytest plugin of conftest.py."""

import pytest

from conftest import Stack, loopback_port
from mqttbench.brokers import facts as broker_facts

# The brokers, each with its slot of ports below (by this order).
OTHER_NATIVE = [n for n in broker_facts.names() if n != "mosquitto" and "native" in broker_facts.load(n)]

# A slot: the stack's ports and the first of the broker's own ([native]
# ports, an Erlang node's or a metrics endpoint, in their order), all in the
# port plan (tests/ports.py).
SLOTS = [
    {
        "INFLUXDB_PORT": 15086,
        "TELEGRAF_K6_PORT": 15186,
        "NODE_EXPORTER_PORT": 15100,
        "MQTT_PORT": 15883,
        "MQTTS_PORT": 15884,
        "MTLS_PORT": 15885,
        "WS_PORT": 15886,
        "own": 15390,
    },
    {
        "INFLUXDB_PORT": 16586,
        "TELEGRAF_K6_PORT": 16587,
        "NODE_EXPORTER_PORT": 16590,
        "MQTT_PORT": 16583,
        "MQTTS_PORT": 16541,
        "MTLS_PORT": 16542,
        "WS_PORT": 16543,
        "own": 16592,
    },
    # A comparison's own stack, switched from broker to broker by compare.sh
    # (tests/compare/test_compare_native_brokers.py), beside the two above.
    {
        "INFLUXDB_PORT": 17086,
        "TELEGRAF_K6_PORT": 17187,
        "NODE_EXPORTER_PORT": 17100,
        "MQTT_PORT": 17883,
        "MQTTS_PORT": 17884,
        "MTLS_PORT": 17885,
        "WS_PORT": 17886,
        "own": 17390,
    },
]
COMPARISON_SLOT = len(SLOTS) - 1


def slot_env(slot, own_vars):
    """The environment of a stack in SLOTS[slot]: its ports, and own_vars
    (variables of [native] ports) from the slot's first own port on."""
    ports = {k: str(loopback_port(v)) for k, v in SLOTS[slot].items() if k != "own"}
    ports |= {var: str(loopback_port(SLOTS[slot]["own"] + i)) for i, var in enumerate(own_vars)}
    return ports


def native_ports(broker):
    """The ports of BROKER's stack (its slot, its [native] ports)."""
    assert OTHER_NATIVE.index(broker) < COMPARISON_SLOT, f"{broker}: add a slot to tests/native_stacks.py SLOTS"
    return slot_env(OTHER_NATIVE.index(broker), broker_facts.load(broker)["native"].get("ports", {}))


@pytest.fixture(scope="session")
def native_stack(tmp_path_factory):
    """native_stack(broker): that broker's stack, up; started on first use
    and again only if a test stopped it (its `down` test runs last)."""
    stacks = {}

    def up(broker):
        s = stacks.get(broker)
        if s is not None:
            if s.run("status", check=False).returncode == 0:
                return s
            s.run("down", check=False)  # stopped by a test, or a service of it died
        ports = native_ports(broker)
        s = stacks[broker] = Stack(tmp_path_factory.mktemp(f"{broker}-stack"), ports)
        r = s.run("up", "--broker", broker, check=False)
        if r.returncode:
            s.run("down", check=False)  # what started before the failure
        log = s.state / "logs/broker.log"
        assert r.returncode == 0, r.stderr[-3000:] + (log.read_text()[-3000:] if log.exists() else "")
        return s

    yield up
    for s in stacks.values():
        s.run("down", check=False)
