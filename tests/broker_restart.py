"""A run through a broker restart, as the restart tests make it: the real k6
build runs a scenario against a Mosquitto of the test's own config; a
given time after the first message arrives, the broker gets a signal,
stays down a while and starts again with the same config."""

import os
import signal as signals
import socket
import subprocess
import time

from conftest import wait_until
from mqttbench.k6.command import run_argv


def mosquitto(conf, port):
    """Mosquitto with conf, once it accepts on 127.0.0.1:port."""
    proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def up():
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    assert wait_until(up, timeout=10), "mosquitto did not start"
    return proc


def k6_through_a_restart(k6_bin, script, env, conf, port, *, after_s, down_s, signal=signals.SIGKILL):
    """(stdout, stderr) of k6 running script with env (over os.environ)
    while the broker is stopped with signal after_s seconds after the first
    message (while messages flow) and started again down_s seconds later."""
    broker = mosquitto(conf, port)
    k6 = subprocess.Popen(
        run_argv(script, k6=k6_bin, quiet=True),
        env={**os.environ, "K6_NO_USAGE_REPORT": "true", **env},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = subprocess.run(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "test/#", "-C", "1", "-W", "60"],
            capture_output=True,
        )
        assert first.returncode == 0, "no message was published"
        time.sleep(after_s)
        broker.send_signal(signal)
        broker.wait(10)
        time.sleep(down_s)
        broker = mosquitto(conf, port)
        return k6.communicate(timeout=180)
    finally:
        k6.kill()
        broker.terminate()
        broker.wait(10)
