"""The stack under compose: compose.yaml's observability core and the
broker's profile (named as its folder), published on 127.0.0.1 only.
Secrets live in the stack's own volume, read through its init service."""

import json
import os
import subprocess

from mqttbench import RESULTS, ROOT, settings
from mqttbench.brokers import facts as broker_facts
from mqttbench.k6.command import run_argv
from mqttbench.stack.base import Service, Stack, StackError, log
from mqttbench.stack.impairment import Impairment


class ComposeStack(Stack):
    kind = "compose"

    def __init__(self, broker=None, environ=None):
        self.env = settings.settings(environ)
        super().__init__(broker or self.env.get("BROKER") or broker_facts.default_broker())

    def _dc(self):
        """docker compose on this project: our pinned build where
        scripts/setup.sh made it, else the installed plugin."""
        binary = settings.compose_bin(self.env)
        dc = [str(binary)] if os.access(binary, os.X_OK) else ["docker", "compose"]
        return [*dc, "--project-directory", str(ROOT)]

    def _environ(self, **extra):
        env = {**os.environ, **self.env, **extra}
        if "MQTTBENCH_RESULTS" in env:
            # compose reads a relative folder from the project's: the user meant theirs.
            env["MQTTBENCH_RESULTS"] = str(RESULTS)
        return env

    def compose(self, *args, capture=True, check=True):
        r = subprocess.run([*self._dc(), *args], env=self._environ(), text=True, capture_output=capture,
                           check=False)  # fmt: skip
        if check and r.returncode:
            why = (r.stderr or "").strip()
            raise StackError(f"docker compose {' '.join(args)} failed (exit {r.returncode}): {why}")
        return r

    def check_profile(self):
        """compose.yaml has the broker's profile with a service of its name."""
        services = self.compose("--profile", self.broker, "config", "--services").stdout.split()
        if self.broker not in services:
            raise StackError(
                f"brokers/{self.broker} has no service {self.broker} in the profile {self.broker} of compose.yaml: "
                "add its services there (or run it natively: --native)"
            )

    def up(self):
        self.check_profile()
        log(f"starting the {self.broker} profile and waiting until healthy")
        self.compose("--profile", self.broker, "up", "-d", "--wait", capture=False)

    def ensure(self):
        """compose's own up: it starts what is missing and waits until healthy,
        leaving running containers as they are."""
        self.up()

    def down(self):
        self.compose("--profile", self.broker, "down", capture=False)

    def stop_broker(self):
        """The broker's services stopped (its data kept); the core stays up. False when compose failed."""
        r = self.compose("--profile", self.broker, "stop", self.broker, f"telegraf-{self.broker}", check=False)
        return r.returncode == 0

    def status(self, service=None):
        r = self.compose("--profile", self.broker, "ps", "--format", "json", check=False)
        running = {}
        for line in r.stdout.splitlines():
            c = json.loads(line)
            if c.get("State") == "running":
                running[c["Service"]] = c["ID"]
        names = [service] if service else sorted(set(running) | {"influxdb", "telegraf", self.broker})
        return [Service(n, running.get(n)) for n in names]

    def running_broker(self, services=None):
        up = {s.name for s in services or self.status() if s.running}
        found = [b for b in broker_facts.names() if b in up]
        return found[0] if found else None

    def secret(self, name):
        """A secret the stack's init service generated (influx_token, ...)."""
        r = self.compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "cat", "init",
                         f"/run/secrets/mqtt-bench/{name}", check=False)  # fmt: skip
        return r.stdout.strip() if r.returncode == 0 else None

    def influx(self):
        token = self.secret("influx_token") or os.environ.get("INFLUX_TOKEN")
        return self._influx(f"http://127.0.0.1:{self.env['INFLUXDB_PORT']}", token)

    def broker_url(self, scheme="mqtt"):
        port = {"mqtt": "MQTT_PORT", "mqtts": "MQTTS_PORT", "ws": "WS_PORT"}[scheme]
        return f"{scheme}://127.0.0.1:{self.env[port]}" + ("/mqtt" if scheme == "ws" else "")

    def broker_cpus(self):
        cpus = self.env["BROKER_CPUS"]
        return float(cpus), f"broker container CPU as % of its limit BROKER_CPUS={cpus}"

    # -- what a run on this stack needs
    # k6 runs in its container, whose source address is its own.
    source_addresses = False

    def prepare(self, impair=""):
        """Nothing to build: compose runs the images (and builds k6's)."""

    def image(self):
        """The image the broker's running container was created from, as docker
        inspect reports it (an override may name another than .env's)."""
        ids = self.compose("--profile", self.broker, "ps", "-q", self.broker, check=False).stdout.split()
        if not ids:
            return ""
        r = subprocess.run(["docker", "inspect", "--format", "{{.Config.Image}}", ids[0]],
                           capture_output=True, text=True, check=False)  # fmt: skip
        return r.stdout.strip()

    def run_env(self, tls=False):
        """The version: the caller's, else the broker's answer to the run
        (compose's k6 service asks it), else its image."""
        env = {
            "BROKER_VERSION": os.environ.get("BROKER_VERSION", ""),
            "BROKER_IMAGE": self.image(),
            **broker_facts.capabilities_env(self.broker),
            **broker_facts.deviations_env(self.broker),
        }
        if tls:
            env["MQTT_URL"] = "mqtts://broker:8883"
        return env

    def impairment(self, spec):
        """The core's toxiproxy service gets the profile (its TOXIPROXY_LISTEN,
        TOXIPROXY_UPSTREAM and TOXIPROXY_API, from compose.yaml and any
        override), as the k6 container reaches it."""
        config = json.loads(self.compose("config", "--format", "json").stdout)
        env = config["services"].get("toxiproxy", {}).get("environment") or {}
        if not env.get("TOXIPROXY_LISTEN"):
            raise StackError("--impair under compose needs the toxiproxy service of compose.yaml "
                             "(with TOXIPROXY_LISTEN and TOXIPROXY_UPSTREAM)")  # fmt: skip
        i = Impairment(spec, f"http://127.0.0.1:{self.env['TOXIPROXY_PORT']}")
        if not i.answers():
            raise StackError(f"--impair: the toxiproxy service does not answer at {i.api} "
                             "(docker compose ps toxiproxy; TOXIPROXY_PORT)")  # fmt: skip
        # A proxy an earlier run left (it was killed before its cleanup) goes first.
        i.close()
        i.apply(env["TOXIPROXY_LISTEN"], env["TOXIPROXY_UPSTREAM"], env.get("TOXIPROXY_API") or "http://toxiproxy:8474")
        return i

    def _run_prefix(self, env):
        # Each variable by name: compose takes its value from the environment, not argv.
        return [*self._dc(), "run", "--rm", *(a for n in env for a in ("-e", n))]

    def k6_command(self, scenario, run_env, **options):
        argv = run_argv(f"{scenario}.js", k6="k6", out=[self.k6_out()], **options)
        return [*self._run_prefix(run_env), *argv], self._environ(**run_env)

    def merge_command(self, run_id):
        return [*self._run_prefix({}), "k6", "x", "mqtt-merge", run_id, "--dir", "/results"], self._environ()

    def k6_out(self):
        """The k6 service's own output, as this project's compose files resolve
        it (an override that moves Telegraf's listener moves it too)."""
        config = json.loads(self.compose("--profile", "k6", "config", "--format", "json").stdout)
        return config["services"]["k6"]["environment"]["K6_OUT"]
