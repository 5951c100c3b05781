"""The compose stack end to end under a real Docker engine (Debian's
dockerd): tests/compose/e2e.sh on a fresh copy of the project, with the
images built locally from the project's own builds (tests/compose/
build-images.sh) through the test-only tests/compose/stand-ins.yaml. The
script's own checks say what is proven: healthy from a fresh copy, k6 in
its container, host, container, $SYS and k6 metrics in InfluxDB, the report,
the broker conformance suite on the stack's Mosquitto (scripts/conformance.sh),
data and secrets kept across down and up, nothing running after down.
About 2.5 minutes with warm caches (148 s measured on 2 cores); the first
run on a machine adds a debootstrap of 1 to 3 minutes."""

import json
import os
import re
import subprocess

import pytest

from conftest import PORT_OFFSET, ROOT, loopback_port
from mqttbench.brokers import facts as broker_facts

# The stack's own ports and project, never the defaults a user's stack (native
# or compose) holds: compose.yaml's port variables, which tests/compose/
# stand-ins.yaml also gives each service to listen on (host networking).
E2E_ENV = {
    "MQTT_PORT": loopback_port(13883),
    "MQTTS_PORT": loopback_port(13841),
    "MTLS_PORT": loopback_port(13842),
    "WS_PORT": loopback_port(13843),
    "INFLUXDB_PORT": loopback_port(13086),
    "TELEGRAF_K6_PORT": loopback_port(13187),
    "NODE_EXPORTER_PORT": loopback_port(13100),
    "GRAFANA_PORT": loopback_port(13030),
    "COMPOSE_PROJECT_NAME": f"mqtt-bench-e2e-{PORT_OFFSET}",
}
# Every broker's own published ports too (its broker.toml [compose] ports).
OWN_PORTS = sorted({v for b in broker_facts.names() for v in broker_facts.load(b).get("compose", {}).get("ports", {})})
E2E_ENV |= {var: loopback_port(13960 + i) for i, var in enumerate(OWN_PORTS)}


def e2e(*args, timeout=1500):
    return subprocess.run(
        [str(ROOT / "tests/compose/e2e.sh"), *args],
        env=dict(os.environ, **{k: str(v) for k, v in E2E_ENV.items()}),
        text=True,
        capture_output=True,
        timeout=timeout,
    )


@pytest.mark.quiet_inside
def test_mosquitto_profile_from_a_fresh_copy_runs_fanin_and_reports(docker_engine):
    r = e2e("--broker", "mosquitto", "--stand-ins", "--conformance")
    # The script's own verdict first (its error line), then the stack's last logs.
    said = "\n".join(line for line in r.stderr.splitlines() if line.startswith(("error:", "warning:", "==> ")))
    assert r.returncode == 0, said[-4000:] + "\n...\n" + (r.stdout + r.stderr)[-3000:]
    assert "compose end to end (mosquitto): passed" in r.stderr


def test_stand_ins_listen_on_the_tests_ports_not_the_defaults():
    """compose.yaml with tests/compose/stand-ins.yaml, as the end-to-end test
    renders it: no service listens on, connects to or checks a default port
    (1883, 8086, 8186, 9100, 3000), which a user's running stack holds."""
    env = dict(
        os.environ, COMPOSE_FILE="compose.yaml:tests/compose/stand-ins.yaml", **{k: str(v) for k, v in E2E_ENV.items()}
    )
    out = subprocess.run(
        ["bash", "-c", f". {ROOT}/scripts/lib.sh; compose --profile mosquitto --profile k6 config --format json"],
        env=env,
        text=True,
        capture_output=True,
        check=True,
    ).stdout

    def strings(x):
        if isinstance(x, dict):
            for v in x.values():
                yield from strings(v)
        elif isinstance(x, list):
            for v in x:
                yield from strings(v)
        elif isinstance(x, str):
            yield x

    services = json.loads(out)["services"]
    # The one default left is the datasource's address on compose's network,
    # which the Grafana stand-in maps to INFLUXDB_PORT.
    found = [
        (name, s)
        for name, svc in services.items()
        for s in strings(svc)
        if re.search(r"(?<![0-9])(1883|8086|8186|9100|3000)(?![0-9])", s.replace("influxdb:8086=", ""))
    ]
    assert not found, found
    for var in ("MQTT_PORT", "INFLUXDB_PORT", "TELEGRAF_K6_PORT", "NODE_EXPORTER_PORT", "GRAFANA_PORT"):
        assert str(E2E_ENV[var]) in out, f"no service uses {var}={E2E_ENV[var]}"


@pytest.mark.parametrize(
    "name", [b for b in broker_facts.names() if "eula_file" in broker_facts.load(b).get("compose", {})]
)
def test_a_broker_whose_eula_is_unaccepted_is_refused_before_anything_starts(name):
    # Its broker.toml [compose] names the file; --accept-eula writes it.
    r = e2e("--broker", name, timeout=60)
    eula = broker_facts.load(name)["compose"]["eula_file"]
    assert r.returncode != 0 and "--accept-eula" in r.stderr and f"brokers/{name}/{eula}" in r.stderr, r.stderr
    assert "docker compose" not in r.stderr, r.stderr


def test_stand_ins_are_refused_for_a_broker_without_a_stand_in_image():
    without = [b for b in broker_facts.names() if not (ROOT / f"tests/compose/images/{b}.Dockerfile").exists()]
    r = e2e("--broker", without[0], "--stand-ins", timeout=60)
    assert r.returncode != 0 and "no stand-in image" in r.stderr, r.stderr
