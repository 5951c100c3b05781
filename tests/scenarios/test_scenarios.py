"""Every scenario of k6/scenarios runs at a reduced SCALE against
real Mosquitto with its thresholds passing, and writes its result file."""

import json
import os
import subprocess
import time
from itertools import pairwise

import pytest

from conftest import ROOT, TEST_PORTS, loopback_port
from k6_runs import BEHAVIOUR_P99_MS, REDUCED, SCENARIOS, run_k6, run_scenario, scenario_env
from loopback_brokers import mosquitto
from mqttbench.k6.command import run_argv


def test_every_scenario_is_covered():
    assert {p.stem for p in SCENARIOS.glob("*.js")} == set(REDUCED)


@pytest.fixture(scope="module")
def broker_b(stack, tmp_path_factory):
    """A second real Mosquitto, bridged both ways to the stack's broker."""
    port = loopback_port(11884)
    text = (ROOT / "brokers/mosquitto/bridge.conf").read_text()
    text = text.replace("listener 1884 127.0.0.1", f"listener {port} 127.0.0.1")
    text = text.replace("address 127.0.0.1:1883", f"address 127.0.0.1:{TEST_PORTS['MQTT_PORT']}")
    with mosquitto(tmp_path_factory.mktemp("bridge") / "bridge.conf", port, text) as url:
        time.sleep(1.5)  # the bridge connects to A
        yield url


@pytest.mark.parametrize("name", sorted(REDUCED))
def test_scenario_passes_its_thresholds_at_reduced_scale(stack, k6_bin, tmp_path, name, request):
    extra = {}
    if name.startswith("bridge"):
        extra["MQTT_URL_B"] = request.getfixturevalue("broker_b")
    p, r = run_scenario(k6_bin, stack, tmp_path, name, **extra)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert r and r["passed"], r and r["thresholds"]
    c = r["counts"]
    assert c["mqtt_connect_failures"] == 0 and c["mqtt_connects"] > 0
    if name.startswith("conn"):
        assert c["mqtt_publishes"] == 0
        return
    assert c["mqtt_publishes"] > 0 and c["mqtt_lost"] == 0 and c["mqtt_duplicates"] == 0
    # Each flow's messages arrive fanout times (a composite's background
    # flow publishes nothing).
    d = r["delivery"]
    assert c["mqtt_receives"] == sum(d[f["name"]]["sent"] * f.get("fanout", 0) for f in r["flows"])
    assert r["latency_ms"]["pub_to_sub"]["count"] == c["mqtt_receives"]
    assert r["steps"] and all(abs(s["achieved_rate"] / s["target_rate"] - 1) <= 0.05 for s in r["steps"])


@pytest.mark.parametrize("qos", ["0", "2"])
def test_qos_family_at_qos_0_and_2(stack, k6_bin, tmp_path, qos):
    p, r = run_scenario(k6_bin, stack, tmp_path, "qos-1K-1K-128B", QOS=qos)
    assert p.returncode == 0, p.stderr[-3000:]
    assert r["parameters"]["qos"] == int(qos) and r["counts"]["mqtt_receives"] == r["counts"]["mqtt_publishes"]


def test_result_file_is_self_describing(stack, k6_bin, tmp_path):
    p, r = run_scenario(k6_bin, stack, tmp_path, "p2p-1K-1K-1K-1K")
    assert p.returncode == 0
    for key in (
        "run_id",
        "scenario",
        "broker",
        "started_at",
        "ended_at",
        "parameters",
        "versions",
        "host",
        "thresholds",
        "counts",
        "latency_ms",
        "steps",
        "timeline",
    ):
        assert r.get(key) is not None, key
    assert r["parameters"]["qos"] == 1 and r["parameters"]["payload"] == 16 and r["parameters"]["keepalive"] == 300
    assert r["versions"]["k6"] == "v1.8.1" and r["versions"]["extension"]
    assert r["host"]["cpus"] >= 1 and "net.core.somaxconn" in r["host"]["sysctls"]
    assert {"p50", "p90", "p95", "p99", "avg", "max"} <= set(r["latency_ms"]["pub_to_sub"])
    assert len(r["timeline"]) >= 3
    # Subscribers' and publishers' connection results both, by role and flow.
    assert set(r["connect"]) == {"sub_p2p", "pub_p2p"} and r["connect"]["sub_p2p"]["connected"] == 50


