"""One service of the running native stack: restart, stop, start, status."""

import subprocess

from conftest import ROOT, TEST_PORTS
from host_processes import ended


def broker_answers(port):
    r = subprocess.run(
        ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "$SYS/broker/version", "-C", "1", "-W", "3"],
        capture_output=True,
        text=True,
    )
    return r.returncode == 0


def test_restart_uses_the_settings_up_recorded(stack):
    """restart SERVICE starts it as `up` did, even from a shell without the
    stack's settings: here no port variables at all (defaults 1883, 8086...)."""
    old = stack.pids()["broker"]
    bare = {k: v for k, v in stack.env.items() if k not in TEST_PORTS and not k.startswith("TELEGRAF_")}
    r = subprocess.run(
        [str(ROOT / "scripts/stack.sh"), "restart", "broker"], env=bare, text=True, capture_output=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    new = stack.pids()["broker"]
    assert new != old and ended(old), "the old broker must be gone"
    assert broker_answers(TEST_PORTS["MQTT_PORT"]), "the restarted broker must listen on the port up used"
    st = stack.run("status", "broker", check=False)
    assert st.returncode == 0 and f"running (pid {new})" in st.stdout, st.stdout + st.stderr


def test_status_of_one_service(stack):
    r = stack.run("stop", "node_exporter", check=False)
    try:
        assert r.returncode == 0, r.stderr
        one = stack.run("status", "node_exporter", check=False)
        assert one.returncode == 3 and "node_exporter  stopped" in one.stdout, one.stdout
        assert stack.run("status", "broker", check=False).returncode == 0, "another service's status is its own"
        every = stack.run("status", check=False)
        assert every.returncode == 3 and "node_exporter  stopped" in every.stdout
    finally:
        r = stack.run("start", "node_exporter", check=False)
    assert r.returncode == 0, r.stderr
    assert stack.run("status", "node_exporter", check=False).returncode == 0
    assert stack.run("status", check=False).returncode == 0


def test_start_refuses_a_running_service(stack):
    r = stack.run("start", "telegraf", check=False)
    assert r.returncode != 0 and "telegraf is already running" in r.stderr and "restart telegraf" in r.stderr


def test_service_commands_need_a_known_service(stack):
    r = stack.run("restart", check=False)
    assert r.returncode == 2 and "restart|stop|start SERVICE" in r.stderr
    r = stack.run("restart", "mosquitto", check=False)
    assert r.returncode != 0 and "unknown service 'mosquitto'" in r.stderr
