"""A broker's own message counters (the [counters] table of
brokers/<name>/broker.toml) and what a run should have moved them by, so
that k6's counts are checked against the broker's, offsets computed from
the facts rather than waved through. Used by tests/brokers/test_broker_captures.py
(the real brokers' recorded answers) and tests/conformance (a live broker)."""

import dataclasses
import re
import subprocess

from mqttbench.brokers import facts as broker_facts

# A sample line of the Prometheus text format: name, optional {labels}, value.
SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def counters(name):
    """broker.toml's [counters] of one broker: key -> series, plus the
    per-connection offsets (received_per_connection, ...)."""
    facts = broker_facts.load(name)
    if facts is None or "counters" not in facts:
        raise ValueError(f"brokers/{name}/broker.toml has no [counters] table")
    return facts["counters"]


def keys(name):
    """The counter keys a broker has: received, sent, and where it counts
    them, dropped and connects."""
    return [k for k in ("received", "sent", "dropped", "connects") if k in counters(name)]


@dataclasses.dataclass(frozen=True)
class Run:
    """What one run made a broker count: PUBLISH packets of QoS `qos` it
    took, deliveries it made, CONNECTs it accepted (the load's and the
    shared-subscription probes' own connections), and the probes' QoS 1
    messages in and out, which the load's counts leave out."""

    publishes: int
    receives: int
    connections: int
    qos: int
    probes_sent: int = 0
    probes_delivered: int = 0


def run_of(result):
    """The Run of a result file (single or merged). Each probe of a fanin
    subscriber group is a connection of its own that publishes one QoS 1
    message (k6/extension/load/probe.go): a broker counts both, k6's
    mqtt_connects and mqtt_publishes do not."""
    c = result["counts"]
    sent, delivered = probes(result)
    return Run(
        publishes=c["mqtt_publishes"],
        receives=c["mqtt_receives"],
        connections=c["mqtt_connects"] + sent,
        qos=int(result["parameters"]["qos"]),
        probes_sent=sent,
        probes_delivered=delivered,
    )


def expected(name, run):
    """By how much a Run moves each counter of the broker. A broker whose
    `received` counts only some QoS levels says which in `received_qos`."""
    c = counters(name)
    counted_qos = c.get("received_qos", [0, 1, 2])
    received = (run.publishes if run.qos in counted_qos else 0) + (run.probes_sent if 1 in counted_qos else 0)
    base = {
        "received": received,
        "sent": run.receives + run.probes_delivered,
        "dropped": 0,
        "connects": run.connections,
    }
    return {k: base[k] + c.get(f"{k}_per_connection", 0) * run.connections for k in keys(name)}


def probes(result):
    """Shared-subscription probes of a run (its result file, single or
    merged): (PUBLISH packets sent, deliveries the broker made) beyond the
    load. The fanin scenario's groups check that shared subscriptions work
    before the load starts; p2p has none."""
    sent = sum((n or {}).get("probes", 0) for n in (result.get("connect") or {}).values())
    delivered = sum(d["probes_received"] for d in result["delivery"].values())
    return sent, sent + delivered


def prometheus_sums(text):
    """Series name -> value summed over its label sets (VerneMQ's counters
    come as one series per MQTT version), from a Prometheus exposition."""
    sums = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            sums[m.group(1)] = sums.get(m.group(1), 0.0) + float(m.group(3))
    return sums


def from_prometheus(name, text):
    """The broker's counters (key -> value) in one exposition of its metrics."""
    c, sums = counters(name), prometheus_sums(text)
    missing = [c[k] for k in keys(name) if c[k] not in sums]
    if missing:
        raise ValueError(f"{name}: the exposition has no {', '.join(missing)}")
    return {k: sums[c[k]] for k in keys(name)}


def from_sys(name, host, port, timeout=10):
    """Mosquitto's counters from its retained $SYS topics (as last
    published: wait a sys_interval after the traffic). Returns (counters,
    messages): the $SYS messages this read made the broker send, which its
    `sent` counter counts too."""
    c = counters(name)
    topics = [c[k] for k in keys(name)]
    args = ["mosquitto_sub", "-h", host, "-p", str(port), "-v", "-C", str(len(topics)), "-W", str(timeout)]
    for t in topics:
        args += ["-t", t]
    out = subprocess.run(args, text=True, capture_output=True, timeout=timeout + 5, check=True).stdout
    values = dict(line.split(" ", 1) for line in out.splitlines())
    return {k: float(values[c[k]]) for k in keys(name)}, len(topics)
