"""The native stack on loopback: influxd, node_exporter, a broker and
Telegraf, using the same config files as compose, each process started,
recorded and stopped by processes.py. `up` records its settings in
$STATE/stack.env, so that restart/start SERVICE starts a service the same
way (no secrets there)."""

import os
import shlex
import subprocess
import time
import urllib.request

from mqttbench import RESULTS, ROOT, settings
from mqttbench.brokers import facts as broker_facts
from mqttbench.brokers import native as broker_native
from mqttbench.brokers import version as broker_version
from mqttbench.k6.command import binary, run_argv
from mqttbench.stack import secrets as stack_secrets
from mqttbench.stack.base import Service, Stack, StackError, log, warn
from mqttbench.stack.impairment import Impairment
from mqttbench.stack.native_services import NativeServices
from mqttbench.stack.ports import holder
from mqttbench.stack.processes import Processes

SERVICES = ("influxd", "node_exporter", "broker", "telegraf")
# What `up` ran with (no secrets here).
SETTINGS = (
    "BROKER MQTT_PORT MQTTS_PORT MTLS_PORT WS_PORT INFLUXDB_PORT TELEGRAF_K6_PORT NODE_EXPORTER_PORT INFLUXDB_ORG "
    "INFLUXDB_BUCKET INFLUXDB_RETENTION TELEGRAF_INTERVAL TELEGRAF_FLUSH_INTERVAL TELEGRAF_HOSTNAME "
    "NODE_EXPORTER_FLAGS MQTTBENCH_SECRETS"
).split()


