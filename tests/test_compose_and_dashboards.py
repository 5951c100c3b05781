"""compose.yaml validates for every profile with the real compose
plugin; its structure is checked; every dashboard query runs against the
real InfluxDB of the native stack after a real k6 run."""

import json
import re
import socket
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import ROOT, dashboard_queries, lib_value, load_dashboards, run_scenario_to_influx

BROKERS = ["mosquitto", "emqx", "nanomq", "vernemq"]


def compose(*args):
    return subprocess.run(
        [lib_value("compose_bin"), "--project-directory", str(ROOT), "-f", str(ROOT / "compose.yaml"), *args],
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("profile", BROKERS + ["k6"])
def test_compose_config_is_valid(profile):
    r = compose("--profile", profile, "config", "-q")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("broker", BROKERS)
def test_secrets_are_files_generated_by_init_never_environment(broker):
    services = json.loads(compose("--profile", broker, "config", "--format", "json").stdout)["services"]
    for name, svc in services.items():
        # No service is given a secret's value, nor needs a file made before `up`.
        for key in svc.get("environment") or {}:
            assert not re.search(r"PASSWORD$|TOKEN$|COOKIE$", key), f"{name}: {key} in the environment"
        for f in svc.get("env_file", []) or []:
            assert f["path"].endswith(".env") or f.get("required") is False, f"{name} requires {f['path']}"
        mounts = [v for v in svc.get("volumes", []) if v.get("source") == "secrets"]
        if mounts and name != "init":
            assert all(v.get("read_only") for v in mounts), name
            assert svc["depends_on"]["init"]["condition"] == "service_completed_successfully", name
    assert services["init"]["depends_on"]["influxdb"]["condition"] == "service_healthy"


@pytest.mark.parametrize("broker", BROKERS)
def test_broker_profile_structure(broker):
    r = compose("--profile", broker, "config", "--format", "json")
    assert r.returncode == 0, r.stderr
    services = json.loads(r.stdout)["services"]
    # The observability core runs in every profile, with one Telegraf for the broker.
    assert {"influxdb", "grafana", "node-exporter", broker, f"telegraf-{broker}"} <= set(services)
    others = set(BROKERS) - {broker}
    assert not others & set(services)
    b = services[broker]
    assert b.get("healthcheck", {}).get("test"), "broker without healthcheck"
    assert float(b["cpus"]) > 0 and int(b["mem_limit"]) > 0, "broker without resource limits"
    limits = {s: (float(services[s]["cpus"]), int(services[s]["mem_limit"])) for s in services if s in BROKERS}
    assert limits[broker] == (2.0, 4 * 1024**3)
    tel = services[f"telegraf-{broker}"]
    assert tel["depends_on"][broker]["condition"] == "service_healthy"
    assert tel["depends_on"]["init"]["condition"] == "service_completed_successfully"
    for name, svc in services.items():
        image = svc.get("image", "")
        assert re.search(r":[\w.\-]+$", image) and not image.endswith(":latest"), f"{name}: unpinned image {image}"
        for port in svc.get("ports", []):
            assert port["host_ip"] == "127.0.0.1", f"{name} publishes {port} beyond loopback"
        for vol in svc.get("volumes", []):
            if vol["type"] == "bind" and vol["source"].startswith(str(ROOT)):
                assert Path(vol["source"]).exists(), f"{name} mounts missing {vol['source']}"
        if "healthcheck" not in svc and name not in ("k6", "init"):  # k6 and init run once
            raise AssertionError(f"{name} has no healthcheck")


def test_images_are_pinned_once_in_env():
    text = (ROOT / "compose.yaml").read_text()
    assert not re.search(r"image:\s*[\w./-]+:(?!\$)", text), "an image tag is written in compose.yaml, not .env"
    env = (ROOT / ".env").read_text()
    for key in [
        "INFLUXDB_IMAGE",
        "TELEGRAF_IMAGE",
        "GRAFANA_IMAGE",
        "NODE_EXPORTER_IMAGE",
        "MOSQUITTO_IMAGE",
        "EMQX_IMAGE",
        "NANOMQ_IMAGE",
        "VERNEMQ_IMAGE",
    ]:
        assert re.search(rf"^{key}=\S+:\S+$", env, re.M), key


def test_no_secret_in_repo_files():
    for path in [ROOT / "compose.yaml", ROOT / ".env", *ROOT.glob("brokers/*/*"), *ROOT.glob("grafana/**/*.yaml")]:
        text = path.read_text()
        assert "admin/admin" not in text and "=public" not in text.lower().replace(" ", ""), path
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert ".env.local" not in tracked


def test_dashboards_lint():
    subprocess.run(["python3", str(ROOT / "scripts/grafana_dashboards.py"), "--check"], check=True)
    boards = load_dashboards()
    uids = [d["uid"] for d in boards.values()]
    assert sorted(uids) == ["mqtt-bench-broker", "mqtt-bench-generator", "mqtt-bench-host", "mqtt-bench-overview"]
    for name, d in boards.items():
        assert d["id"] is None, name
        assert {v["name"] for v in d["templating"]["list"]} == {"run_id", "broker", "scenario"}
        ds = (ROOT / "grafana/provisioning/datasources/influxdb.yaml").read_text()
        assert "uid: mqtt-bench-influxdb" in ds
        for p in d["panels"]:
            assert p["datasource"] == {"type": "influxdb", "uid": "mqtt-bench-influxdb"}, (name, p["title"])
            for t in p["targets"]:
                assert t["datasource"]["uid"] == "mqtt-bench-influxdb"
                assert "${run_id}" in t["query"] or "${broker}" in t["query"], (name, p["title"])


def bind(query, start, run_id, scenario):
    """What Grafana does: the v record and the template variables."""
    q = query.replace("${run_id}", run_id).replace("${broker}", "mosquitto").replace("${scenario}", scenario)
    lines = q.split("\n")
    imports = [line for line in lines if line.startswith("import ")]
    rest = [line for line in lines if not line.startswith("import ")]
    v = (
        f"v = {{timeRangeStart: {start}, timeRangeStop: now(), windowPeriod: 2s, "
        f'defaultBucket: "mqtt-bench", organization: "mqtt-bench"}}'
    )
    return "\n".join(imports + [v] + rest)


@pytest.fixture(scope="module")
def filled_run(stack, k6_bin, tmp_path_factory):
    """A real scenario run through k6 -> Telegraf -> InfluxDB, with steps."""
    start = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    run_id = f"dash-{int(time.time())}"
    p, _ = run_scenario_to_influx(stack, k6_bin, "p2p", run_id, tmp_path_factory.mktemp("res"), STEPS="100:3s,200:3s")
    assert p.returncode == 0, p.stderr[-3000:]
    time.sleep(8)  # Telegraf flushes every second; host inputs every second
    return start, run_id


def test_every_dashboard_query_runs_and_core_panels_have_data(stack, filled_run):
    start, run_id = filled_run
    empty, errors = [], []
    for board, title, query in dashboard_queries():
        try:
            rows = stack.flux(bind(query, start, run_id, "p2p"))
        except Exception as e:  # noqa: BLE001 - report every failing query at once
            errors.append(f"{board} / {title}: {e}")
            continue
        other_broker = any(b in title for b in ("EMQX", "NanoMQ", "VerneMQ"))
        # Mosquitto publishes a $SYS counter only once it changes: nothing
        # is dropped in a healthy run, so that series does not exist yet.
        event_only = "dropped" in title
        if not rows and not other_broker and not event_only:
            empty.append(f"{board} / {title}")
    assert not errors, "\n".join(errors)
    # Overview, Host, Mosquitto and generator panels must show the run.
    assert not empty, "panels without data:\n" + "\n".join(empty)


def test_nanomq_healthcheck_passes_on_a_live_broker_only(stack):
    # NanoMQ cannot run here; its healthcheck speaks plain MQTT (CONNECT,
    # CONNACK), so it is run as compose writes it against the real Mosquitto
    # of the native stack, and against a closed and a silent port.
    services = json.loads(compose("--profile", "nanomq", "config", "--format", "json").stdout)["services"]
    test = services["nanomq"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "bash", "-c"]
    script = test[3].replace("$$", "$")
    port = stack.mqtt_url.rsplit(":", 1)[1]

    def check(p):
        return subprocess.run(
            ["bash", "-c", script.replace("/dev/tcp/127.0.0.1/1883", f"/dev/tcp/127.0.0.1/{p}")], timeout=10
        )

    assert check(port).returncode == 0
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        free = closed.getsockname()[1]
    assert check(free).returncode != 0
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        assert check(silent.getsockname()[1]).returncode != 0
