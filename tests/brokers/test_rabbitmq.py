"""RabbitMQ on the native stack, for real: `scripts/stack.sh up --broker
rabbitmq` starts Debian's rabbitmq-server (3.10.8) as the caller's own
process from brokers/rabbitmq/broker.toml [native], with Telegraf, InfluxDB
and node_exporter; p2p at QoS 1 through it is exact; its Broker internals
panels answer; nothing listens beyond loopback, epmd included; `down` stops
the node and its epmd. On ports of its own: the session's Mosquitto stack
(conftest `stack`) may run at the same time."""

import shutil
import socket
import subprocess
import time

import pytest

from conftest import ROOT, wait_until
from dashboard_answers import bind, broker_panel_queries
from host_processes import LOOPBACK, descendants, listening
from k6_runs import run_k6, run_scenario_to_influx
from mqttbench.brokers import facts as broker_facts

pytestmark = pytest.mark.skipif(
    not shutil.which("rabbitmq-server") and not shutil.which("/usr/lib/rabbitmq/bin/rabbitmq-server"),
    reason="Debian's rabbitmq-server is not installed: scripts/setup/debian.sh",
)


def port_open(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def rabbit(native_stack):
    """The run's one RabbitMQ stack (tests/native_stacks.py)."""
    return native_stack("rabbitmq")


@pytest.fixture(scope="module")
def p2p_qos1(rabbit, k6_bin, tmp_path_factory):
    """One p2p run at QoS 1 through it, its metrics sent to InfluxDB."""
    run_id = f"rabbitmq-p2p-{int(time.time() * 1000)}"
    start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 5))
    results = tmp_path_factory.mktemp("results")
    p, _ = run_scenario_to_influx(
        rabbit, k6_bin, "p2p", run_id, results, QOS="1", SCALE="0.1", DURATION="5s", BROKER="rabbitmq"
    )
    return p, run_id, start, results


def test_stack_up_starts_rabbitmq_as_the_users_own_node(rabbit):
    r = rabbit.run("status")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rabbitmq" in r.stdout
    pid = rabbit.pids()["broker"]
    # The node itself (rabbitmq-server execs it), so procstat measures the broker.
    assert open(f"/proc/{pid}/comm").read().strip() == "beam.smp"
    assert port_open(int(rabbit.env["EPMD_PORT"])), "epmd at EPMD_PORT"


def test_p2p_qos1_through_rabbitmq_is_exact(p2p_qos1):
    import json

    p, run_id, _, results = p2p_qos1
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    c = json.loads((results / f"{run_id}.json").read_text())["counts"]
    assert c["mqtt_publishes"] == c["mqtt_receives"] > 0, c
    assert (c["mqtt_lost"], c["mqtt_duplicates"], c["mqtt_out_of_order"]) == (0, 0, 0), c


@pytest.mark.parametrize(
    "scenario, qos, lacks", [("p2p", "2", "rabbitmq lacks QoS 2"), ("fanin", "1", "rabbitmq lacks MQTT 5")]
)
def test_what_it_lacks_is_refused_before_any_connection(rabbit, k6_bin, tmp_path, scenario, qos, lacks):
    # What scripts/bench.sh --native exports: the broker's [native.capabilities]
    # (Debian's 3.10.8 speaks no MQTT 5), the table the refusal names.
    caps = broker_facts.capabilities_env("rabbitmq", native=True)
    assert caps == {"BROKER_MQTT": "3.1.1", "BROKER_QOS": "0,1", "BROKER_CAPABILITIES": "native.capabilities"}
    env = {"MQTT_URL": rabbit.mqtt_url, "BROKER": "rabbitmq", **caps}
    p, _ = run_k6(k6_bin, ROOT / f"k6/scenarios/{scenario}.js", env=dict(env, QOS=qos, RESULTS_DIR=str(tmp_path)))
    out = p.stdout + p.stderr
    assert p.returncode != 0 and lacks in out and "broker.toml [native.capabilities]" in out, out[-3000:]
    # Refused while reading the parameters: no connection, no result file.
    assert not list(tmp_path.glob("*.json")), out[-3000:]


def test_broker_internals_answer_with_rabbitmqs_series(rabbit, p2p_qos1):
    _, run_id, start, _ = p2p_qos1
    series = broker_facts.load("rabbitmq")["metrics"]["series"]

    def empty():
        """The panels whose query has no row yet (Telegraf writes every second)."""
        return [
            title
            for title, query in broker_panel_queries("rabbitmq")
            if not rabbit.flux(bind(query, start, run_id, "p2p", broker="rabbitmq"))
        ]

    wait_until(lambda: not empty(), timeout=30)
    assert not empty(), f"Broker internals panels with no data for rabbitmq: {empty()}"
    # Every series of its broker.toml arrives in InfluxDB as a field.
    fields = {
        r["_value"]
        for r in rabbit.flux(
            'import "influxdata/influxdb/schema"\nschema.fieldKeys(bucket: "mqtt-bench", '
            'predicate: (r) => r._measurement == "prometheus" and r.broker == "rabbitmq", start: -10m)'
        )
    }
    assert set(series.values()) <= fields, set(series.values()) - fields