class NativeStack(NativeServices, Stack):
    kind = "native"

    def __init__(self, broker=None, environ=None):
        self.env = settings.settings(environ)
        self.state = settings.state(self.env)
        self.procs = Processes(self.state)
        super().__init__(broker or self.env.get("BROKER") or broker_facts.default_broker())
        self.env["BROKER"] = self.broker

    # -- what the other parts ask of a stack
    def running_broker(self, services=None):
        if not all(s.running for s in services or self.status()):
            return None
        try:
            return (self.state / "broker").read_text().strip()
        except OSError:
            return None

    def influx(self):
        """The stack's own token (its secrets file), else the caller's."""
        token = stack_secrets.read(stack_secrets.secrets_file(self.env)).get("INFLUX_TOKEN")
        return self._influx(f"http://127.0.0.1:{self.env['INFLUXDB_PORT']}", token or os.environ.get("INFLUX_TOKEN"))

    def ensure(self):
        """Up, and its InfluxDB takes the token of its secrets file."""
        super().ensure()
        where = stack_secrets.secrets_file(self.env)
        token = stack_secrets.read(where).get("INFLUX_TOKEN")
        if not token:
            raise StackError(f"INFLUX_TOKEN is missing from {where}: scripts/stack.sh down, then remove "
                             f"{self.state / 'influxdb'} and rerun (a new token is generated)")  # fmt: skip
        request = urllib.request.Request(f"http://127.0.0.1:{self.env['INFLUXDB_PORT']}/api/v2/buckets",
                                         headers={"Authorization": f"Token {token}"})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=10):
                pass
        except OSError:
            raise StackError(f"InfluxDB at 127.0.0.1:{self.env['INFLUXDB_PORT']} refuses INFLUX_TOKEN from {where}: "
                             "check scripts/stack.sh status") from None  # fmt: skip

    def broker_url(self, scheme="mqtt"):
        port = {"mqtt": "MQTT_PORT", "mqtts": "MQTTS_PORT", "ws": "WS_PORT"}[scheme]
        return f"{scheme}://127.0.0.1:{self.env[port]}" + ("/mqtt" if scheme == "ws" else "")

    def k6_out(self):
        return f"influxdb=http://127.0.0.1:{self.env['TELEGRAF_K6_PORT']}/k6"

    def broker_cpus(self):
        return float(os.cpu_count()), f"broker process CPU as % of the host's {os.cpu_count()} cores"

    # -- what a run on this stack needs
    # k6 instances on this host, each with a loopback source address of its own.
    source_addresses = True

    def setup_steps(self, impair=""):
        """The setup steps (scripts/setup/) a run uses, in setup.sh's order:
        Debian's packages (the broker's [native] debian among them), Python
        for the report, Telegraf, k6, InfluxDB, the broker's own build if it
        has one (HiveMQ CE), Toxiproxy for --impair. Not compose or
        staticcheck: a first run builds only these."""
        steps = ["debian", "python", "telegraf", "k6", "influxd"]
        if os.access(ROOT / f"scripts/setup/{self.broker}.sh", os.X_OK):
            steps.append(self.broker)
        return steps + (["toxiproxy"] if impair else [])

    def prepare(self, impair=""):
        env = {**os.environ, "SETUP_BROKER": self.broker}
        done = subprocess.run([str(ROOT / "scripts/setup.sh"), *self.setup_steps(impair)], env=env, check=False)
        if done.returncode:
            raise StackError(f"the setup of {self.broker}'s native run failed (scripts/setup.sh, above)")

    def run_env(self, tls=False):
        """MQTT_URL, the broker's version and what it can do, for a run."""
        # BROKER_VERSION given wins: a build whose $SYS does not tell it apart (History: per version).
        version, source = os.environ.get("BROKER_VERSION", ""), "BROKER_VERSION"
        if not version:
            version = broker_version.asked("127.0.0.1", self.env["MQTT_PORT"])
            source = f"its version_topic (brokers/{self.broker}/broker.toml)"
        if not version:
            # A broker with no version_topic in its broker.toml (HiveMQ, RabbitMQ): its [native] version.
            version, source = broker_native.version_of(self.broker) or "", "its [native] version command"
        return {
            "MQTT_URL": self.broker_url("mqtts" if tls else "mqtt"),
            "BROKER_VERSION": version,
            "BROKER_VERSION_SOURCE": source,
            "RESULTS_DIR": str(RESULTS / "raw"),
            **broker_facts.capabilities_env(self.broker, native=True),
            **broker_facts.deviations_env(self.broker),
        }

    def impairment(self, spec):
        port, mqtt_port = self.env["TOXIPROXY_PORT"], self.env["TOXIPROXY_MQTT_PORT"]
        i = Impairment(spec, f"http://127.0.0.1:{port}")
        try:
            i.start_server(self.state, port, mqtt_port)
            i.apply(f"127.0.0.1:{mqtt_port}", f"127.0.0.1:{self.env['MQTT_PORT']}", i.api)
        except BaseException:
            i.close()
            raise
        return i

    def k6_command(self, scenario, run_env, **options):
        """The command line of one k6 process (options: run_argv's) and its
        environment, with run_env: the run's own variables."""
        argv = run_argv(ROOT / f"k6/scenarios/{scenario}.js", out=[self.k6_out()], **options)
        return argv, {**os.environ, **run_env}

    def merge_command(self, run_id):
        return [binary(), "x", "mqtt-merge", run_id, "--dir", str(RESULTS / "raw")], dict(os.environ)

    # -- up, down, status
    def check_broker(self):
        try:
            broker_native.native(self.broker)
        except SystemExit as e:
            raise StackError(str(e)) from None

    def port_free(self, variable):
        port = self.env[variable]
        if found := holder(int(port)):
            raise StackError(
                f"port {port} ({variable}) is held by {found}; or choose another port, "
                f"e.g. {variable}={int(port) + 10000} scripts/stack.sh up"
            )

    def up(self):
        self.check_broker()
        for built in (settings.influxd_bin(self.env), settings.telegraf_bin(self.env)):
            if not os.access(built, os.X_OK):
                raise StackError(f"{built} is missing: run scripts/setup.sh first")
        running = [s for s in SERVICES if self.procs.ours(s).pid]
        if running:
            raise StackError(
                f"the native stack is already running ({' '.join(running)}): "
                "scripts/stack.sh status, or scripts/stack.sh down first"
            )
        for v in ("INFLUXDB_PORT", "TELEGRAF_K6_PORT", "NODE_EXPORTER_PORT", *broker_native.PORTS):
            self.port_free(v)
        self.secrets = stack_secrets.ensure(self.env)
        self.save_settings()
        for s in SERVICES:
            getattr(self, f"start_{s}")()
        (self.state / "broker").write_text(f"{self.broker}\n")
        # Started here, by hand or by bench.sh: no comparison's to switch any
        # more (mqttbench/compare marks the stacks it started).
        (self.state / "compared").unlink(missing_ok=True)
        e = self.env
        log(
            f"native stack up: broker {self.broker} on {self.broker_url()} ({self.broker_url('mqtts')}, mutual TLS "
            f"mqtts://127.0.0.1:{e['MTLS_PORT']}, {self.broker_url('ws')}; TLS files in {self.state / 'tls'}), "
            f"InfluxDB http://127.0.0.1:{e['INFLUXDB_PORT']}, k6 output {self.k6_out()}"
        )

    def down(self):
        stopped = []
        # Telegraf first, so it flushes what it holds while InfluxDB still runs.
        for s in ("telegraf", "broker", "node_exporter", "influxd"):
            if self.procs.stop(s, warn):
                stopped.append(s)
            if s == "broker":
                self.broker_stopped()
        log(f"stopped: {' '.join(stopped) or 'nothing was running'}; data kept in {self.state}")

    def status(self, service=None):
        names = [self.check_service(service)] if service else list(SERVICES)
        return [Service(s, (o := self.procs.ours(s)).pid, o.why) for s in names]

    def check_service(self, name):
        if name not in SERVICES:
            raise StackError(f"unknown service '{name}' (known: {' '.join(SERVICES)})")
        return name

    def service(self, command, name):
        """restart, stop or start one service, with the settings of the last up."""
        self.check_service(name)
        if command != "start":
            log(f"{name} stopped" if self.procs.stop(name, warn) else f"{name} was not running")
            if name == "broker":
                self.broker_stopped()
        if command == "stop":
            return
        if pid := self.procs.ours(name).pid:
            raise StackError(f"{name} is already running (pid {pid}): scripts/stack.sh restart {name}")
        self.load_settings()
        self.check_broker()
        self.secrets = stack_secrets.ensure(self.env)
        getattr(self, f"start_{name}")()
        log(f"{name} started (pid {self.procs.pid_of(name)}) with the settings in {self.state / 'stack.env'}")

    # -- settings of the last up
    def save_settings(self):
        self.state.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{v}={shlex.quote(self.env.get(v, ''))}\n" for v in SETTINGS)
        (self.state / "stack.env").write_text(text)

    def load_settings(self):
        """The settings of the last `up`, over the caller's environment."""
        path = self.state / "stack.env"
        if not path.exists():
            raise StackError(
                f"the native stack in {self.state} was never started (no {path}): scripts/stack.sh up first"
            )
        self.env |= settings.env_file(path)
        self.broker = self.env["BROKER"]

    # -- the services
    def wait_for(self, name, seconds, check):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if check():
                log(f"{name} is healthy")
                return
            if not self.procs.ours(name).pid:
                raise StackError(f"{name} exited during start; log: {self.procs.log(name)}", tail=self.procs.log(name))
            time.sleep(0.1)
        raise StackError(
            f"{name} did not become healthy in {seconds}s; log: {self.procs.log(name)}", tail=self.procs.log(name)
        )

    def environ(self, **extra):
        """The services' environment: the caller's, the settings, then extra."""
        return {**os.environ, **self.env, **extra}
