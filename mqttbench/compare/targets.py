"""compare.sh's brokers already running (--target NAME=URL): where each is,
whether it answers, and the watch on its process on this host."""

import os
import re
import socket
import subprocess
import tempfile
from pathlib import Path

from mqttbench import ROOT, settings
from mqttbench.outcome import bad, log
from mqttbench.stack import open_stack

URL_RE = r"(mqtt|tcp|mqtts|ssl|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(:([0-9]{1,5}))?/?"


def watched_pid(t):
    """The pid of a target's process on this host (pid=P or process=NAME), for procstat."""
    kind, _, what = t.watch.partition("=")
    if not re.match(r"[a-z]+://(127\.[0-9.]+|localhost|\[::1\])(:|/|$)", t.url):
        raise bad(f"--target {t.name}: {kind}= watches a process on this host, and {t.url} is not on loopback: "
                  f"leave it out (its host's own Telegraf can report it with BROKER={t.name})")  # fmt: skip
    if kind == "pid":
        if not (what.isdigit() and Path(f"/proc/{what}").is_dir()):
            raise bad(f"--target {t.name}: {t.watch} is no running process (pid=N, e.g. pid=$(pgrep -x mosquitto))")
        pids = [what]
    elif kind == "process" and what:
        pids = subprocess.run(["pgrep", "-x", "--", what], capture_output=True, text=True).stdout.split()
        if not pids:
            raise bad(f"--target {t.name}: no process is named '{what}' (process=NAME is the exact name pgrep -x "
                      "finds)")  # fmt: skip
        if len(pids) > 1:
            raise bad(f"--target {t.name}: {len(pids)} processes are named '{what}' (pids {' '.join(pids)}): give "
                      "the one with pid=N")  # fmt: skip
    else:
        raise bad(f"--target {t.name}: after the URL comes pid=N or process=NAME (the broker's process, for its CPU "
                  f"and RSS); got '{t.watch}'")  # fmt: skip
    if open_stack("native").running_broker() is None:
        raise bad(f"--target {t.name}: {t.watch} is measured by Telegraf into the native stack's InfluxDB, and the "
                  "native stack is not running: scripts/stack.sh up first")  # fmt: skip
    return int(pids[0])


def host_port(url):
    """(host, port) of a broker URL (default ports 1883, TLS 8883)."""
    m = re.fullmatch(URL_RE, url)
    host = m[2].strip("[]")
    return host, int(m[4]) if m[4] else (1883 if m[1] in ("mqtt", "tcp") else 8883)


def unreachable(host, port):
    """Why a TCP connect within 5 s fails, or None when it succeeds."""
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as e:
        return e.strerror or str(e) or "no answer in 5 s"
    return None


class Watcher:
    """A Telegraf of its own with the native stack's procstat input
    (telegraf/native/procstat.conf) on a target's pid, into the native
    stack's InfluxDB at its intervals, the points tagged broker=NAME and with
    the run's id (watched.conf: the report reads them by it, as NAME may be
    the stack's own tag); stopped (it writes what it holds as it exits) by
    close()."""

    def __init__(self, name, pid, run_id, out, logf):
        (out / "logs" / f"{name}.pid").write_text(f"{pid}\n")
        stack = open_stack("native")
        stack.load_settings()
        influx = stack.influx()
        env = {**os.environ, **stack.env, "INFLUX_URL": influx.url, "INFLUX_ORG": influx.org,
               "INFLUX_BUCKET": influx.bucket, "INFLUX_TOKEN": influx.token or "", "BROKER": name,
               "BROKER_PIDFILE": str(out / "logs" / f"{name}.pid"), "TELEGRAF_BUFFER_DIR": tempfile.mkdtemp(),
               "WATCHED_RUN_ID": run_id}  # fmt: skip
        conf = ROOT / "telegraf"
        with open(logf, "a") as f:
            self.proc = subprocess.Popen(
                [str(settings.telegraf_bin(env)), "--config", str(conf / "telegraf.conf"),
                 "--config", str(conf / "native/procstat.conf"), "--config", str(conf / "native/watched.conf")],
                env=env, stdout=f, stderr=subprocess.STDOUT,
            )  # fmt: skip
        watcher = f"Telegraf's procstat (pid {self.proc.pid})"
        log(f"{name}: its process (pid {pid}) watched by {watcher}, tagged broker={name}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
