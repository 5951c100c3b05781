"""TLS and mutual TLS end to end: p2p at QoS 1 over mqtts:// against the
native stack's Mosquitto (its 8883-style and mutual-TLS listeners, with the
certificates scripts/stack.sh generated) delivers exactly and names the
transport, TLS version and cipher suite, with the TLS handshake timed apart
from CONNECT; a wrong CA stops the run before load, naming TLS_CA."""

import json
import subprocess
import time

from conftest import ROOT, TEST_PORTS, run_k6, run_p2p

P2P = ROOT / "k6/scenarios/p2p.js"


def stack_tls(stack):
    """QoS 1, and the user's path: the stack's state directory holds the
    generated CA and client certificate the scenarios default to."""
    return {"MQTTBENCH_STATE": str(stack.state), "QOS": "1"}


def assert_delivered_exactly_over_tls(p, r):
    assert p.returncode == 0, p.stderr[-3000:]
    c = r["counts"]
    assert c["mqtt_receives"] == c["mqtt_publishes"] > 0 and c["mqtt_lost"] == 0 and c["mqtt_duplicates"] == 0
    for group in ("sub_p2p", "pub_p2p"):
        g = r["connect"][group]
        assert g["transport"] == "tls" and g["tls_version"] == "TLS 1.3" and g["cipher_suite"].startswith("TLS_"), g
    # Every connection's handshake timed, apart from its CONNECT → CONNACK.
    h, k = r["latency_ms"]["tls_handshake"], r["latency_ms"]["connack"]
    assert h["count"] == k["count"] == 20 and h["avg"] > 0 and k["avg"] > 0
    assert "transport     TLS 1.3, TLS_" in p.stdout + p.stderr


def test_p2p_qos1_over_mqtts_delivers_exactly(stack, k6_bin, tmp_path):
    url = f"mqtts://127.0.0.1:{TEST_PORTS['MQTTS_PORT']}"
    p, r = run_p2p(k6_bin, tmp_path, url, **stack_tls(stack))
    assert_delivered_exactly_over_tls(p, r)
    assert r["parameters"]["tls_ca"] == str(stack.state / "tls/ca.pem")
    # The report names the transport and times the handshake apart.
    out = tmp_path / "report"
    rep = subprocess.run(
        [str(ROOT / "scripts/report.sh"), "--no-influx", "--results", str(tmp_path), "--out", str(out), r["run_id"]],
        env=stack.env,
        text=True,
        capture_output=True,
    )
    assert rep.returncode == 0, rep.stderr
    md = next(out.rglob("report.md")).read_text()
    assert "**Transport:** TLS (TLS 1.3, TLS_" in md and "the TLS handshake took avg" in md, md


def test_p2p_qos1_over_mutual_tls_delivers_exactly(stack, k6_bin, tmp_path):
    url = f"mqtts://127.0.0.1:{TEST_PORTS['MTLS_PORT']}"
    p, r = run_p2p(k6_bin, tmp_path, url, **stack_tls(stack))
    assert_delivered_exactly_over_tls(p, r)
    assert r["parameters"]["tls_cert"] == str(stack.state / "tls/client.pem")


def test_mutual_tls_without_a_client_certificate_names_tls_cert(stack, k6_bin, tmp_path):
    url = f"mqtts://127.0.0.1:{TEST_PORTS['MTLS_PORT']}"
    p, r = run_p2p(
        k6_bin, tmp_path, url, QOS="1", MQTTBENCH_STATE=str(tmp_path / "none"), TLS_CA=str(stack.state / "tls/ca.pem")
    )
    assert p.returncode != 0
    want = "no client certificate was given: if this listener asks for one (mutual TLS), give tls.cert and tls.key"
    assert want + ", TLS_CERT and TLS_KEY" in p.stderr, p.stderr[-3000:]


def test_a_wrong_ca_fails_before_load_naming_tls_ca(stack, k6_bin, tmp_path):
    other = tmp_path / "other-ca"
    subprocess.run(["sh", str(ROOT / "scripts/init/tls.sh"), str(other)], check=True, capture_output=True)
    url = f"mqtts://127.0.0.1:{TEST_PORTS['MQTTS_PORT']}"
    p, r = run_p2p(k6_bin, tmp_path, url, **stack_tls(stack), TLS_CA=str(other / "ca.pem"))
    assert p.returncode != 0
    assert "certificate signed by unknown authority" in p.stderr and "TLS_CA" in p.stderr, p.stderr[-3000:]
    assert r is None or r["counts"].get("mqtt_publishes", 0) == 0


