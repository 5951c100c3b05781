"""Ordering is a verdict: a broker that delivers a topic's QoS 1 messages out
of order (the test-only mochi-mqtt program k6/extension/internal/testbroker
with -reorder-every, standing in for NanoMQ 0.23.10, which did so at 20,000
msg/s) is named in the summary, the result's ordering and diagnosis, and the
report, at QoS 0 as at 1 ([MQTT-4.6.0-6]); STRICT_ORDER=true fails the run on
it; shared subscriptions are not judged; a run in order says nothing."""

import subprocess
import sys

import pytest

from conftest import ROOT, loopback_port
from k6_runs import SCENARIOS, run_k6, run_p2p
from loopback_brokers import mochi_broker, mosquitto
from mqttbench.brokers import facts as broker_facts

# p2p at QoS 1, at a rate this machine sustains beside the broker.
LOAD = {"QOS": "1", "PUBLISHERS": "10", "SUBSCRIBERS": "10", "RATE": "5000", "DURATION": "4s", "P99_MS": "1000"}


@pytest.fixture(scope="module")
def reordering_broker(tmp_path_factory):
    with mochi_broker(tmp_path_factory.mktemp("testbroker"), loopback_port(11965), "-reorder-every", "50") as url:
        yield url


def run(k6_bin, tmp_path, url, **env):
    return run_p2p(k6_bin, tmp_path, url, **{**LOAD, **env})


def report(tmp_path, run_id):
    rep = subprocess.run(
        [
            sys.executable,
            "-m",
            "mqttbench.report",
            run_id,
            "--results",
            str(tmp_path),
            "--out",
            str(tmp_path),
            "--no-influx",
        ],
        cwd=ROOT,
        text=True,
        capture_output=True,
    )
    assert rep.returncode == 0, rep.stderr
    return (tmp_path / run_id / "report.md").read_text()


def test_a_broker_that_delivers_out_of_order_is_named_and_strict_order_fails_the_run(
    k6_bin, tmp_path, reordering_broker
):
    p, r = run(k6_bin, tmp_path, reordering_broker)
    c = r["counts"]
    assert c["mqtt_lost"] == 0 and c["mqtt_receives"] == c["mqtt_publishes"] > 0, c
    n = c["mqtt_out_of_order"]
    assert n > 0, c
    o = r["ordering"]
    assert o["judged"] and o["out_of_order"] == n and o["share"] == round(n / c["mqtt_receives"], 6), o
    # Named, but not failing: the run did not ask for strict order.
    assert p.returncode == 0 and r["passed"], (p.stdout + p.stderr)[-3000:]
    said = f"{n} of {c['mqtt_receives']} deliveries"
    assert "section 4.6" in o["text"] and said in o["text"], o
    assert f"ordering      The broker violated message ordering: {said}" in p.stdout, p.stdout
    assert said in r["diagnosis"]["text"] and r["diagnosis"]["cause"] == "none", r["diagnosis"]
    assert said in report(tmp_path, r["run_id"])
    # Asked for, strict order fails the run with the ordering as its cause.
    p, r = run(k6_bin, tmp_path, reordering_broker, STRICT_ORDER="true")
    assert p.returncode == 99 and not r["passed"], (p.stdout + p.stderr)[-3000:]
    assert r["thresholds"]["mqtt_out_of_order count==0"] is False
    d = r["diagnosis"]
    assert d["cause"] == "broker_ordering" and "STRICT_ORDER=true" in d["text"], d


def test_order_is_judged_at_qos_0_too_and_strict_order_is_accepted_there(k6_bin, tmp_path, reordering_broker):
    # [MQTT-4.6.0-6] orders a client's messages of a topic at every QoS: a
    # QoS 0 message may be lost, never overtaken (NanoMQ 0.23.10 delivered
    # 5 of 1,200 out of order, and the run had called it nothing).
    p, r = run(k6_bin, tmp_path, reordering_broker, QOS="0")
    n, o = r["counts"]["mqtt_out_of_order"], r["ordering"]
    assert n > 0 and o["judged"] and o["out_of_order"] == n, o
    assert "[MQTT-4.6.0-6]" in o["text"] and "non-shared QoS 0 subscriptions" in o["text"], o
    assert "[MQTT-4.6.0-6]" in p.stdout and "[MQTT-4.6.0-6]" in r["diagnosis"]["text"], r["diagnosis"]
    p, r = run(k6_bin, tmp_path, reordering_broker, QOS="0", STRICT_ORDER="true")
    assert p.returncode == 99 and not r["passed"], (p.stdout + p.stderr)[-3000:]
    d = r["diagnosis"]
    assert d["cause"] == "broker_ordering" and "[MQTT-4.6.0-6]" in d["text"], d


