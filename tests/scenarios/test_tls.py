"""TLS and mutual TLS end to end: p2p at QoS 1 over mqtts:// against the
native stack's Mosquitto (its 8883-style and mutual-TLS listeners, with the
certificates scripts/stack.sh generated) delivers exactly and names the
transport, TLS version and cipher suite, with the TLS handshake timed apart
from CONNECT; a wrong CA stops the run before load, naming TLS_CA; a broker
that refuses the client's certificate (none, or one of another CA), after a
TLS 1.3 handshake (Mosquitto) or during a TLS 1.2 one (openssl s_server with
an alert as VerneMQ, closing as NanoMQ), stops it naming TLS_CERT and
TLS_KEY, and the result puts the run down to broker_refused."""

import contextlib
import json
import socket
import subprocess
import threading
import time

from conftest import ROOT, TEST_PORTS, loopback_port, wait_until
from k6_runs import run_k6, run_p2p

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


def run_without_client_certificate(k6_bin, tmp_path, url, ca):
    """p2p at QoS 1 over url with the CA ca and no client certificate (an
    empty state directory: no default one)."""
    return run_p2p(k6_bin, tmp_path, url, QOS="1", MQTTBENCH_STATE=str(tmp_path / "none"), TLS_CA=str(ca))


def assert_refused_naming(p, r, alert, fix):
    """The run stopped before load on the broker's TLS refusal, naming the
    fix, and its result puts it down to the broker's refusal."""
    assert p.returncode != 0 and r is not None, p.stderr[-3000:]
    assert alert in p.stderr and "refused by broker" in p.stderr and fix in p.stderr, p.stderr[-3000:]
    assert r["counts"].get("mqtt_publishes", 0) == 0 and r["counts"]["mqtt_connects"] == 0, r["counts"]
    assert r["diagnosis"]["cause"] == "broker_refused" and fix in r["diagnosis"]["text"], r["diagnosis"]


NO_CERT = (
    "asked for a client certificate (mutual TLS) and none was given: give tls.cert and tls.key, TLS_CERT and TLS_KEY"
)


def test_mutual_tls_without_a_client_certificate_names_tls_cert(stack, k6_bin, tmp_path):
    # TLS 1.3: Mosquitto refuses the certificate after the client's handshake, on the CONNECT.
    url = f"mqtts://127.0.0.1:{TEST_PORTS['MTLS_PORT']}"
    p, r = run_without_client_certificate(k6_bin, tmp_path, url, stack.state / "tls/ca.pem")
    assert_refused_naming(p, r, "tls: certificate required", NO_CERT)


@contextlib.contextmanager
def openssl_server(tmp, port, *args):
    """openssl s_server on 127.0.0.1:port with the stack's server certificate
    (scripts/init/tls.sh into tmp/tls), TLS 1.2, demanding a client
    certificate: what VerneMQ and NanoMQ's mutual-TLS listeners run. Yields
    the TLS directory; stops the server by its pid."""
    tls = tmp / "tls"
    subprocess.run(["sh", str(ROOT / "scripts/init/tls.sh"), str(tls)], check=True, capture_output=True)
    log = (tmp / f"s_server-{port}.log").open("w")
    cmd = ["openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-tls1_2", "-Verify", "1", "-quiet"]
    cmd += ["-cert", str(tls / "server.pem"), "-key", str(tls / "server.key"), *args]
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    try:

        def up():
            assert proc.poll() is None, (tmp / f"s_server-{port}.log").read_text()
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        assert wait_until(up, timeout=10)
        yield tls
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def test_mutual_tls_1_2_refused_with_an_alert_names_tls_cert(k6_bin, tmp_path):
    # VerneMQ (Erlang ssl) and OpenSSL refuse during a TLS 1.2 handshake: alert 40.
    port = loopback_port(12851)
    with openssl_server(tmp_path, port) as tls:
        p, r = run_without_client_certificate(k6_bin, tmp_path, f"mqtts://127.0.0.1:{port}", tls / "ca.pem")
    assert_refused_naming(p, r, "remote error: tls: handshake failure", NO_CERT)


def test_mutual_tls_1_2_refused_with_a_close_names_tls_cert(k6_bin, tmp_path):
    # NanoMQ (mbedTLS) closes after asking for the certificate, without an
    # alert: s_server behind a proxy that closes where it would send one.
    port, upstream = loopback_port(12852), loopback_port(12853)
    with openssl_server(tmp_path, upstream) as tls, closing_proxy(port, upstream):
        p, r = run_without_client_certificate(k6_bin, tmp_path, f"mqtts://127.0.0.1:{port}", tls / "ca.pem")
    assert_refused_naming(p, r, ": EOF", NO_CERT)


def test_a_client_certificate_of_another_ca_names_tls_ca(k6_bin, tmp_path):
    # The broker trusts only another stack's CA: it refuses this one's client certificate (alert 48).
    other = tmp_path / "other"
    subprocess.run(["sh", str(ROOT / "scripts/init/tls.sh"), str(other)], check=True, capture_output=True)
    port = loopback_port(12854)
    with openssl_server(tmp_path, port, "-verify_return_error", "-CAfile", str(other / "ca.pem")) as tls:
        p, r = run_p2p(k6_bin, tmp_path, f"mqtts://127.0.0.1:{port}", QOS="1", MQTTBENCH_STATE=str(tmp_path))
    assert r["parameters"]["tls_cert"] == str(tls / "client.pem")
    assert_refused_naming(p, r, "remote error: tls: unknown certificate authority", "TLS_CERT and TLS_KEY")
    assert "TLS_CA" in r["diagnosis"]["text"]


@contextlib.contextmanager
def closing_proxy(port, upstream):
    """A TCP proxy from 127.0.0.1:port to upstream that closes the client's
    connection where the server sends a TLS alert record, instead of it."""
    lsock = socket.create_server(("127.0.0.1", port))

    def pipe(src, dst, alerts_close):
        buf = b""
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                buf += data
                # whole records: 5-byte header (type, version, length)
                while alerts_close and len(buf) >= 5 and len(buf) >= 5 + int.from_bytes(buf[3:5], "big"):
                    if buf[0] == 21:
                        dst.shutdown(socket.SHUT_WR)
                        return
                    n = 5 + int.from_bytes(buf[3:5], "big")
                    dst.sendall(buf[:n])
                    buf = buf[n:]
                if not alerts_close:
                    dst.sendall(buf)
                    buf = b""
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def serve():
        with contextlib.suppress(OSError):
            while True:
                c, _ = lsock.accept()
                u = socket.create_connection(("127.0.0.1", upstream))
                threading.Thread(target=pipe, args=(c, u, False), daemon=True).start()
                threading.Thread(target=pipe, args=(u, c, True), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield
    finally:
        lsock.close()


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
    from mqttbench.report.comparison.tables import header

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