def test_progress_line_shows_the_planned_length(stack, k6_bin, tmp_path):
    # 40 clients at 200/s (0.2 s) + 3 s of load (tests/extension/test_progress.py: the bar).
    env = dict(os.environ, K6_NO_USAGE_REPORT="true", **scenario_env(stack, tmp_path, "p2p"))
    args = run_argv(SCENARIOS / "p2p.js", k6=k6_bin, extra=["--no-color"])
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "looping VUs for 4s" in p.stdout and "/4s" in p.stdout, p.stdout[-2000:]


def test_step_load_records_step_boundaries(stack, k6_bin, tmp_path):
    p, r = run_scenario(k6_bin, stack, tmp_path, "p2p", STEPS="100:2s,300:2s,600:2s")
    assert p.returncode == 0, p.stderr[-3000:]
    steps = r["steps"]
    assert [s["rate"] for s in steps] == [100, 300, 600]
    for a, b in pairwise(steps):
        assert a["end"] <= b["start"]
    assert all(s["end"] - s["start"] >= 2000 for s in steps)


@pytest.mark.slow
def test_generator_that_cannot_keep_up_fails_loudly(stack, k6_bin, tmp_path):
    # 3 M msg/s is far beyond one generator process here.
    p, r = run_scenario(k6_bin, stack, tmp_path, "p2p", RATE="3000000", DURATION="2s", QOS="0")
    assert p.returncode == 99, "the achieved-rate threshold must fail the run"
    assert "could not keep up" in p.stderr
    assert r["thresholds"]["mqtt_rate_shortfalls count==0"] is False
    assert r["diagnosis"]["cause"] == "generator", r["diagnosis"]


