"""The stack under compose: compose.yaml's observability core and the
broker's profile (named as its folder), published on 127.0.0.1 only.
Secrets live in the stack's own volume, read through its init service."""

import json
import os
import subprocess

from mqttbench import ROOT, settings
from mqttbench.brokers import facts as broker_facts
from mqttbench.stack.base import Service, Stack, StackError, log


class ComposeStack(Stack):
    kind = "compose"

    def __init__(self, broker=None, environ=None):
        self.env = settings.settings(environ)
        super().__init__(broker or self.env.get("BROKER") or "mosquitto")

    def compose(self, *args, capture=True, check=True):
        """docker compose on this project: our pinned build where
        scripts/setup.sh made it, else the installed plugin."""
        binary = settings.compose_bin(self.env)
        dc = [str(binary)] if os.access(binary, os.X_OK) else ["docker", "compose"]
        env = {**os.environ, **self.env}
        r = subprocess.run([*dc, "--project-directory", str(ROOT), *args], env=env, text=True,
                           capture_output=capture, check=False)  # fmt: skip
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

    def status(self, service=None):
        r = self.compose("--profile", self.broker, "ps", "--format", "json", check=False)
        running = {}
        for line in r.stdout.splitlines():
            c = json.loads(line)
            if c.get("State") == "running":
                running[c["Service"]] = c["ID"]
        names = [service] if service else sorted(set(running) | {"influxdb", "telegraf", self.broker})
        return [Service(n, running.get(n)) for n in names]

    def running_broker(self):
        up = {s.name for s in self.status() if s.running}
        found = [b for b in broker_facts.names() if b in up]
        return found[0] if found else None

    def secret(self, name):
        """A secret the stack's init service generated (influx_token, ...)."""
        r = self.compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "cat", "init",
                         f"/run/secrets/mqtt-bench/{name}", check=False)  # fmt: skip
        return r.stdout.strip() if r.returncode == 0 else None

    def influx(self):
        token = os.environ.get("INFLUX_TOKEN") or self.secret("influx_token")
        return self._influx(f"http://127.0.0.1:{self.env['INFLUXDB_PORT']}", token)

    def broker_url(self, scheme="mqtt"):
        port = {"mqtt": "MQTT_PORT", "mqtts": "MQTTS_PORT", "ws": "WS_PORT"}[scheme]
        return f"{scheme}://127.0.0.1:{self.env[port]}" + ("/mqtt" if scheme == "ws" else "")

    def broker_cpus(self):
        cpus = self.env["BROKER_CPUS"]
        return float(cpus), f"broker container CPU as % of its limit BROKER_CPUS={cpus}"

    def k6_out(self):
        """The k6 service's own output, as this project's compose files resolve
        it (an override that moves Telegraf's listener moves it too)."""
        config = json.loads(self.compose("--profile", "k6", "config", "--format", "json").stdout)
        return config["services"]["k6"]["environment"]["K6_OUT"]
