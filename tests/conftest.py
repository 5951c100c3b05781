"""Fixtures that run the real native stack (influxd, Telegraf, node_exporter,
Mosquitto) and the real k6 build, on test ports, in a throw-away state dir."""

import atexit
import contextlib
import json
import os
import re
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

# Plugins of their own modules: the lanes and workers of a parallel run, the
# other native brokers' stacks, the Docker engine of the compose tests.
pytest_plugins = ["lanes", "native_stacks", "docker_engine", "clean_checkout"]

ROOT = Path(__file__).resolve().parent.parent
# The orchestration's package (mqttbench/) is tested too: pytest loads this
# file before it imports the test modules; the processes the tests start
# (python -m mqttbench.report, the scripts) import it from the same checkout.
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
# The tests live in folders named as the code they test (tests/stack,
# tests/report, ...), and some take a fixture or helper of another area's
# module (from test_scenarios import mosquitto): every area is importable
# by the module's name, as pytest itself imports it (rootdir-relative
# basenames, unique across the folders).
sys.path[1:1] = [str(d) for d in sorted(Path(__file__).parent.iterdir()) if d.is_dir() and any(d.glob("test_*.py"))]

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
from mqttbench.k6.command import run_argv  # noqa: E402

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


def load_dashboards():
    """The provisioned dashboards, by file name."""
    return {p.name: json.loads(p.read_text()) for p in sorted((ROOT / "grafana/dashboards").glob("*.json"))}


def dashboard_queries():
    """Every Flux text Grafana runs: (board, where, query) of panel targets,
    variables and annotations."""
    for name, d in load_dashboards().items():
        for p in d["panels"]:
            for t in p.get("targets", []):  # a row has none
                yield name, p["title"], t["query"]
        for v in d["templating"]["list"]:
            if v["type"] == "query":  # not a textbox's default (History's reports)
                yield name, f"variable {v['name']}", v["query"]
        for a in d["annotations"]["list"]:
            yield name, f"annotation {a['name']}", a["target"]["query"]


def broker_panel_queries(broker):
    """(panel title, Flux query) of every Broker internals panel that one
    broker (a folder of brokers/) fills: the panels of the row
    repeated by the broker variable, the same for every broker (each query
    takes the broker's own series: bind it with broker=)."""
    from mqttbench.brokers import facts as broker_facts

    assert broker in broker_facts.names(), broker
    in_row = False
    for p in load_dashboards()["broker-internals.json"]["panels"]:
        if p["type"] == "row":
            in_row = p.get("repeat") == "broker"
        elif in_row:
            for t in p["targets"]:
                yield p["title"], t["query"]


def bind(query, start, run_id, scenario, broker="mosquitto", flow=".*"):
    """What Grafana does: the v record and the template variables (flow: the
    regex Grafana writes for the parts chosen, .* for All)."""
    q = query.replace("${run_id}", run_id).replace("${broker}", broker).replace("${scenario}", scenario)
    q = q.replace("${flow:regex}", flow)
    q = q.replace("${broker:regex}", broker)  # History's brokers, several or all: one here
    lines = q.split("\n")
    imports = [line for line in lines if line.startswith("import ")]
    rest = [line for line in lines if not line.startswith("import ")]
    v = (
        f"v = {{timeRangeStart: {start}, timeRangeStop: now(), windowPeriod: 2s, "
        f'defaultBucket: "mqtt-bench", organization: "mqtt-bench"}}'
    )
    return "\n".join(imports + [v] + rest)


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
        for line in self.secrets.read_text().splitlines():
            if line.startswith("INFLUX_TOKEN="):
                return line.split("=", 1)[1]
        raise AssertionError(f"no INFLUX_TOKEN in {self.secrets}")

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


def run_k6(k6_bin, script, env=None, out=None, summary=None, timeout=300):
    """Runs a k6 script; returns (CompletedProcess, summary dict or None)."""
    args = run_argv(script, k6=k6_bin, quiet=True, out=[out] if out else [], summary_export=summary)
    e = dict(os.environ, K6_NO_USAGE_REPORT="true", **(env or {}))
    p = subprocess.run(args, env=e, text=True, capture_output=True, timeout=timeout)
    data = json.loads(Path(summary).read_text()) if summary and Path(summary).exists() else None
    return p, data


# Tests that assert behaviour (counts, reports, exit causes), not latency,
# which a busy 2-core machine pushes past the scenarios' default 100 ms:
# latency figures belong to the benchmarks (docs/benchmarks.md).
BEHAVIOUR_P99_MS = "60000"


