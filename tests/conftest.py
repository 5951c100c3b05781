"""Fixtures that run the real native stack (influxd, Telegraf, node_exporter,
Mosquitto) and the real k6 build, on test ports, in a throw-away state dir."""

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests

import ports
from mqttbench.stack import secrets as stack_secrets

# Plugins of their own modules: the lanes and workers of a parallel run, the
# other native brokers' stacks, the Docker engine of the compose tests,
# the brokers a test starts itself, the dashboards' run, a throttled k6.
pytest_plugins = [
    "lanes",
    "native_stacks",
    "docker_engine",
    "clean_checkout",
    "k6_runs",
    "loopback_brokers",
    "dashboard_answers",
]

ROOT = Path(__file__).resolve().parent.parent
# The orchestration's package (mqttbench/) is tested too: pytest loads this
# file before it imports the test modules; the processes the tests start
# (python -m mqttbench.report, the scripts) import it from the same checkout.
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
# The tests live in folders named as the code they test (tests/stack,
# tests/report, ...); what several share lives beside this file, as helper
# modules (k6_runs, compare_runs, ...), and no test module imports another.
# The helpers' fixtures are every module's (pytest_plugins, above).

# The tests write nothing into the checkout: every run, report and
# comparison of theirs goes to a results folder of the session's
# (MQTTBENCH_RESULTS, which the scripts, the package and the scenarios
# honour), removed at the end by the process that made it; set
# MQTTBENCH_RESULTS=DIR to keep them. pytest-xdist's workers inherit it.
if not os.environ.get("MQTTBENCH_RESULTS"):
    os.environ["MQTTBENCH_RESULTS"] = tempfile.mkdtemp(prefix="mqttbench-results-")
    atexit.register(shutil.rmtree, os.environ["MQTTBENCH_RESULTS"], ignore_errors=True)
RESULTS = Path(os.environ["MQTTBENCH_RESULTS"]).resolve()

# After MQTTBENCH_RESULTS: the package reads it when imported.
from mqttbench.k6.command import binary as k6_binary  # noqa: E402

# Test ports differ from the defaults, so a user's running stack is untouched.
# MQTTBENCH_TEST_PORT_OFFSET moves them all, so two checkouts can run their
# tests on one machine at once (offsets such as 100, 200...: the bases are
# far enough apart that no two checkouts' ports meet); each pytest-xdist
# worker's are moved again by its place in the port plan (tests/ports.py).
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
PORT_OFFSET = int(os.environ.get("MQTTBENCH_TEST_PORT_OFFSET", "0")) + ports.worker_offset(WORKER)


