"""The native stack and the compose stack on one port: whichever starts
second stops before it binds anything, naming the port, what holds it and
the one command that frees it (scripts/stack.sh's port_free, through
lib.sh's port_holder; compose.yaml's port-check service)."""

import os
import shutil
import socket
import subprocess
import sys

import pytest
import yaml

from conftest import PORT_OFFSET, ROOT, TEST_PORTS, Stack, free_port, loopback_port
from docker_engine import left_behind
from mqttbench import settings

PROJECT = f"mqtt-bench-portcheck-{PORT_OFFSET}"


def test_stack_up_names_the_program_holding_a_port_and_how_to_free_it(tmp_path):
    port = loopback_port(11968)
    with socket.socket() as held:
        held.bind(("127.0.0.1", port))
        held.listen()
        s = Stack(tmp_path / "state")
        # Ports of its own: the session's test stack may hold TEST_PORTS.
        for i, var in enumerate(("INFLUXDB_PORT", "TELEGRAF_K6_PORT", "MQTT_PORT")):
            s.env[var] = str(loopback_port(11975 + i))
        s.env["NODE_EXPORTER_PORT"] = str(port)
        r = s.run("up", check=False)
    assert r.returncode != 0
    me = os.getpid()
    assert f"port {port} (NODE_EXPORTER_PORT) is held by python" in r.stderr, r.stderr
    assert f"(pid {me}: " in r.stderr and f"kill {me}" in r.stderr, r.stderr
    assert not s.secrets.exists(), "nothing was set up before the check"


def test_the_holder_command_names_the_holder_and_warns_of_nothing():
    """`python3 -P -m mqttbench.stack.ports holder PORT`, as tests/compose/
    e2e.sh runs it: its answer, and nothing on stderr (the package once
    imported the module before running it, and Python warned of that)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", free_port()))
        held.listen()
        port = held.getsockname()[1]
        r = subprocess.run([sys.executable, "-P", "-m", "mqttbench.stack.ports", "holder", str(port)],
                           env=dict(os.environ, PYTHONPATH=str(ROOT)), text=True, capture_output=True)  # fmt: skip
    assert r.returncode == 0 and f"(pid {os.getpid()}: " in r.stdout, r.stdout + r.stderr
    assert r.stderr == ""


@pytest.fixture
def compose_clone(tmp_path, docker_engine):
    """A clone holding what compose reads for the InfluxDB service (.env, the
    init scripts) on the stand-in images, as project PROJECT; yields a
    function running its compose."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "scripts/init", clone / "scripts/init")
    shutil.copy(ROOT / ".env", clone / ".env")
    env = dict(
        os.environ,
        COMPOSE_PROJECT_NAME=PROJECT,
        COMPOSE_FILE=f"{ROOT}/compose.yaml:{ROOT}/tests/compose/stand-ins.yaml",
        **TEST_PORTS,
    )

    def dc(*args, **ports):
        return subprocess.run(
            [str(settings.compose_bin()), "--project-directory", str(clone), *args],
            env=dict(env, **ports),
            text=True,
            capture_output=True,
            timeout=300,
        )

    yield clone, dc
    left_behind(PROJECT, dc("down", "-v", "--remove-orphans"))


def test_compose_up_stops_when_the_native_stack_holds_a_port(stack, compose_clone):
    """This clone's native stack runs on the ports compose is given: `up`
    fails before InfluxDB starts, and port-check's log names each port, the
    native service and scripts/stack.sh down."""
    clone, dc = compose_clone
    # The clone's .state: the records of the running native stack.
    shutil.copytree(stack.state / "pids", clone / ".state/pids")
    shutil.copy(stack.state / "stack.env", clone / ".state/stack.env")
    r = dc("up", "-d", "--wait", "influxdb")
    assert r.returncode != 0 and 'service "port-check" didn\'t complete successfully' in r.stderr, r.stderr
    log = dc("logs", "--no-log-prefix", "port-check").stdout
    pids = stack.pids()
    for var, service in (
        ("INFLUXDB_PORT", "influxd"),
        ("MQTT_PORT", "broker"),
        ("NODE_EXPORTER_PORT", "node_exporter"),
    ):
        assert (
            f"port {TEST_PORTS[var]} ({var}) is held by this clone's native stack: {service} (pid {pids[service]},"
            in log
        ), log
    assert "Free it with: scripts/stack.sh down" in log, log
    assert not dc("ps", "-q", "influxdb").stdout.strip(), "InfluxDB was started"


def test_stack_up_names_the_compose_project_holding_a_port(tmp_path, compose_clone):
    """The compose stack's InfluxDB (here on the host's network, as the
    stand-ins run) holds the port the native stack is given."""
    clone, dc = compose_clone
    port = str(loopback_port(11969))  # not the session stack's
    r = dc("up", "-d", "--wait", "influxdb", INFLUXDB_PORT=port)
    assert r.returncode == 0, r.stderr
    s = Stack(tmp_path / "state")
    s.env["INFLUXDB_PORT"] = port
    r = s.run("up", check=False)
    assert r.returncode != 0
    assert f"port {port} (INFLUXDB_PORT) is held by the compose project {PROJECT} (container " in r.stderr, r.stderr
    assert f"docker compose -p {PROJECT} down" in r.stderr, r.stderr


def test_compose_up_names_an_open_files_limit_above_the_engines_and_its_fix(compose_clone):
    """Quick start on a host whose hard limit is below NOFILE_LIMIT's default:
    init, which every broker waits for, names the variable and the value
    that fits, where Docker would fail with "error setting rlimit type 7"."""
    _, dc = compose_clone
    hard = subprocess.run(["bash", "-c", "ulimit -Hn"], capture_output=True, text=True).stdout.strip()
    if hard == "unlimited":
        pytest.skip("no open-files hard limit here")
    # The init service's own check, in its container on this engine (without
    # InfluxDB, which it waits for before it generates anything).
    check = ["run", "--rm", "--no-deps", "--entrypoint", "bash", "init", "/mqtt-bench/init/nofile.sh"]
    r = dc(*check, NOFILE_LIMIT=str(int(hard) + 1))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"NOFILE_LIMIT={int(hard) + 1} is above" in r.stderr and f"set NOFILE_LIMIT={hard}" in r.stderr, r.stderr
    assert dc(*check, NOFILE_LIMIT=hard).returncode == 0
    # Every broker waits for init: none starts before the check.
    services = yaml.safe_load(dc("--profile", "mosquitto", "config", "--format", "yaml").stdout)["services"]
    assert services["mosquitto"]["depends_on"]["init"]["condition"] == "service_completed_successfully"
