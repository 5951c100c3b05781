"""Brokers a test starts on loopback itself: a real Mosquitto of its own
configuration, a fresh one per test (its $SYS counters count that test's
messages only), the mochi-mqtt test broker of k6/extension/internal/testbroker,
and a listener that only counts connections. A pytest plugin of conftest.py."""

import contextlib
import re
import shutil
import socket
import subprocess
import time

import pytest

from conftest import ROOT, free_port, loopback_port, wait_until
from mqttbench.brokers import counters as broker_counters


@contextlib.contextmanager
def mosquitto(conf, port, text):
    """Another real Mosquitto on loopback, configured by text; yields its URL."""
    conf.write_text(text)
    proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:

        def up():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        assert wait_until(up, timeout=10)
        yield f"mqtt://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def mochi_broker(tmp, port, *flags):
    """The test-only mochi-mqtt broker (k6/extension/internal/testbroker),
    built into tmp and run on port with flags; yields its URL."""
    binary = tmp / "testbroker"
    subprocess.run(
        ["go", "build", "-o", str(binary), "./internal/testbroker/cmd/testbroker"],
        cwd=ROOT / "k6/extension",
        check=True,
    )
    proc = subprocess.Popen([str(binary), "-port", str(port), *flags])
    try:
        assert wait_until(lambda: listening(port), timeout=10), "testbroker did not start"
        yield f"mqtt://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def listening(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def fresh_mosquitto(tmp_path):
    """A Mosquitto of its own, so that its $SYS counters count this test's
    messages only; $SYS every second, no connection cap."""
    port = loopback_port(11895)
    text = f"listener {port} 127.0.0.1\nallow_anonymous true\nsys_interval 1\nmax_connections -1\n"
    with mosquitto(tmp_path / "m.conf", port, text) as url:
        yield url, port


def sys_counters(port):
    """Mosquitto's own PUBLISH counts, after its next $SYS update."""
    time.sleep(2.5)
    values, _ = broker_counters.from_sys("mosquitto", "127.0.0.1", port)
    return {k: int(v) for k, v in values.items()}


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
def connection_counter():
    c = ConnectionCounter()
    yield c
    c.close()
