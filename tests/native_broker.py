"""A broker as the native stack runs it (its brokers/<name>/broker.toml
[native] table, through mqttbench/brokers/native.py), alone, for the
conformance suite: no InfluxDB or Telegraf around it."""

import contextlib
import os
import socket
import subprocess

from conftest import ROOT, loopback_port, wait_until
from mqttbench.brokers import native as broker_native

# A native broker of the conformance suite (native_broker): ports of its own,
# away from TEST_PORTS and the stacks other tests start.
NATIVE_BROKER_PORTS = {
    "MQTT_PORT": 16483,
    "MQTTS_PORT": 16441,
    "MTLS_PORT": 16442,
    "WS_PORT": 16443,
    "METRICS_PORT": 16492,
    "HIVEMQ_METRICS_PORT": 16493,
    "DIST_PORT": 16472,
    "EPMD_PORT": 16469,
}


@contextlib.contextmanager
def native_broker(name, tmp):
    """The broker NAME as the native stack runs it (its broker.toml [native]
    table, through mqttbench/brokers/native.py), alone: no InfluxDB or Telegraf.
    Yields (MQTT port, log path, metrics URL or None); stops it and runs its
    stop commands (an Erlang node's epmd) on the way out."""
    # Every port it opens moved: its [native] ports too (a default such as
    # HiveMQ's 9399 is a user's stack's).
    missing = set(broker_native.native(name).get("ports", {})) - set(NATIVE_BROKER_PORTS)
    assert not missing, f"{name}'s [native] ports {sorted(missing)}: add them to NATIVE_BROKER_PORTS"
    env = dict(os.environ, **{k: str(loopback_port(v)) for k, v in NATIVE_BROKER_PORTS.items()})
    # Its readiness checks would pass against another broker left on these ports.
    for var in NATIVE_BROKER_PORTS:
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", int(env[var]))) != 0, f"port {env[var]} ({var}) is in use"
    subprocess.run(["sh", str(ROOT / "scripts/init/tls.sh"), str(tmp / "tls")], check=True, capture_output=True)
    plan = broker_native.planned(name, tmp, env)
    log = tmp / f"{name}.log"
    with log.open("w") as out:
        # With scripts/lib.sh's environment, as stack.sh starts it (the cache,
        # the pinned versions a command may name: HiveMQ's classpath).
        with_lib = ["bash", "-c", f'. "{ROOT}/scripts/lib.sh" && exec "$@"', "native", *plan["command"]]
        proc = subprocess.Popen(with_lib, env=dict(env, **plan["env"]), stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL, cwd=tmp)  # fmt: skip
    try:
        for check in plan["ready"]:

            def ready(check=check):
                assert proc.poll() is None, log.read_text()[-3000:]
                return subprocess.run(check, capture_output=True, timeout=10).returncode == 0

            assert wait_until(ready, timeout=plan["ready_seconds"]), (
                f"{name} not ready: {check}\n" + log.read_text()[-3000:]
            )
        yield int(env["MQTT_PORT"]), log, plan["metrics_url"] or None
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        for c in plan["stop"]:
            subprocess.run(c, capture_output=True, check=False)