@pytest.mark.parametrize(
    "var,value,message",
    [
        ("QOS", "3", 'QOS="3" is invalid: expected one of 0, 1, 2'),
        ("RATE", "-5", 'RATE="-5" is invalid'),
        ("MQTT_VERSION", "4.2", 'MQTT_VERSION="4.2" is invalid'),
        ("MQTT_URL", "http://127.0.0.1:1883", 'MQTT_URL="http://127.0.0.1:1883" is invalid'),
        ("DURATION", "soon", 'DURATION="soon" is invalid'),
        ("SCALE", "0", 'SCALE="0" is invalid'),
        ("STEPS", "100", 'STEPS="100" is invalid'),
        ("RATE", "1e9", "<= 10000000 (the extension's limit per process"),
        ("PAYLOAD", "268435455", 'PAYLOAD="268435455" is invalid: expected a whole number >= 16 and <= 268434431'),
        ("PAYLOAD", "8", 'PAYLOAD="8" is invalid: expected a whole number >= 16'),
        ("KEEPALIVE", "70000", 'KEEPALIVE="70000" is invalid: expected a whole number >= 0 and <= 65535'),
        ("TOPIC_PREFIX", "run/+/", 'TOPIC_PREFIX="run/+/" is invalid'),
        ("TOPIC_PREFIX", "$SYS/", 'TOPIC_PREFIX="$SYS/" is invalid'),
        ("CONNECT_RATE", "0.001", "CONNECT_RATE=0.001 is too low"),
        ("MQTT_VERSION", "6", 'MQTT_VERSION="6" is invalid'),
        ("MQTT_VERSION", "3", 'MQTT_VERSION="3" is invalid: expected one of 3.1.1, 5, 5.0'),
        ("QOS", "-1", 'QOS="-1" is invalid: expected one of 0, 1, 2'),
        ("QOS", "1.5", 'QOS="1.5" is invalid: expected one of 0, 1, 2'),
        ("PAYLOAD", "abc", 'PAYLOAD="abc" is invalid: expected a whole number >= 16'),
        ("RATE", "0", "RATE=0 is invalid: expected messages per second in total, > 0"),
        ("RATE", "fast", 'RATE="fast" is invalid: expected a number >= 0'),
        ("DURATION", "0s", 'DURATION="0s" is invalid: expected a positive duration'),
        ("DURATION", "-5s", 'DURATION="-5s" is invalid: expected a positive duration'),
        ("KEEPALIVE", "-1", 'KEEPALIVE="-1" is invalid: expected a whole number >= 0'),
        ("KEEPALIVE", "1.5", 'KEEPALIVE="1.5" is invalid: expected a whole number >= 0'),
        ("CONNECT_RATE", "0", 'CONNECT_RATE="0" is invalid: expected a number > 0'),
        ("P99_MS", "0", 'P99_MS="0" is invalid: expected a number > 0'),
        ("SCALE", "-1", 'SCALE="-1" is invalid: expected a number > 0'),
        ("STEPS", "abc:10s", 'STEPS="abc:10s" is invalid: expected a list of rate:duration'),
        ("STEPS", "100:soon", 'STEPS="100:soon" is invalid: expected a list of rate:duration'),
        ("TOPIC_PREFIX", "a#", 'TOPIC_PREFIX="a#" is invalid'),
        ("MQTT_URL", "mqtt://127.0.0.1:99999", 'MQTT_URL="mqtt://127.0.0.1:99999" is invalid'),
        ("ACCEPT_QOS_DOWNGRADE", "yes", 'ACCEPT_QOS_DOWNGRADE="yes" is invalid: expected one of true, false'),
        ("PUBLISHERS", "-1", 'PUBLISHERS="-1" is invalid: expected a whole number >= 0'),
        ("SUBSCRIBERS", "1.5", 'SUBSCRIBERS="1.5" is invalid: expected a whole number >= 0'),
        (
            "SEGMENT",
            "0/2",
            "SEGMENT is no longer a parameter: k6 splits the load itself: run every instance with --execution-segment",
        ),
        ("LOCAL_ADDRESS", "127.0.0.9-127.0.0.2", 'LOCAL_ADDRESS="127.0.0.9-127.0.0.2" is invalid'),
        ("MAX_INSTANCES", "0", 'MAX_INSTANCES="0" is invalid: expected a whole number >= 1'),
        ("PUBLISHERS", "10", "PUBLISHERS (10) and SUBSCRIBERS (100) must be equal for point-to-point"),
    ],
)
def test_invalid_parameter_stops_before_any_connection(k6_bin, tmp_path, connection_counter, var, value, message):
    env = {
        "MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}",
        "DURATION": "2s",
        "RESULTS_DIR": str(tmp_path),
        var: value,
    }
    p, _ = run_k6(k6_bin, SCENARIOS / "p2p.js", env=env)
    connection_counter.close()
    assert p.returncode != 0
    assert message in p.stderr.replace('\\"', '"'), p.stderr[-2000:]
    assert connection_counter.accepted == []


def test_bad_input_table_covers_at_least_30_inputs():
    # Bad input is where new users meet the tool: keep the table broad.
    params = test_invalid_parameter_stops_before_any_connection.pytestmark[0].args[1]
    assert len(params) >= 30


def test_explicit_client_counts_are_not_scaled(stack, k6_bin, tmp_path):
    # SCALE shrinks the scenario's own numbers; what the user typed is kept.
    p, r = run_scenario(k6_bin, stack, tmp_path, "p2p", SCALE="0.1", PUBLISHERS="4", SUBSCRIBERS="4", RATE="40")
    assert p.returncode == 0, p.stderr[-3000:]
    assert r["parameters"]["publishers"] == 4 and r["parameters"]["subscribers"] == 4
    assert r["counts"]["mqtt_connects"] == 8


