"""The native stack's four services, one method each: what up, start and
restart run. Each checks its ports free, starts its process and waits
until it answers."""

import json
import os
import resource
import shlex
import subprocess
import urllib.request

from mqttbench import ROOT, settings
from mqttbench.brokers import facts as broker_facts
from mqttbench.brokers import native as broker_native
from mqttbench.stack import secrets as stack_secrets
from mqttbench.stack.base import StackError, warn


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


def raise_open_files():
    """10K+ connections need file descriptors: the soft limit raised to the
    hard one, which the broker and k6 inherit; returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


class NativeServices:
    """Mixed into NativeStack: self.env (the settings), self.state, self.procs,
    self.port_free, self.wait_for and self.environ are its."""

    def influx_setup(self):
        """The one initialisation path of both stacks (compose runs it in its
        `init` service). The token and password reach it as pipes, never argv."""
        fds, files = [], {}
        for name in ("INFLUX_TOKEN", "INFLUXDB_ADMIN_PASSWORD"):
            r, w = os.pipe()
            os.write(w, (self.secrets[name] + "\n").encode())
            os.close(w)
            fds.append(r)
            files[f"{name}_FILE"] = f"/dev/fd/{r}"
        env = self.environ(INFLUX_URL=f"http://127.0.0.1:{self.env['INFLUXDB_PORT']}", **files)
        try:
            done = subprocess.run([str(ROOT / "scripts/init/influxdb.sh")], env=env, pass_fds=fds, check=False)
        finally:
            for fd in fds:
                os.close(fd)
        if done.returncode:
            raise StackError(
                f"InfluxDB setup failed (log: {self.procs.log('influxd')}); a token mismatch means: restore "
                f"INFLUX_TOKEN in {stack_secrets.secrets_file(self.env)}, "
                f"or remove {self.state / 'influxdb'} to start afresh"
            )

    def start_influxd(self):
        self.port_free("INFLUXDB_PORT")
        data = self.state / "influxdb"
        data.mkdir(parents=True, exist_ok=True)
        port = self.env["INFLUXDB_PORT"]
        self.procs.start("influxd", [
            str(settings.influxd_bin(self.env)), "--bolt-path", str(data / "influxd.bolt"),
            "--engine-path", str(data / "engine"), "--sqlite-path", str(data / "influxd.sqlite"),
            "--http-bind-address", f"127.0.0.1:{port}", "--reporting-disabled", "--log-level", "warn",
        ], self.environ())  # fmt: skip
        self.wait_for("influxd", 30, lambda: http_ok(f"http://127.0.0.1:{port}/health"))
        self.influx_setup()

    def start_node_exporter(self):
        self.port_free("NODE_EXPORTER_PORT")
        port = self.env["NODE_EXPORTER_PORT"]
        # The collectors the dashboards use (NODE_EXPORTER_FLAGS in .env, shared with compose).
        flags = self.env.get("NODE_EXPORTER_FLAGS", "").split()
        self.procs.start(
            "node_exporter",
            ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{port}", *flags],
            self.environ(),
        )
        self.wait_for("node_exporter", 10, lambda: http_ok(f"http://127.0.0.1:{port}/metrics"))

    def start_broker(self):
        for v in broker_native.PORTS:
            self.port_free(v)
        # The CA, server and client certificates (kept once made): the
        # scenarios' TLS_CA, TLS_CERT and TLS_KEY default to them.
        subprocess.run(["sh", str(ROOT / "scripts/init/tls.sh"), str(self.state / "tls")], check=True)
        raise_open_files()
        # The command and its readiness checks, from [native] of its broker.toml.
        try:
            plan = broker_native.planned(self.broker, self.state, self.env)
        except SystemExit as e:
            raise StackError(f"cannot run broker {self.broker} natively: {e}") from None
        # Its own ports beyond the four (an Erlang node's distribution and epmd, a metrics endpoint),
        # recorded with the settings, so that `restart broker` binds the same ports.
        for var, port in plan["ports"].items():
            self.env[var] = port
            self.port_free(var)
            with (self.state / "stack.env").open("a") as f:
                f.write(f"{var}={port}\n")
        # What Telegraf and `down` need of this plan, whoever runs them later.
        plan_file = {"metrics_url": plan["metrics_url"], "stop": plan["stop"]}
        (self.state / "broker.plan.json").write_text(json.dumps(plan_file, indent=1) + "\n")
        self.procs.start("broker", plan["command"], self.environ(**plan["env"]))
        for check in plan["ready"]:
            self.wait_for("broker", plan["ready_seconds"], lambda c=check: subprocess.run(
                c, capture_output=True, check=False, env=self.environ()).returncode == 0)  # fmt: skip

    def broker_plan(self):
        """metrics_url and the stop commands start_broker recorded."""
        path = self.state / "broker.plan.json"
        return json.loads(path.read_text()) if path.exists() else {"metrics_url": "", "stop": []}

    def broker_stopped(self):
        """Runs what the broker's [native] stop says once it has stopped (a
        daemon it started, such as epmd, outlives it)."""
        stop = self.broker_plan()["stop"]
        if not stop:
            return
        self.procs.logs.mkdir(parents=True, exist_ok=True)
        with self.procs.log("broker").open("a") as out:
            for c in stop:
                if subprocess.run(c, stdout=out, stderr=out, env=self.environ(), check=False).returncode:
                    warn(f"broker stop step failed: {shlex.join(c)}")

    def start_telegraf(self):
        self.port_free("TELEGRAF_K6_PORT")
        e = self.env
        buffer = self.state / "telegraf-buffer"
        buffer.mkdir(parents=True, exist_ok=True)
        env = self.environ(
            INFLUX_URL=f"http://127.0.0.1:{e['INFLUXDB_PORT']}", INFLUX_ORG=e["INFLUXDB_ORG"],
            INFLUX_BUCKET=e["INFLUXDB_BUCKET"], INFLUX_TOKEN=self.secrets["INFLUX_TOKEN"],
            MQTT_SYS_URL=f"tcp://127.0.0.1:{e['MQTT_PORT']}", BROKER_PIDFILE=str(self.procs.pids / "broker.pid"),
            NODE_EXPORTER_URL=f"http://127.0.0.1:{e['NODE_EXPORTER_PORT']}/metrics",
            BROKER_METRICS_URL=self.broker_plan()["metrics_url"],
            TELEGRAF_K6_LISTEN=f"127.0.0.1:{e['TELEGRAF_K6_PORT']}", TELEGRAF_BUFFER_DIR=str(buffer),
        )  # fmt: skip
        metrics = broker_facts.load(self.broker)["metrics"]["telegraf"]
        self.procs.start("telegraf", [
            str(settings.telegraf_bin(self.env)), "--config", str(ROOT / "telegraf/telegraf.conf"),
            "--config-directory", str(ROOT / "telegraf/telegraf.d"), "--config", str(ROOT / metrics),
            "--config", str(ROOT / "telegraf/native/procstat.conf"),
        ], env)  # fmt: skip
        self.wait_for("telegraf", 20, lambda: http_ok(f"http://127.0.0.1:{e['TELEGRAF_K6_PORT']}/ping"))
