"""--impair under compose: scripts/bench.sh --compose --impair wan through
the core's toxiproxy service, under a real Docker engine, with the images
built locally (tests/compose/build-images.sh: a stand-in of the project's
own Toxiproxy build, never named as the upstream image) and host
networking (tests/compose/stand-ins.yaml, and the broker's from its
broker.toml: docker_engine.stand_in_files), on ports of its own."""

import json
import os
import subprocess
import time
import urllib.request

from conftest import PORT_OFFSET, RESULTS, ROOT, loopback_port
from docker_engine import left_behind, stand_in_files
from impaired_runs import WAN_P50_MS, cleanup
from k6_runs import BEHAVIOUR_P99_MS

ENV = {
    "COMPOSE_PROJECT_NAME": f"mqtt-bench-impair-{PORT_OFFSET}",
    "MQTT_PORT": str(loopback_port(13883)),
    # The stand-in broker's TLS, mutual-TLS and WebSocket listeners (host network) move too.
    "MQTTS_PORT": str(loopback_port(13851)),
    "MTLS_PORT": str(loopback_port(13852)),
    "WS_PORT": str(loopback_port(13853)),
    "INFLUXDB_PORT": str(loopback_port(13086)),
    "TELEGRAF_K6_PORT": str(loopback_port(13187)),
    "NODE_EXPORTER_PORT": str(loopback_port(13100)),
    "GRAFANA_PORT": str(loopback_port(13030)),
    "TOXIPROXY_PORT": str(loopback_port(13474)),
    "TOXIPROXY_MQTT_PORT": str(loopback_port(13884)),
    # The broker's open files, at most this host's hard limit (README).
    "NOFILE_LIMIT": subprocess.run(["bash", "-c", "ulimit -Hn"], capture_output=True, text=True).stdout.strip(),
}


def test_bench_under_compose_impairs_through_the_toxiproxy_service(docker_engine, tmp_path):
    files = stand_in_files("mosquitto", tmp_path, ENV)
    env = {**os.environ, **ENV, "COMPOSE_FILE": files, "K6_WEB_DASHBOARD": "false"}
    env.pop("INFLUX_TOKEN", None)
    run_id = f"impair-compose-{time.time_ns()}"
    try:
        r = subprocess.run(
            [
                str(ROOT / "scripts/bench.sh"),
                "--compose",
                "--impair",
                "wan",
                "-e",
                "DURATION=10s",
                "-e",
                "SCALE=0.1",
                "-e",
                f"P99_MS={BEHAVIOUR_P99_MS}",
                "-e",
                f"RUN_ID={run_id}",
            ],
            env=env,
            text=True,
            capture_output=True,
            timeout=900,
        )
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
        res = json.loads((RESULTS / f"raw/{run_id}.json").read_text())
        net = res["network"]
        assert net["profile"] == "wan" and net["proxy"]["upstream"] == f"broker:{ENV['MQTT_PORT']}"
        assert res["parameters"]["url"] == f"mqtt://toxiproxy:{ENV['TOXIPROXY_MQTT_PORT']}"
        assert res["latency_ms"]["pub_to_sub"]["p50"] >= WAN_P50_MS
        assert "Network impaired: profile `wan`" in (RESULTS / f"{run_id}/report.md").read_text()
        # The service stays up, its proxy is gone: no impairment left.
        with urllib.request.urlopen(f"http://127.0.0.1:{ENV['TOXIPROXY_PORT']}/proxies", timeout=5) as p:
            assert json.loads(p.read()) == {}
    finally:
        down = subprocess.run(
            [
                "bash",
                "-c",
                f". {ROOT}/scripts/lib.sh && compose --profile mosquitto --profile k6 down -v --remove-orphans",
            ],
            env=env,
            text=True,
            capture_output=True,
            timeout=300,
        )
        cleanup(run_id)
        left_behind(ENV["COMPOSE_PROJECT_NAME"], down)