def test_invalid_extension_option_in_an_iteration_aborts_the_test(k6_bin, tmp_path, connection_counter):
    # Without try/catch: k6 would only log a plain exception and exit 0.
    script = tmp_path / "bad_option.js"
    script.write_text(
        "import mqtt from 'k6/x/mqtt';\n"
        "export default async function () {\n"
        "  const pubs = new mqtt.PublisherGroup({ url: __ENV.MQTT_URL, topic: 'x/{i}', qos: 7 });\n"
        "  await pubs.connect();\n"
        "}\n"
    )
    p, _ = run_k6(k6_bin, script, env={"MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}"})
    connection_counter.close()
    assert p.returncode == 108, (p.returncode, p.stderr[-2000:])
    assert '"qos" must be between 0 and 2' in p.stderr.replace('\\"', '"'), p.stderr[-2000:]
    assert connection_counter.accepted == []


def test_a_finished_runs_result_file_is_never_overwritten(stack, k6_bin, tmp_path, connection_counter):
    p, first = run_scenario(k6_bin, stack, tmp_path, "p2p", RUN_ID="same-id", SCALE="0.02", DURATION="1s")
    assert p.returncode == 0, p.stderr[-3000:]
    before = (tmp_path / "same-id.json").read_bytes()
    again = dict(RUN_ID="same-id", MQTT_URL=f"mqtt://127.0.0.1:{connection_counter.port}")
    p, _ = run_scenario(k6_bin, stack, tmp_path, "p2p", **again)
    connection_counter.close()
    assert p.returncode != 0
    assert "RUN_ID=same-id" in p.stderr and "exists already" in p.stderr, p.stderr[-2000:]
    assert connection_counter.accepted == []
    assert (tmp_path / "same-id.json").read_bytes() == before