def test_restart_broker_binds_the_ports_up_recorded(rabbit):
    # restart takes the settings `up` recorded, not the caller's environment:
    # the node's own ports ([native] ports) among them.
    own = ("METRICS_PORT", "DIST_PORT", "EPMD_PORT")
    env = {k: v for k, v in rabbit.env.items() if k not in own}
    r = subprocess.run([str(ROOT / "scripts/stack.sh"), "restart", "broker"], env=env, text=True, capture_output=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert all(port_open(int(rabbit.env[k])) for k in own), r.stderr[-3000:]


def test_every_listener_is_on_loopback_epmd_included(rabbit):
    pids = descendants(set(rabbit.pids().values()))
    rows = listening(pids)
    # MQTT, TLS, mutual TLS, WebSocket, Prometheus, the distribution.
    assert len(rows) >= 6, rows
    epmd = [r for r in listening(set(range(1, 4_194_304))) if r[1] == rabbit.env["EPMD_PORT"]]
    assert epmd, "epmd is not listening at EPMD_PORT"
    beyond = [r for r in rows + epmd if r[0] not in LOOPBACK]
    assert not beyond, f"rabbitmq listens beyond loopback: {beyond}"


def node_eval(node, expression):
    """What the node answers to rabbitmqctl eval, run with the node's own
    environment (read from /proc): its name, cookie and ERL_AFLAGS."""
    env = dict(
        line.split("=", 1) for line in open(f"/proc/{node}/environ").read().split("\0") if "=" in line
    )  # fmt: skip
    r = subprocess.run(["/usr/lib/rabbitmq/bin/rabbitmqctl", "eval", expression],
                       env=env, text=True, capture_output=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


# What rabbit_nodes_common:ensure_epmd() spawns, run in the node (the same
# open_port of the same erl, with the node's environment), only kept alive
# for 4 s: the real starter halts at once, and a busy host's samples missed
# it (CI).
EPMD_STARTER_KEPT_ALIVE = (
    "Exe = rabbit_runtime:get_erl_path(), "
    'spawn(fun() -> P = open_port({spawn_executable, Exe}, [{args, ["-boot", "no_dot_erlang", '
    '"-sname", "mqttbench-epmd-probe", "-noinput", "-eval", "timer:sleep(4000), halt()."]}, exit_status]), '
    "receive {P, {exit_status, _}} -> ok end end), ok."
)


def test_the_nodes_one_off_epmd_starter_listens_on_loopback_only(rabbit):
    """Once a minute (rabbit_epmd_monitor) the node starts a one-off Erlang
    VM, epmd-starter-N, to keep epmd alive (rabbit_nodes_common:ensure_epmd):
    a distributed node of its own for a moment, listening at a port of the
    kernel's choosing: 0.0.0.0 without ERL_AFLAGS. Here the node starts
    one as that function does, kept alive long enough to be seen."""
    node = rabbit.pids()["broker"]
    node_eval(node, EPMD_STARTER_KEPT_ALIVE)
    rows = []
    assert wait_until(lambda: rows.extend(listening(descendants({node}) - {node})) or rows, timeout=15), (
        "the node's one-off Erlang VM never listened"
    )
    beyond = [row for row in rows if row[0] not in LOOPBACK]
    assert not beyond, f"the node's one-off Erlang VM listens beyond loopback: {beyond}"
    # Gone again, so that no other test meets it.
    assert wait_until(lambda: not listening(descendants({node}) - {node}), timeout=15)


# What the node does as it boots: start the syslog application, whose
# logger opens its UDP socket at once (syslog_logger:open_device_impl), and
# stop it again; the socket's address, asked of the node.
SYSLOG_STARTED_AGAIN = (
    "{ok, _} = application:ensure_all_started(syslog), "
    "Logger = whereis(syslog_logger), "
    "Names = [inet:sockname(P) || P <- erlang:ports(), "
    'erlang:port_info(P, name) == {name, "udp_inet"}, erlang:port_info(P, connected) == {connected, Logger}], '
    "ok = application:stop(syslog), Names."
)


def test_the_nodes_syslog_socket_is_on_loopback(rabbit):
    """RabbitMQ starts the syslog application as it boots, even with syslog
    logging off, and its logger opens a UDP socket: on 0.0.0.0 at a port of
    the kernel's choosing unless told (seen in CI by the listener checks:
    beam.smp on 0.0.0.0:56829; upstream rabbitmq-server#10466)."""
    names = node_eval(rabbit.pids()["broker"], SYSLOG_STARTED_AGAIN)
    assert names.startswith("[{ok,{{"), names
    assert names.count("{ok,{{127,0,0,1},") == names.count("{ok,"), names


@pytest.mark.stops_stack
def test_down_stops_the_node_and_its_epmd(rabbit, p2p_qos1):
    r = rabbit.run("down")
    assert r.returncode == 0, r.stderr
    assert wait_until(lambda: not port_open(int(rabbit.env["EPMD_PORT"])), timeout=10), "epmd outlived down"
    for var in ("MQTT_PORT", "METRICS_PORT", "DIST_PORT"):
        assert not port_open(int(rabbit.env[var])), var
