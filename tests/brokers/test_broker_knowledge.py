"""One source of broker knowledge: brokers/<name>/ is the only place that
names a broker's facts. In a copy of the tree, a copy of Mosquitto's folder
under another name (brokers/mosquitto2, the same Mosquitto) is a broker that
bench.sh, compare.sh, stack.sh and the dashboards take, with no script
edited; the checkout itself never gets a stray brokers/ folder."""

import json
import os
import shutil
import subprocess
import time
import tomllib

import pytest
import yaml

from conftest import RESULTS, ROOT, Stack, lib_value, loopback_port
from dashboard_answers import bind
from loopback_brokers import project_mosquitto
from mqttbench import settings

COPY = "mosquitto2"
# Ports of their own: the session's stack (conftest) may hold TEST_PORTS.
PORTS = {
    "INFLUXDB_PORT": str(loopback_port(14086)),
    "TELEGRAF_K6_PORT": str(loopback_port(14186)),
    "NODE_EXPORTER_PORT": str(loopback_port(14100)),
    "MQTT_PORT": str(loopback_port(14883)),
    "MQTTS_PORT": str(loopback_port(14884)),
    "MTLS_PORT": str(loopback_port(14885)),
    "WS_PORT": str(loopback_port(14886)),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """The checkout's files (tracked, and new ones not ignored, as they are
    in the working tree) copied, with brokers/mosquitto2 added."""
    dest = tmp_path_factory.mktemp("tree") / "mqtt-bench"
    listed = subprocess.check_output(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    )
    for rel in filter(None, listed.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():  # a file deleted in the working tree is still listed
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel, follow_symlinks=False)
    shutil.copytree(dest / "brokers/mosquitto", dest / "brokers" / COPY)
    return dest


def script(tree, name, *args, env=None, timeout=120):
    return subprocess.run(
        [str(tree / "scripts" / name), *args], env=env, text=True, capture_output=True, timeout=timeout
    )


def test_bench_and_compare_take_a_new_broker_folder(tree):
    # Each refuses an unknown scenario after it accepted the broker: the
    # broker check passed when the scenario is what it names.
    r = script(tree, "bench.sh", "--broker", COPY, "--native", "--scenario", "no-such-scenario")
    assert r.returncode != 0 and "unknown scenario 'no-such-scenario'" in r.stderr, r.stderr
    r = script(tree, "compare.sh", "--broker", f"mosquitto,{COPY}", "--native", "--scenario", "no-such-scenario")
    assert r.returncode == 2 and "unknown scenario 'no-such-scenario'" in r.stderr, r.stderr
    # An unknown broker is named with the folders there are.
    for name in ("bench.sh", "compare.sh"):
        r = script(tree, name, "--broker", "no-such-broker", "--native")
        assert r.returncode != 0 and "no-such-broker" in r.stderr and COPY in r.stderr, (name, r.stderr)
    # The checkout knows no such broker: the copy made it one.
    r = script(ROOT, "bench.sh", "--broker", COPY, "--native", "--scenario", "no-such-scenario")
    assert r.returncode != 0 and f"unknown broker '{COPY}'" in r.stderr, r.stderr


def test_a_broker_without_a_native_launcher_is_refused_natively(tree, tmp_path):
    env = dict(os.environ, MQTTBENCH_STATE=str(tmp_path / "state"), **PORTS)
    r = script(tree, "stack.sh", "up", "--broker", "emqx", env=env)
    assert r.returncode != 0, r.stderr
    assert "[native]" in r.stderr and "brokers/emqx/broker.toml" in r.stderr and "--compose" in r.stderr, r.stderr
    assert not (tmp_path / "state/pids").exists(), "nothing starts for a broker refused natively"


def dashboards_check(tree):
    python = lib_value("echo $CACHE/venv/current/bin/python")
    # The copy's own package, not the checkout's.
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run(
        [python, "-P", "-m", "mqttbench.dashboards", "--check"], env=env, text=True, capture_output=True
    )


def test_a_new_broker_folder_leaves_the_dashboards_as_they_are(tree):
    # The copy's series are Mosquitto's: one query serves both.
    r = dashboards_check(tree)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    "path, old, new",
    [
        ("brokers/emqx/broker.toml", '"emqx_connections_count"', '"emqx_live_connections_count"'),
        # Where Mosquitto's broker.toml says its publication interval is set.
        ("brokers/mosquitto/mosquitto.conf", "\nsys_interval 5\n", "\nsys_interval 10\n"),
    ],
)
def test_the_dashboards_read_what_the_broker_folders_say(tree, tmp_path, path, old, new):
    # A change in a broker's folder is a changed dashboard: the queries read
    # it there, not from a list of their own.
    other = tmp_path / "tree"
    shutil.copytree(tree, other, symlinks=True)
    text = (other / path).read_text()
    assert old in text
    (other / path).write_text(text.replace(old, new))
    r = dashboards_check(other)
    assert r.returncode != 0 and "broker-internals.json" in r.stderr, r.stderr


def test_compose_check_and_bench_name_a_broker_without_a_profile(tree):
    compose = str(settings.compose_bin())
    if not os.access(compose, os.X_OK):
        pytest.skip(f"no compose to validate with ({compose} is not built: scripts/setup.sh)")
    r = script(tree, "compose.sh", "check", timeout=300)
    assert r.returncode != 0 and f"brokers/{COPY}" in r.stderr and "compose.yaml" in r.stderr, r.stderr
    # bench.sh --compose says so before it starts anything.
    r = script(tree, "bench.sh", "--compose", "--broker", COPY, "-e", "DURATION=3s", timeout=300)
    assert r.returncode != 0 and f"brokers/{COPY} has no service" in r.stderr and "--native" in r.stderr, r.stderr
    assert "starting the" not in r.stderr, r.stderr


