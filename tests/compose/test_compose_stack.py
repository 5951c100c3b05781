"""The mosquitto profile under a real Docker engine, in a project whose name
holds the broker's (xmosquittox-...), with the stand-in images and host
networking of tests/compose/stand-ins.yaml (issue 33, 8 to 10):

- the card's two commands, typed as the README has them, name the broker
  that is up; a run names the broker whose service name resolves, refuses to
  guess between several, and BROKER given wins;
- the broker's CPU in InfluxDB is its own container's only, though every
  container's name holds "mosquitto";
- the broker's data volume is kept by down and up, `down -v` removes it, and
  no container leaves an anonymous volume (the stand-in declares the real
  image's VOLUMEs).

Under host networking a service's name resolves through extra_hosts, not
Docker's embedded DNS: an override of the k6 service's hosts stands for
"this broker's container is running" (its name resolves, the others' do
not), while the stand-in Mosquitto answers at broker:MQTT_PORT."""

import json
import os
import re
import subprocess
import time

import pytest

from conftest import PORT_OFFSET, RESULTS, ROOT, loopback_port
from docker_engine import left_behind, project_containers, stand_in_files
from host_processes import LOOPBACK, descendants, listening
from impaired_runs import cleanup
from k6_runs import BEHAVIOUR_P99_MS

PROJECT = f"xmosquittox-{PORT_OFFSET}"
ENV = {
    "COMPOSE_PROJECT_NAME": PROJECT,
    "MQTT_PORT": str(loopback_port(14883)),
    "MQTTS_PORT": str(loopback_port(14841)),
    "MTLS_PORT": str(loopback_port(14842)),
    "WS_PORT": str(loopback_port(14843)),
    "INFLUXDB_PORT": str(loopback_port(14086)),
    "TELEGRAF_K6_PORT": str(loopback_port(14187)),
    "NODE_EXPORTER_PORT": str(loopback_port(14100)),
    "GRAFANA_PORT": str(loopback_port(14030)),
    "TOXIPROXY_PORT": str(loopback_port(14474)),
    "TOXIPROXY_MQTT_PORT": str(loopback_port(14884)),
    "NOFILE_LIMIT": subprocess.run(["bash", "-c", "ulimit -Hn"], capture_output=True, text=True).stdout.strip(),
}
# Test-only: the card's `k6 run fanin.js` for seconds rather than its
# default minute of 2,000 publishers, without a flag on its command line.
SHORT = f"""services:
  k6:
    environment: {{SCALE: "0.05", DURATION: "5s", P99_MS: "{BEHAVIOUR_P99_MS}"}}
"""


def hosts(*brokers):
    """The k6 service's names as they would resolve with these brokers' containers up."""
    names = ["broker", "telegraf", "influxdb", "toxiproxy", *brokers]
    return "services:\n  k6:\n    extra_hosts: !override [" + ", ".join(f'"{n}:127.0.0.1"' for n in names) + "]\n"