def test_generators_started_together_write_separate_result_files(stack, k6_bin, tmp_path):
    # No RUN_ID: each process makes its own, unique even within one second.
    env = dict(os.environ, K6_NO_USAGE_REPORT="true", MQTT_URL=stack.mqtt_url, RESULTS_DIR=str(tmp_path))
    # Two generators at once on a busy host: their latency is not what this checks.
    env.update(SCALE="0.2", DURATION="3s", P99_MS=str(BEHAVIOUR_P99_MS))
    args = run_argv(SCENARIOS / "p2p.js", k6=k6_bin, quiet=True)
    procs = [
        subprocess.Popen(
            args, env=dict(env, TOPIC_PREFIX=f"gen{i}/"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        for i in range(2)
    ]
    for proc in procs:
        assert proc.wait(120) == 0, proc.stderr.read()[-2000:]
    ids = {json.loads(f.read_text())["run_id"] for f in tmp_path.glob("*.json")}
    assert len(ids) == 2, ids


def test_topic_prefix_keeps_concurrent_runs_apart(stack, k6_bin, tmp_path):
    p, r = run_scenario(k6_bin, stack, tmp_path, "sharedsub-1K-5-1K-1K", TOPIC_PREFIX="iso/")
    assert p.returncode == 0, p.stderr[-2000:]
    f = r["flows"][0]
    assert f["pubTopic"] == "iso/test/{i}" and f["subTopics"] == ["$share/benchmark/iso/test/#"]
    assert r["counts"]["mqtt_receives"] == r["counts"]["mqtt_publishes"] > 0


@pytest.fixture(scope="module")
def qos1_broker(stack, tmp_path_factory):
    """A real Mosquitto that grants at most QoS 1 (`max_qos 1`)."""
    port = loopback_port(11885)
    text = f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_qos 1\n"
    with mosquitto(tmp_path_factory.mktemp("maxqos") / "mosquitto.conf", port, text) as url:
        yield url


def test_qos_downgrade_by_the_broker_stops_the_run_before_load(stack, k6_bin, tmp_path, qos1_broker):
    p, r = run_scenario(k6_bin, stack, tmp_path, "p2p", MQTT_URL=qos1_broker, QOS="2")
    err = p.stderr.replace('\\"', '"')
    assert p.returncode != 0, err[-3000:]
    assert "granted QoS 1" in err and "QoS 2 was asked" in err and "ACCEPT_QOS_DOWNGRADE" in err, err[-3000:]
    assert r and not r["passed"] and r["counts"]["mqtt_publishes"] == 0


def test_no_clients_at_all_is_refused_before_any_connection(k6_bin, tmp_path, connection_counter):
    env = {
        "MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}",
        "RESULTS_DIR": str(tmp_path),
        "PUBLISHERS": "0",
        "SUBSCRIBERS": "0",
    }
    p, _ = run_k6(k6_bin, SCENARIOS / "p2p.js", env=env)
    connection_counter.close()
    assert p.returncode != 0
    assert "PUBLISHERS=0 and SUBSCRIBERS=0 leave no client to run" in p.stderr, p.stderr[-2000:]
    assert connection_counter.accepted == []


@pytest.fixture(scope="module")
def swallowing_broker(stack, tmp_path_factory):
    """A real Mosquitto whose ACL lets clients subscribe but not publish: at
    QoS 0 (3.1.1) it drops every message without a word."""
    port = loopback_port(11886)
    d = tmp_path_factory.mktemp("acl")
    (d / "acl").write_text("topic read #\n")
    # `user root`: run as root, Mosquitto would drop to its own user, which
    # cannot read the ACL file in pytest's private temporary directory.
    text = f"user root\nlistener {port} 127.0.0.1\nallow_anonymous true\nacl_file {d / 'acl'}\n"
    with mosquitto(d / "mosquitto.conf", port, text) as url:
        yield url


def test_a_run_that_delivered_nothing_fails_with_exit_99(stack, k6_bin, tmp_path, swallowing_broker):
    p, r = run_scenario(k6_bin, stack, tmp_path, "p2p", MQTT_URL=swallowing_broker, QOS="0")
    assert p.returncode == 99, (p.stdout + p.stderr)[-3000:]
    assert r["counts"]["mqtt_publishes"] > 0 and r["counts"]["mqtt_receives"] == 0
    assert r["thresholds"]["mqtt_nothing_received count==0"] is False


def test_a_near_miss_of_a_parameter_is_named_and_mqtt_5_0_is_accepted(stack, k6_bin, tmp_path):
    p, r = run_scenario(k6_bin, stack, tmp_path, "p2p", QOSS="0", MQTT_VERSION="5.0")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "QOSS is not a parameter: did you mean QOS?" in p.stderr
    assert r["parameters"]["version"] == "5" and r["parameters"]["qos"] == 1


@pytest.mark.parametrize(
    "scenario,env,warned",
    [
        ("p2p", {"PAYLOADS": "16,abc"}, ["PAYLOADS=16,abc is not used by this scenario: only the payload sweep"]),
        ("p2p", {"MQTT_URL_B": "mqtt://127.0.0.1:1884"}, ["MQTT_URL_B=mqtt://127.0.0.1:1884 is not used"]),
        (
            "p2p",
            {"STEPS": "100:2s", "RATE": "10", "DURATION": "5s"},
            ["RATE=10 is not used", "DURATION=5s is not used"],
        ),
        ("conn", {"PUBLISHERS": "3", "RATE": "50"}, ["PUBLISHERS=3 is not used", "RATE=50 is not used"]),
        ("payload-1K-1K-20K", {"PAYLOAD": "64"}, ["PAYLOAD=64 is not used by this scenario: the payload sweep"]),
        ("p2p", {"PAYLOAD": "64", "RATE": "10"}, []),
    ],
)
def test_a_parameter_the_scenario_does_not_use_is_named(k6_bin, scenario, env, warned):
    """Set, but not read by this scenario: a warning names it and why, as
    for a near miss; one the scenario reads gets none. k6 inspect reads the
    options as k6 run does, before any connection."""
    args = [k6_bin, "inspect"] + [a for k, v in env.items() for a in ("-e", f"{k}={v}")] + [f"{scenario}.js"]
    p = subprocess.run(args, cwd=SCENARIOS, text=True, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for w in warned:
        assert f"{scenario}: {w}" in p.stderr, p.stderr
    assert p.stderr.count("is not used by this scenario") == len(warned), p.stderr
