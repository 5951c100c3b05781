"""Persistent sessions end to end: the real k6 build against a real
Mosquitto with persistence, restarted in the middle of a run."""

import json
import signal
import time
from pathlib import Path

import pytest

from broker_restart import k6_through_a_restart
from conftest import ROOT, loopback_port
from k6_runs import run_k6

P2P = ROOT / "k6/scenarios/p2p.js"


@pytest.mark.parametrize(
    "session",
    [{"CLEAN_SESSION": "false"}, {"MQTT_VERSION": "5", "SESSION_EXPIRY": "300"}],
    ids=["3.1.1-clean-session-false", "5-session-expiry"],
)
def test_a_broker_restart_with_persistence_loses_no_qos1_message(k6_bin, tmp_path, session):
    port = loopback_port(11890)
    conf = tmp_path / "mosquitto.conf"
    # `user root`: Mosquitto would drop to its own user, which cannot write
    # its database into pytest's private temporary directory.
    conf.write_text(
        f"user root\nlistener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
        f"persistence_location {tmp_path}/\nmax_queued_messages 100000\nmax_inflight_messages 1000\n"
    )
    run_id = f"test-restart-{int(time.time() * 1000)}"
    env = dict(
        MQTT_URL=f"mqtt://127.0.0.1:{port}",
        RESULTS_DIR=str(tmp_path),
        RUN_ID=run_id,
        QOS="1",
        PUBLISHERS="5",
        SUBSCRIBERS="5",
        RATE="200",
        DURATION="12s",
        **session,
    )
    # The restart comes while messages flow, 2 s after the first message;
    # SIGTERM: Mosquitto saves its database on the way down.
    out, err = k6_through_a_restart(k6_bin, P2P, env, conf, port, after_s=2, down_s=2, signal=signal.SIGTERM)
    files = list(Path(tmp_path).glob(f"{run_id}.json"))
    assert files, err[-3000:]
    r = json.loads(files[0].read_text())
    c, d = r["counts"], r["delivery"]["p2p"]
    # The restart shows: every connection went down and came back.
    assert c["mqtt_disconnects"] >= 10 and c["mqtt_reconnects"] >= 10, c
    open_per_second = [row["connections"] for row in r["timeline"]]
    assert min(open_per_second) < 10 and max(open_per_second) == 10, open_per_second
    # Nothing lost: every message sent arrived; a re-send the broker had
    # already taken may arrive twice (QoS 1 allows it), counted as such.
    assert c["mqtt_lost"] == 0 and d["lost"] == 0, (c, d)
    assert d["unique"] == c["mqtt_publishes"], (c, d)
    assert c["mqtt_receives"] == d["unique"] + c["mqtt_duplicates"], (c, d)
    # Messages due while the broker was down were not sent: publish
    # failures, not losses; together with those sent they are the plan.
    assert c["mqtt_publishes"] + c["mqtt_publish_failures"] == 200 * 12, c
    assert c["mqtt_publish_failures"] > 0, c
    assert r["thresholds"]["mqtt_lost count==0"] is True
    assert r["parameters"]["clean_session"] == (session.get("CLEAN_SESSION", "true") == "true")


@pytest.mark.parametrize(
    "env,message",
    [
        ({"SESSION_EXPIRY": "300"}, "SESSION_EXPIRY=300 is invalid with MQTT_VERSION=3.1.1"),
        (
            {"MQTT_VERSION": "5", "CLEAN_SESSION": "false"},
            "CLEAN_SESSION=false keeps nothing under MQTT 5 without SESSION_EXPIRY",
        ),
        ({"CLEAN_SESSION": "no"}, 'CLEAN_SESSION="no" is invalid: expected one of true, false'),
        ({"MQTT_VERSION": "5", "SESSION_EXPIRY": "-1"}, 'SESSION_EXPIRY="-1" is invalid: expected a whole number >= 0'),
    ],
)
def test_session_parameters_are_checked_before_any_connection(k6_bin, tmp_path, connection_counter, env, message):
    p, _ = run_k6(
        k6_bin,
        P2P,
        env={
            "MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}",
            "DURATION": "2s",
            "RESULTS_DIR": str(tmp_path),
            **env,
        },
    )
    connection_counter.close()
    assert p.returncode != 0
    assert message in p.stderr.replace('\\"', '"'), p.stderr[-2000:]
    assert connection_counter.accepted == []