def _ephemeral_ports():
    """The kernel's range for outgoing connections' source ports."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except OSError:
        return 32768, 60999


EPHEMERAL_PORTS = _ephemeral_ports()


def loopback_port(base):
    """A loopback port for a test server: base, moved by the offset.

    Never one from the ephemeral range: any client's connection (the suite
    opens thousands) may hold it as its source port, and the server's bind
    then fails now and then (CI: node_exporter on 39100). Only a base of
    the port plan (tests/ports.py), which keeps workers apart."""
    if base not in ports.BASES:
        raise ValueError(f"test port base {base} is not in the port plan: add it to tests/ports.py")
    port = base + PORT_OFFSET
    low, high = EPHEMERAL_PORTS
    if low <= port <= high:
        raise ValueError(
            f"test port {port} (base {base} + MQTTBENCH_TEST_PORT_OFFSET {PORT_OFFSET}) is in the "
            f"kernel's ephemeral range {low}-{high}: pick a base below {low - PORT_OFFSET}"
        )
    return port


def free_port():
    """A spare port of the plan that nothing holds now, for a server of one
    test (never the kernel's choice: that is an ephemeral port)."""
    for base in sorted(ports.SPARE):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", loopback_port(base)))
            except OSError:
                continue
            return s.getsockname()[1]
    raise AssertionError(f"every spare port of tests/ports.py is held (bases {min(ports.SPARE)}-{max(ports.SPARE)})")


TEST_PORTS = {
    "INFLUXDB_PORT": str(loopback_port(18086)),
    "TELEGRAF_K6_PORT": str(loopback_port(17186)),
    "NODE_EXPORTER_PORT": str(loopback_port(19100)),
    "MQTT_PORT": str(loopback_port(11883)),
    "MQTTS_PORT": str(loopback_port(12841)),
    "MTLS_PORT": str(loopback_port(12842)),
    "WS_PORT": str(loopback_port(12843)),
}


def lib_value(expr):
    """Evaluates a shell expression after sourcing scripts/lib.sh."""
    return subprocess.check_output(["bash", "-c", f". {ROOT}/scripts/lib.sh; {expr}"], text=True).strip()


@pytest.fixture(scope="session")
def k6_bin():
    path = k6_binary()
    assert os.access(path, os.X_OK), f"{path} missing: run scripts/setup.sh"
    return path


class Stack:
    def __init__(self, state, ports=TEST_PORTS):
        self.state = Path(state)
        # Its own secrets file: the user's .env.local (and the token of a
        # stack they run) is never read or rewritten by a test.
        self.secrets = self.state / "secrets.env"
        self.env = dict(
            os.environ,
            MQTTBENCH_STATE=str(state),
            MQTTBENCH_SECRETS=str(self.secrets),
            TELEGRAF_INTERVAL="1s",
            TELEGRAF_FLUSH_INTERVAL="1s",
            # scripts/bench.sh's live view, off the default port (5665) a
            # user's bench.sh serves it on.
            K6_WEB_DASHBOARD_PORT=str(loopback_port(15665)),
            **ports,
        )
        self.env.pop("INFLUX_TOKEN", None)
        self.ports = ports
        self.influx = f"http://127.0.0.1:{ports['INFLUXDB_PORT']}"
        self.mqtt_url = f"mqtt://127.0.0.1:{ports['MQTT_PORT']}"
        self.k6_out = f"influxdb=http://127.0.0.1:{ports['TELEGRAF_K6_PORT']}/k6"

    def run(self, *args, check=True):
        return subprocess.run(
            [str(ROOT / "scripts/stack.sh"), *args], env=self.env, text=True, capture_output=True, check=check
        )

    @property
    def token(self):
        token = stack_secrets.read(self.secrets).get("INFLUX_TOKEN")
        assert token, f"no INFLUX_TOKEN in {self.secrets}"
        return token

    def flux(self, query):
        r = requests.post(
            f"{self.influx}/api/v2/query",
            params={"org": "mqtt-bench"},
            headers={
                "Authorization": f"Token {self.token}",
                "Content-Type": "application/vnd.flux",
                "Accept": "application/csv",
            },
            data=query,
            timeout=30,
        )
        r.raise_for_status()
        # Tables of another schema (other tag columns) start after a blank
        # line with a header of their own.
        out, header = [], None
        for line in r.text.splitlines():
            if not line.strip():
                header = None
            elif header is None:
                header = line.split(",")
            else:
                out.append(dict(zip(header, line.split(","), strict=False)))
        return out

    def influxql(self, query):
        r = requests.get(
            f"{self.influx}/query",
            params={"db": "mqtt-bench", "q": query},
            headers={"Authorization": f"Token {self.token}"},
            timeout=30,
        )
        r.raise_for_status()
        return r.json()

    def pids(self):
        return {p.stem: int(p.read_text()) for p in (self.state / "pids").glob("*.pid")}


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    s = Stack(tmp_path_factory.mktemp("stack"))
    r = s.run("up", "--broker", "mosquitto", check=False)
    assert r.returncode == 0, r.stderr
    yield s
    s.run("down", check=False)


def wait_until(fn, timeout=20.0, every=0.5):
    """Polls fn until it returns a truthy value; returns the last value."""
    deadline = time.time() + timeout
    value = fn()
    while not value and time.time() < deadline:
        time.sleep(every)
        value = fn()
    return value
