"""PAYLOAD_TEMPLATE: p2p fills each message from a template against the real
Mosquitto of the native stack, delivers exactly with the extension's own
accounting, and states the steady size; a bad template stops the run before
any connection, naming the placeholder."""

import json
import subprocess

from conftest import ROOT, TEST_PORTS
from k6_runs import run_k6, run_p2p

P2P = ROOT / "k6/scenarios/p2p.js"

DEVICE = (
    '{"h":"{header}","device":"{client}","seq":{seq},"ts":{ts_ms},'
    '"temp":{rand:18.0-30.0},"state":"{choice:ok|warn|fail}"}'
)


def test_json_template_delivers_exactly_with_its_header_inside(stack, k6_bin, tmp_path):
    # What the broker delivers is the template's JSON, as a subscriber of
    # the user's own sees it.
    sub = subprocess.Popen(
        ["mosquitto_sub", "-p", TEST_PORTS["MQTT_PORT"], "-t", "tpl1/#", "-C", "3", "-W", "60"],
        stdout=subprocess.PIPE,
        text=True,
    )
    p, r = run_p2p(k6_bin, tmp_path, stack.mqtt_url, PAYLOAD_TEMPLATE=DEVICE, TOPIC_PREFIX="tpl1/")
    out, _ = sub.communicate(timeout=60)
    assert p.returncode == 0, p.stderr[-3000:]
    c = r["counts"]
    assert c["mqtt_receives"] == c["mqtt_publishes"] > 0 and c["mqtt_lost"] == 0
    assert r["latency_ms"]["pub_to_sub"]["p99"] > 0
    size = r["parameters"]["payload"]
    assert r["parameters"]["payload_template"] == DEVICE
    assert r["parameters"]["tls_ca"] is None  # the stack's TLS files are defaults of TLS runs only
    assert all(s["payload"] == size for s in r["steps"])
    assert c["mqtt_payload_bytes_received"] == c["mqtt_receives"] * size
    lines = out.splitlines()
    assert len(lines) == 3
    for line in lines:
        msg = json.loads(line)
        assert len(line) == size, (len(line), size)  # mosquitto_sub prints it as sent, padding and all
        assert 18 <= msg["temp"] <= 30 and msg["state"] in ("ok", "warn", "fail") and len(msg["h"]) == 22
        assert "-p2p-pub-" in msg["device"] and isinstance(msg["seq"], int)


def test_template_without_header_placeholder_carries_it_binary_first(stack, k6_bin, tmp_path):
    p, r = run_p2p(k6_bin, tmp_path, stack.mqtt_url, PAYLOAD_TEMPLATE='{"seq":{seq},"v":{rand:0-100}}', QOS="1")
    assert p.returncode == 0, p.stderr[-3000:]
    c = r["counts"]
    assert c["mqtt_receives"] == c["mqtt_publishes"] > 0 and c["mqtt_lost"] == 0
    assert r["parameters"]["payload"] == 16 + len('{"seq":,"v":}') + 10 + 3


def test_bad_template_stops_before_any_connection_naming_the_placeholder(k6_bin, tmp_path, connection_counter):
    p, _ = run_k6(
        k6_bin,
        P2P,
        env={
            "MQTT_URL": f"mqtt://127.0.0.1:{connection_counter.port}",
            "DURATION": "2s",
            "RESULTS_DIR": str(tmp_path),
            "PAYLOAD_TEMPLATE": '{"t":{rand:30-18},"d":"{client}"}',
        },
    )
    connection_counter.close()
    assert p.returncode != 0
    err = p.stderr.replace('\\"', '"')
    want = "{rand:30-18}: has its bounds the wrong way round: {rand:18-30}"
    assert "PAYLOAD_TEMPLATE=" in err and want in err, err[-2000:]
    assert connection_counter.accepted == []


def test_payload_and_payload_sweep_name_what_the_template_replaces(k6_bin):
    """k6 inspect reads the options as k6 run does, before any connection."""
    for scenario, env, warned in [
        (
            "p2p",
            {"PAYLOAD": "64", "PAYLOAD_TEMPLATE": "{seq}"},
            "PAYLOAD=64 is not used by this scenario: PAYLOAD_TEMPLATE gives",
        ),
        (
            "payload-1K-1K-20K",
            {"PAYLOAD_TEMPLATE": "{seq}"},
            "PAYLOAD_TEMPLATE={seq} is not used by this scenario: the payload sweep",
        ),
    ]:
        args = [k6_bin, "inspect"] + [a for k, v in env.items() for a in ("-e", f"{k}={v}")] + [f"{scenario}.js"]
        p = subprocess.run(args, cwd=ROOT / "k6/scenarios", text=True, capture_output=True, timeout=60)
        assert p.returncode == 0 and warned in p.stderr, p.stderr
