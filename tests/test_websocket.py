"""MQTT over WebSocket: p2p at QoS 1 over ws:// against the native stack's
Mosquitto (its websockets listener, subprotocol mqtt) delivers exactly, with
the same accounting as TCP, and names the transport; a URL whose port is not
a WebSocket listener fails the first connection, saying so."""

import json
import time
from pathlib import Path

from conftest import ROOT, TEST_PORTS, run_k6

P2P = ROOT / "k6/scenarios/p2p.js"


def run_p2p(k6_bin, tmp_path, url, **env):
    run_id = f"ws-{int(time.time() * 1000)}"
    p, _ = run_k6(
        k6_bin,
        P2P,
        env={
            "MQTT_URL": url,
            "SCALE": "0.1",
            "DURATION": "3s",
            "P99_MS": "60000",
            "QOS": "1",
            "RESULTS_DIR": str(tmp_path),
            "RUN_ID": run_id,
            **env,
        },
        timeout=180,
    )
    f = Path(tmp_path) / f"{run_id}.json"
    return p, (json.loads(f.read_text()) if f.exists() else None)


def test_p2p_qos1_over_websocket_delivers_exactly(stack, k6_bin, tmp_path):
    p, r = run_p2p(k6_bin, tmp_path, f"ws://127.0.0.1:{TEST_PORTS['WS_PORT']}/mqtt")
    assert p.returncode == 0, p.stderr[-3000:]
    c = r["counts"]
    assert c["mqtt_receives"] == c["mqtt_publishes"] == 300 and c["mqtt_lost"] == 0 and c["mqtt_duplicates"] == 0
    assert c["mqtt_payload_bytes_received"] == 300 * 16
    assert {g["transport"] for g in r["connect"].values()} == {"ws"}
    assert r["latency_ms"]["pub_to_sub"]["count"] == 300


def test_a_port_without_websocket_fails_the_connection_naming_it(stack, k6_bin, tmp_path):
    # The plain MQTT port answers the upgrade request with no HTTP at all.
    p, r = run_p2p(k6_bin, tmp_path, f"ws://127.0.0.1:{TEST_PORTS['MQTT_PORT']}/mqtt")
    assert p.returncode != 0
    assert "WebSocket upgrade at ws://127.0.0.1:" in p.stderr and "the broker's WebSocket path and port" in p.stderr
    assert r is None or r["counts"].get("mqtt_publishes", 0) == 0
