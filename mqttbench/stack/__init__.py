"""The stack a run measures with: a broker, InfluxDB, Telegraf and
node_exporter, natively (native.py) or under compose (compose.py), behind
one interface (base.py), so that what runs on it never asks which.
open_stack() picks one."""

import os
import shutil
import subprocess

from mqttbench import settings
from mqttbench.brokers import facts as broker_facts
from mqttbench.outcome import log
from mqttbench.stack.base import Influx, Service, Stack, StackError

__all__ = ["Influx", "Service", "Stack", "StackError", "choose_kind", "load_influx_token", "open_stack"]


def choose_kind(brokers):
    """ "compose" when a Docker engine answers and the core's and these
    brokers' images are present, else "native"; logs why."""
    env = settings.settings()
    images = [env[v] for v in ("INFLUXDB_IMAGE", "TELEGRAF_IMAGE", "GRAFANA_IMAGE", "NODE_EXPORTER_IMAGE",
                               "TOXIPROXY_IMAGE")]  # fmt: skip
    images += [env.get(broker_facts.load(b)["image"], "") for b in brokers]

    def ok(*argv):
        try:
            return subprocess.run(argv, capture_output=True, check=False).returncode == 0
        except OSError:
            return False

    if not ok("docker", "info"):
        log("using the native stack: no Docker engine answers here (docker info failed)")
        return "native"
    for image in images:
        if not ok("docker", "image", "inspect", image):
            log(f"using the native stack: image {image} is not present locally (docker pull it, or --compose)")
            return "native"
    log(f"running under compose: Docker and the images of {' '.join(brokers)} are present")
    return "compose"


def open_stack(kind, broker=None, environ=None):
    """The stack of that kind ("native" or "compose") for broker."""
    # Imported here, not above: `python3 -m mqttbench.stack.ports` (and
    # .secrets) would otherwise run a module this package had already imported.
    from mqttbench.stack.compose import ComposeStack
    from mqttbench.stack.native import NativeStack

    return (ComposeStack if kind == "compose" else NativeStack)(broker, environ)


def load_influx_token(kind=None):
    """INFLUX_TOKEN for what reads InfluxDB: the caller's; else that kind of
    stack's (compare's report, of the stack its columns ran on); else, for
    what starts no stack (report, capacity --target), the compose stack's
    generated one while its InfluxDB runs, or the native stack's file."""
    if os.environ.get("INFLUX_TOKEN"):
        return
    if kind:
        token = open_stack(kind).influx().token
    else:
        compose = open_stack("compose") if shutil.which("docker") else None
        running = compose and compose.status("influxdb")[0].running
        token = (running and compose.secret("influx_token")) or open_stack("native").influx().token
    if token:
        os.environ["INFLUX_TOKEN"] = token
