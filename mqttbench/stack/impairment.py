"""A run's network impairment (bench --impair PROFILE): a Toxiproxy between
the generator and the broker with the profile's toxics (impair.py).
Natively a Toxiproxy of the run's own on loopback, under compose the core's
`toxiproxy` service. close(), however the run ends, removes the proxy and
stops a server it started: no impairment outlives its run."""

import json
import os
import subprocess
import sys
import time
import urllib.request

from mqttbench import ROOT, settings
from mqttbench.outcome import Stop, log
from mqttbench.stack import impair
from mqttbench.stack.ports import holder
from mqttbench.stack.processes import identity, same_process


def _answers(api):
    try:
        with urllib.request.urlopen(f"{api}/version", timeout=2):
            return True
    except OSError:
        return False


class Impairment:
    """url: the impaired broker as k6 reaches it; env: NETWORK (the record,
    for the result file) and TOXIPROXY_URL (the API, for a storm scenario)."""

    def __init__(self, spec, api):
        self.spec, self.api = spec, api
        self.server = self.server_id = self.events = None
        self.url, self.env = "", {}

    def answers(self):
        return _answers(self.api)

    def apply(self, listen, upstream, toxiproxy_url):
        try:
            record = impair.apply(self.spec, self.api, listen, upstream)
        except (impair.Bad, OSError, RuntimeError) as e:
            raise Stop(f"--impair {self.spec}: the profile could not be set in Toxiproxy ({e})") from None
        toxics = "; ".join(
            f"{t['type']} {t['stream']} " + ",".join(f"{k}={v}" for k, v in t["attributes"].items())
            for t in record["toxics"]
        )
        log(f"network impaired: profile {self.spec} through Toxiproxy {listen} -> {upstream} ({toxics})")
        self.env = {"NETWORK": json.dumps(record), "TOXIPROXY_URL": toxiproxy_url}
        self.url = f"mqtt://{listen}"
        # The profile's timed events (a reset, a timeout), counted from now.
        if record.get("events"):
            self.events = subprocess.Popen(
                [sys.executable, "-P", "-m", "mqttbench.stack.impair", "events", self.spec, "--api", self.api],
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )

    def start_server(self, state, port, mqtt_port):
        """Natively: a Toxiproxy of this run's own, on loopback."""
        binary = settings.toxiproxy_bin()
        if not os.access(binary, os.X_OK):
            subprocess.run([str(ROOT / "scripts/setup.sh"), "toxiproxy"], stdout=sys.stderr, check=True)
        for p, var in ((port, "TOXIPROXY_PORT"), (mqtt_port, "TOXIPROXY_MQTT_PORT")):
            if found := holder(int(p)):
                raise Stop(f"--impair needs port {p} ({var}), held by {found}; or move it: TOXIPROXY_PORT=... "
                           "TOXIPROXY_MQTT_PORT=...")  # fmt: skip
        logs = state / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / "toxiproxy.log").open("ab") as out:
            self.server = subprocess.Popen([str(binary), "-host", "127.0.0.1", "-port", str(port)],
                                           stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        self.server_id = identity(self.server.pid)
        for _ in range(50):
            if _answers(self.api):
                return
            if self.server.poll() is not None:
                break
            time.sleep(0.1)
        if not _answers(self.api):
            raise Stop(f"Toxiproxy did not start: see {logs / 'toxiproxy.log'}")

    def close(self):
        if self.events and self.events.poll() is None:
            self.events.kill()
            self.events.wait()
        ours = self.server is None or same_process(identity(self.server.pid), self.server_id)
        if ours and _answers(self.api):
            try:
                impair.call(self.api, "DELETE", f"/proxies/{impair.PROXY}")
            except (OSError, RuntimeError):
                pass
        if self.server is not None and self.server.poll() is None:
            self.server.kill()
            self.server.wait()
        self.events = self.server = None


def check(spec):
    """The profile is valid, or the run stops (exit 2) naming --impair and the valid names."""
    try:
        impair.profile(spec)
    except impair.Bad as e:
        raise Stop(str(e), 2) from None