def run_scenario_to_influx(stack, k6_bin, scenario, run_id, results_dir, **env):
    """A scenario against the native stack, its metrics sent to InfluxDB
    through Telegraf, its result file written to results_dir; p2p at SCALE
    0.2 and P99_MS BEHAVIOUR_P99_MS unless env says otherwise. Returns
    run_k6's (process, None)."""
    return run_k6(
        k6_bin,
        ROOT / f"k6/scenarios/{scenario}.js",
        out=stack.k6_out,
        env={
            "MQTT_URL": stack.mqtt_url,
            "RUN_ID": run_id,
            "SCALE": "0.2",
            "P99_MS": BEHAVIOUR_P99_MS,
            "RESULTS_DIR": str(results_dir),
            **env,
        },
    )


def run_p2p(k6_bin, results_dir, url, **env):
    """p2p.js against url at SCALE 0.1 for 3 s (300 messages), P99_MS
    BEHAVIOUR_P99_MS unless env says otherwise; returns (process, the run's
    result document, or None when it wrote none)."""
    run_id = f"p2p-{int(time.time() * 1000)}"
    p, _ = run_k6(
        k6_bin,
        ROOT / "k6/scenarios/p2p.js",
        env={
            "MQTT_URL": url,
            "SCALE": "0.1",
            "DURATION": "3s",
            "P99_MS": BEHAVIOUR_P99_MS,
            "RESULTS_DIR": str(results_dir),
            "RUN_ID": run_id,
            **env,
        },
        timeout=180,
    )
    f = Path(results_dir) / f"{run_id}.json"
    return p, (json.loads(f.read_text()) if f.exists() else None)


@contextlib.contextmanager
def project_mosquitto(tmp):
    """Debian's mosquitto with brokers/mosquitto/mosquitto.conf, its plain
    listener moved to a free loopback port (as scripts/stack.sh does) and
    its TLS and WebSocket listeners left out (they need the stack's TLS
    files; tests/scenarios/test_tls.py and test_websocket.py run them through
    scripts/stack.sh), logging to tmp/mosquitto.log; yields (port, log path)."""
    assert shutil.which("mosquitto") and shutil.which("mosquitto_sub"), "run scripts/setup/debian.sh"
    port = free_port()
    conf = (ROOT / "brokers/mosquitto/mosquitto.conf").read_text()
    tls_and_ws = (
        r"^(listener (8883|8884|8083)|(certfile|keyfile|cafile|require_certificate|protocol|socket_domain) .*)\n"
    )
    conf, n = re.subn(tls_and_ws, "", conf, flags=re.M)
    assert n == 11, n
    text, n = re.subn(r"^listener 1883$", f"listener {port} 127.0.0.1", conf, flags=re.M)
    assert n == 1
    (tmp / "mosquitto.conf").write_text(text)
    log = tmp / "mosquitto.log"
    with log.open("w") as out:
        proc = subprocess.Popen(["mosquitto", "-c", str(tmp / "mosquitto.conf")], stdout=out, stderr=out)
    try:

        def up():
            assert proc.poll() is None, log.read_text()
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        assert wait_until(up, timeout=10)
        yield port, log
    finally:
        proc.terminate()
        proc.wait(10)


class ConnectionCounter:
    """A TCP listener standing in for a broker: it counts connection attempts,
    so a test can prove that nothing connected."""

    def __init__(self):
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", free_port()))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                self.accepted.append(self.sock.accept())
            except OSError:
                pass

    def close(self):
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def throttled_k6(tmp_path):
    """A wrapper that runs k6 in a cgroup (v1 cpu controller) capped at 2%
    of one core: a generator that cannot keep up, or only late, whatever
    the broker."""
    root = Path("/sys/fs/cgroup/cpu")
    if not os.access(root, os.W_OK):
        pytest.skip("no writable cgroup cpu controller here")
    group = root / f"mqttbench-test-{os.getpid()}"
    wrapper = tmp_path / "throttled"
    wrapper.write_text(
        "#!/bin/sh\nset -e\n"
        f"mkdir -p {group}\necho 100000 > {group}/cpu.cfs_period_us\necho 2000 > {group}/cpu.cfs_quota_us\n"
        f'echo $$ > {group}/tasks\nexec "$@"\n'
    )
    wrapper.chmod(0o755)
    yield str(wrapper)
    subprocess.run(["rmdir", str(group)], check=False)


@pytest.fixture
def connection_counter():
    c = ConnectionCounter()
    yield c
    c.close()