def test_strict_order_is_refused_where_shared_subscriptions_leave_order_unjudged(k6_bin, tmp_path, connection_counter):
    # MQTT 5.0 section 4.8.2: no order across a share group, so the verdict
    # judges none there, and strict order could never fail the run.
    env = {"MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}", "SCALE": "0.05", "STRICT_ORDER": "true"}
    p, _ = run_k6(k6_bin, SCENARIOS / "fanin.js", env=env | {"RESULTS_DIR": str(tmp_path)})
    out = p.stdout + p.stderr
    assert p.returncode != 0 and "STRICT_ORDER=true is invalid" in out and "section 4.8.2" in out, out[-3000:]
    assert connection_counter.accepted == [], "it connected"


def test_a_run_delivered_in_order_says_nothing_about_ordering(k6_bin, tmp_path):
    port = loopback_port(11966)
    with mosquitto(tmp_path / "m.conf", port, f"listener {port} 127.0.0.1\nallow_anonymous true\n") as url:
        p, r = run(k6_bin, tmp_path, url, STRICT_ORDER="true", RATE="2000")
    assert p.returncode == 0 and r["passed"], (p.stdout + p.stderr)[-3000:]
    assert r["counts"]["mqtt_out_of_order"] == 0 and r["ordering"]["judged"] and "text" not in r["ordering"]
    assert "ordering" not in p.stdout and "order" not in r["diagnosis"]["text"], r["diagnosis"]


def deviations(name):
    return broker_facts.load(name).get("deviations", [])


# A broker whose broker.toml lists the ordering deviation (NanoMQ 0.23.10:
# brokers/nanomq/broker.toml [[deviations]]), and one that lists none.
LISTED = [n for n in broker_facts.names() if any(d["verdict"] == "ordering" for d in deviations(n))]
UNLISTED = [n for n in broker_facts.names() if not deviations(n)]


def test_a_listed_deviation_is_named_as_the_brokers_own_in_the_summary_and_the_report(
    k6_bin, tmp_path, reordering_broker
):
    """The run is told the broker's listed deviations as the stacks tell it
    (BROKER_DEVIATIONS, mqttbench/brokers/facts.py): the violation stays the
    run's verdict, marked known, and the summary and the report name it."""
    assert LISTED and UNLISTED, "a broker with the ordering deviation and one without"
    env = {"QOS": "0", "BROKER": LISTED[0], **broker_facts.deviations_env(LISTED[0])}
    p, r = run(k6_bin, tmp_path, reordering_broker, **env)
    assert r["ordering"]["text"] and r["ordering"]["known"], r["ordering"]
    assert broker_facts.known_deviation(LISTED[0], r)["name"] == "ordering"
    assert f"known         {LISTED[0]} lists this among its known deviations" in p.stdout, p.stdout[-3000:]
    assert f"**A known deviation of {LISTED[0]}** (`ordering`, " in report(tmp_path, r["run_id"])
    # The same violation, from a broker that lists none: the verdict alone.
    env = {"QOS": "0", "BROKER": UNLISTED[0], **broker_facts.deviations_env(UNLISTED[0])}
    p, r = run(k6_bin, tmp_path, reordering_broker, **env)
    assert (
        r["ordering"]["text"] and "known" not in r["ordering"] and broker_facts.known_deviation(UNLISTED[0], r) is None
    )
    assert "  known " not in p.stdout and "A known deviation" not in report(tmp_path, r["run_id"])


@pytest.mark.parametrize("listed", [True, False], ids=["listed", "unlisted"])
def test_the_conformance_suite_reports_a_listed_deviation_and_fails_on_an_unlisted_one(reordering_broker, listed):
    broker = (LISTED if listed else UNLISTED)[0]
    args = ["--broker", broker, "--mqtt-url", reordering_broker, "--no-metrics"]
    # Its p2p delivery check at QoS 0 alone (start-up log, counters and auth
    # are the real broker's).
    args += ["--", "-k", "test_delivers_exactly and p2p-0", "-W", "always::UserWarning"]
    r = subprocess.run([str(ROOT / "scripts/conformance.sh"), *args], text=True, capture_output=True, timeout=300)
    out = r.stdout + r.stderr
    if listed:
        assert r.returncode == 0 and "1 failed" not in out, out[-3000:]
        assert f"{broker}: its known deviation 'ordering':" in out and "[MQTT-4.6.0-6]" in out, out[-3000:]
    else:
        assert r.returncode == 1 and "1 failed" in out and "'out_of_order': " in out, out[-3000:]
