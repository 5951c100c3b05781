"""MQTT over WebSocket: p2p at QoS 1 over ws:// against the native stack's
Mosquitto (its websockets listener, subprotocol mqtt) delivers exactly, with
the same accounting as TCP, and names the transport; a URL whose port is not
a WebSocket listener fails the first connection, saying so."""

from conftest import TEST_PORTS
from k6_runs import run_p2p


def test_p2p_qos1_over_websocket_delivers_exactly(stack, k6_bin, tmp_path):
    p, r = run_p2p(k6_bin, tmp_path, QOS="1", url=f"ws://127.0.0.1:{TEST_PORTS['WS_PORT']}/mqtt")
    assert p.returncode == 0, p.stderr[-3000:]
    c = r["counts"]
    assert c["mqtt_receives"] == c["mqtt_publishes"] == 300 and c["mqtt_lost"] == 0 and c["mqtt_duplicates"] == 0
    assert c["mqtt_payload_bytes_received"] == 300 * 16
    assert {g["transport"] for g in r["connect"].values()} == {"ws"}
    assert r["latency_ms"]["pub_to_sub"]["count"] == 300


def test_a_port_without_websocket_fails_the_connection_naming_it(stack, k6_bin, tmp_path):
    # The plain MQTT port answers the upgrade request with no HTTP at all.
    p, r = run_p2p(k6_bin, tmp_path, QOS="1", url=f"ws://127.0.0.1:{TEST_PORTS['MQTT_PORT']}/mqtt")
    assert p.returncode != 0
    assert "WebSocket upgrade at ws://127.0.0.1:" in p.stderr and "the broker's WebSocket path and port" in p.stderr
    assert r is None or r["counts"].get("mqtt_publishes", 0) == 0