@pytest.fixture(scope="module")
def stack(docker_engine, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compose-stack")
    (tmp / "short.yaml").write_text(SHORT)
    files = stand_in_files("mosquitto", tmp, ENV) + f":{tmp}/short.yaml"
    env = {**os.environ, **ENV, "COMPOSE_FILE": files, "K6_WEB_DASHBOARD": "false"}
    env.pop("BROKER", None)

    def dc(*args, extra="", check=True, timeout=600, **more):
        e = {**env, **more}
        if extra:
            (tmp / "extra.yaml").write_text(extra)
            e["COMPOSE_FILE"] = f"{files}:{tmp}/extra.yaml"
        r = subprocess.run(
            ["bash", "-c", f'. {ROOT}/scripts/lib.sh && compose "$@"', "compose", *args],
            env=e,
            text=True,
            capture_output=True,
            timeout=timeout,
        )
        assert not check or r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        return r

    dc.anonymous = set()  # anonymous volumes any container of the project had
    runs = []
    dc.runs = runs
    try:
        dc("--profile", "mosquitto", "up", "-d", "--wait")
        yield dc
    finally:
        down = dc("--profile", "mosquitto", "--profile", "k6", "down", "-v", "--remove-orphans", check=False)
        for run_id in runs:
            cleanup(run_id)
        left_behind(PROJECT, down)


def fanin(stack, **kw):
    """`docker compose run --rm k6 run fanin.js`: its output and its result."""
    r = stack("run", "--rm", "k6", "run", "fanin.js", check=False, **kw)
    m = re.search(r"mqtt-bench fanin on (\S+): \w+ +\(run (\S+)\)", r.stdout)
    assert m, (r.stdout + r.stderr)[-3000:]
    stack.runs.append(m.group(2))
    result = json.loads((RESULTS / f"raw/{m.group(2)}.json").read_text())
    return m.group(1), result


def test_the_cards_run_names_the_broker_that_is_up(stack):
    named, result = fanin(stack)
    assert named == "mosquitto" and result["broker"] == "mosquitto"


def test_a_run_names_the_broker_whose_name_resolves(stack):
    """EMQX's container up (its name resolves, Mosquitto's does not): the
    run is EMQX's, not the default Mosquitto's it was."""
    named, result = fanin(stack, extra=hosts("emqx"))
    assert named == "emqx" and result["broker"] == "emqx"


def test_with_several_brokers_up_a_run_asks_and_broker_given_wins(stack):
    r = stack("run", "--rm", "k6", "run", "fanin.js", extra=hosts("emqx", "mosquitto"), check=False)
    assert r.returncode != 0
    assert "several brokers are up (emqx mosquitto)" in r.stderr, r.stderr[-2000:]
    assert "BROKER=<name> docker compose run --rm k6 run fanin.js" in r.stderr
    assert not re.search(r"mqtt-bench fanin on", r.stdout)
    named, result = fanin(stack, extra=hosts("emqx", "mosquitto"), BROKER="nanomq")
    assert named == "nanomq" and result["broker"] == "nanomq"


def flux(stack, query):
    token = stack(
        "run", "--rm", "--no-deps", "-T", "--entrypoint", "cat", "init", "/run/secrets/mqtt-bench/influx_token"
    )
    r = subprocess.run(
        [
            "curl", "-fsS", f"http://127.0.0.1:{ENV['INFLUXDB_PORT']}/api/v2/query?org=mqtt-bench",
            "-H", "@-", "-H", "Content-Type: application/vnd.flux", "-H", "Accept: application/csv", "--data", query,
        ],
        input=f"Authorization: Token {token.stdout.strip()}\n",
        text=True,
        capture_output=True,
        check=True,
    )  # fmt: skip
    return [line.split(",") for line in r.stdout.replace("\r", "").splitlines()[1:] if line]


def test_broker_cpu_is_the_broker_containers_alone(stack):
    """Every container of the project is named xmosquittox-...: the docker
    input took all of them for the broker's."""
    query = (
        'from(bucket:"mqtt-bench") |> range(start:-15m) |> filter(fn:(r) => r._measurement == "docker_container_cpu")'
        ' |> keep(columns:["container_name"]) |> distinct(column:"container_name") |> group()'
    )
    deadline = time.time() + 40
    while not (names := {row[-1] for row in flux(stack, query)}) and time.time() < deadline:
        time.sleep(2)  # a Telegraf interval and flush
    time.sleep(6)  # one more flush: whatever else it gathers is in InfluxDB too
    names = {row[-1] for row in flux(stack, query)} - {"_value", ""}
    assert names == {f"{PROJECT}-mosquitto-1"}, names


def test_every_listener_of_the_compose_stack_is_on_loopback(stack):
    """Under the tests' host networking a container's sockets are the host's:
    each one the project's containers listen on must be on loopback too."""
    ids = project_containers(PROJECT, stopped=False)
    pids = subprocess.run(
        ["docker", "inspect", "--format", "{{.State.Pid}}", *ids], text=True, capture_output=True, check=True
    ).stdout.split()
    rows = listening(descendants({int(p) for p in pids}))
    # InfluxDB, Telegraf's k6 listener, node-exporter and the broker at least.
    assert len(rows) >= 4, rows
    beyond = [r for r in rows if r[0] not in LOOPBACK]
    assert not beyond, f"the compose stack listens beyond loopback: {beyond}"


def mounts(stack):
    """Every volume the project's containers have: (container, destination, name)."""
    ids = project_containers(PROJECT)
    out = subprocess.run(["docker", "inspect", *ids], text=True, capture_output=True, check=True).stdout
    return [
        (c["Name"], m["Destination"], m["Name"]) for c in json.loads(out) for m in c["Mounts"] if m["Type"] == "volume"
    ]


def test_down_keeps_the_data_volume_down_v_removes_it(stack):
    stack("exec", "-T", "mosquitto", "sh", "-c", "echo kept >/mosquitto/data/mqtt-bench-test")
    seen = mounts(stack)
    stack("--profile", "mosquitto", "down")
    stack("--profile", "mosquitto", "up", "-d", "--wait")
    seen += mounts(stack)
    r = stack("exec", "-T", "mosquitto", "cat", "/mosquitto/data/mqtt-bench-test", check=False)
    assert r.stdout.strip() == "kept", "the broker's data did not survive down and up: " + r.stderr
    anonymous = sorted({m for m in seen if not m[2].startswith(f"{PROJECT}_")})
    assert not anonymous, f"anonymous volumes, left behind by each down: {anonymous}"
    data = f"{PROJECT}_mosquitto-data"
    assert any(m[2] == data for m in seen), seen
    stack("--profile", "mosquitto", "down", "-v")
    left = subprocess.run(
        ["docker", "volume", "ls", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout.split()
    assert not left, f"down -v left {left}"