def test_a_tls_ca_that_is_no_certificate_stops_before_any_connection(k6_bin, tmp_path, connection_counter):
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    p, _ = run_k6(
        k6_bin,
        P2P,
        env={
            "MQTT_URL": f"mqtts://127.0.0.1:{connection_counter.port}",
            "DURATION": "2s",
            "RESULTS_DIR": str(tmp_path),
            "TLS_CA": str(bad),
        },
    )
    connection_counter.close()
    assert p.returncode != 0
    assert f'TLS_CA="{bad}" is invalid: holds no PEM certificate' in p.stderr.replace('\\"', '"'), p.stderr[-2000:]
    assert connection_counter.accepted == []


def test_conn_tls_reports_handshake_time_and_rate(stack, k6_bin, tmp_path):
    run_id = f"conn-tls-{int(time.time() * 1000)}"
    p, _ = run_k6(
        k6_bin,
        ROOT / "k6/scenarios/conn-tls-10K-100.js",
        env={
            "MQTT_URL": f"mqtts://127.0.0.1:{TEST_PORTS['MQTTS_PORT']}",
            "MQTTBENCH_STATE": str(stack.state),
            "SCALE": "0.02",
            "CONNECT_RATE": "100",
            "DURATION": "3s",
            "RESULTS_DIR": str(tmp_path),
            "RUN_ID": run_id,
        },
        timeout=180,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads((tmp_path / f"{run_id}.json").read_text())
    h = r["latency_ms"]["tls_handshake"]
    assert h["count"] == r["counts"]["mqtt_connects"] == 200 and 0 < h["avg"] <= h["p99"]
    out = p.stdout + p.stderr
    assert "200 TLS handshakes at " in out and "/s, avg " in out, out[-2000:]


def test_conn_tls_refuses_a_plain_url_naming_mqtt_url(k6_bin, tmp_path):
    p = subprocess.run(
        [k6_bin, "inspect", "-e", "MQTT_URL=mqtt://127.0.0.1:1883", "conn-tls-10K-100.js"],
        cwd=ROOT / "k6/scenarios",
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert p.returncode != 0
    assert "MQTT_URL=mqtt://127.0.0.1:1883 is invalid for a TLS scenario" in p.stderr, p.stderr[-2000:]


def test_compare_columns_name_the_transport_when_a_run_was_not_plain_tcp():
    """scripts/compare.sh with -e MQTT_URL=... per target compares transports
    on one broker: the columns say which is which."""
    from report.compare_tables import header

    tcp = {"name": "m-tcp", "status": "ran", "figures": {"transport": "TCP"}}
    tls = {"name": "m-tls", "status": "ran", "figures": {"transport": "TLS 1.3"}}
    ws = {"name": "m-ws", "status": "ran", "figures": {"transport": "WebSocket"}}
    both = [tcp, tls, ws]
    assert [header(b, both) for b in both] == ["m-tcp (TCP)", "m-tls (TLS 1.3)", "m-ws (WebSocket)"]
    assert header(tcp, [tcp]) == "m-tcp"  # all over TCP: the names alone, as before


def test_a_missing_certificate_is_issued_again_by_the_ca_clients_were_given(tmp_path):
    tls = tmp_path / "tls"
    subprocess.run(["sh", str(ROOT / "scripts/init/tls.sh"), str(tls)], check=True, capture_output=True)
    ca = (tls / "ca.pem").read_text()
    (tls / "client.pem").unlink()
    subprocess.run(["sh", str(ROOT / "scripts/init/tls.sh"), str(tls)], check=True, capture_output=True)
    assert (tls / "ca.pem").read_text() == ca
    v = subprocess.run(
        ["openssl", "verify", "-CAfile", str(tls / "ca.pem"), str(tls / "client.pem"), str(tls / "server.pem")],
        capture_output=True,
        text=True,
    )
    assert v.returncode == 0, v.stdout + v.stderr