def test_a_new_broker_folder_runs_natively_compares_and_fills_the_broker_variable(tree, tmp_path, k6_bin):
    # A short real run of the copy on the native stack, then the dashboards'
    # broker variable, as Grafana runs it, lists it.
    stack = Stack(tmp_path / "state")
    stack.env.update(PORTS, K6_WEB_DASHBOARD="false")
    stack.influx = f"http://127.0.0.1:{PORTS['INFLUXDB_PORT']}"
    run_id = f"knowledge-{time.time_ns()}"
    start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
    try:
        r = script(
            tree, "bench.sh", "--native", "--broker", COPY, "-e", "DURATION=3s", "-e", "SCALE=0.01",
            "-e", f"RUN_ID={run_id}", env=stack.env, timeout=600,
        )  # fmt: skip
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        result = json.loads((RESULTS / f"raw/{run_id}.json").read_text())
        assert result["broker"] == COPY and result["versions"]["broker"], result["versions"]
        assert (RESULTS / f"{run_id}/report.md").exists()
        board = json.loads((tree / "grafana/dashboards/broker-internals.json").read_text())
        (var,) = [v for v in board["templating"]["list"] if v["name"] == "broker"]
        rows = stack.flux(bind(var["query"], start, run_id, "p2p", COPY))
        assert COPY in {row.get("_value") for row in rows}, rows
        # Its series, named in its broker.toml, reach InfluxDB under its name:
        # what the Broker internals row shows for it.
        query = (
            f'from(bucket: "mqtt-bench") |> range(start: {start})\n'
            f'  |> filter(fn: (r) => r._measurement == "mosquitto_sys" and r.broker == "{COPY}")\n'
            '  |> keep(columns: ["topic"]) |> distinct(column: "topic")'
        )
        topics = {row["_value"] for row in stack.flux(query) if "_value" in row}
        named = tomllib.loads((tree / "brokers" / COPY / "broker.toml").read_text())["metrics"]["series"]
        assert set(named.values()) & topics, topics
        # compare.sh runs it too, on the stack that runs it already.
        compare_id = f"knowledge-{time.time_ns()}"
        r = script(
            tree, "compare.sh", "--native", "--broker", COPY, "--id", compare_id, "-e", "DURATION=3s",
            "-e", "SCALE=0.01", env=stack.env, timeout=600,
        )  # fmt: skip
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        (entry,) = json.loads((RESULTS / f"compare-{compare_id}/results.json").read_text())["brokers"]
        assert entry["name"] == COPY and entry["status"] == "ran", entry
    finally:
        script(tree, "stack.sh", "down", env=stack.env)


def test_the_version_a_run_records_is_read_on_the_topics_the_broker_folders_name(tree, tmp_path):
    """mqttbench/brokers/version.py asks the broker at a URL on every broker.toml's
    version_topic, not on topics a script knows: a folder that names another
    topic is heard on it, and a broker none names says nothing."""

    for name in ("mosquitto", COPY):
        path = tree / "brokers" / name / "broker.toml"
        path.write_text(path.read_text().replace('version_topic = "$SYS/broker/version"', ""))
    copy = tree / "brokers" / COPY / "broker.toml"
    copy.write_text('version_topic = "bench/version"\n' + copy.read_text())

    def version(root, port):
        cmd = ["python3", "-P", "-m", "mqttbench.brokers.version", "127.0.0.1", str(port)]
        env = dict(os.environ, PYTHONPATH=str(root))
        return subprocess.run(cmd, env=env, text=True, capture_output=True, timeout=30).stdout.strip()

    with project_mosquitto(tmp_path) as (port, _):
        assert version(ROOT, port).startswith("mosquitto version "), "the checkout's folders name $SYS/broker/version"
        assert version(tree, port) == "", "no folder of the tree names $SYS/broker/version"
        subprocess.run(
            ["mosquitto_pub", "-p", str(port), "-t", "bench/version", "-r", "-m", "mosquitto2 9.9"], check=True
        )
        assert version(tree, port) == "mosquitto2 9.9"


def test_githubs_compose_job_runs_every_broker_folder(tree, tmp_path):
    """The compose matrix is what the brokers job lists, the folders of
    brokers/: the copy's new folder is in it, with no edit of the workflow."""
    jobs = yaml.safe_load((tree / ".github/workflows/test.yml").read_text())["jobs"]
    assert jobs["compose"]["needs"] == "brokers"
    assert jobs["compose"]["strategy"]["matrix"]["broker"] == "${{ fromJSON(needs.brokers.outputs.brokers) }}"
    assert jobs["brokers"]["outputs"]["brokers"] == "${{ steps.list.outputs.brokers }}"
    (step,) = [s for s in jobs["brokers"]["steps"] if s.get("id") == "list"]
    out = tmp_path / "github-output"
    # As GitHub runs a step's script (bash's default shell there).
    env = dict(os.environ, GITHUB_OUTPUT=str(out))
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tree, env=env, check=True
    )
    key, value = out.read_text().strip().split("=", 1)
    folders = {p.parent.name for p in (tree / "brokers").glob("*/broker.toml")}
    assert key == "brokers" and set(json.loads(value)) == folders and COPY in folders, value
