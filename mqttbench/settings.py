"""The settings every part reads, by compose's rule: a variable the
environment has wins over its line in .env (the pinned versions and
defaults; compose and scripts/lib.sh read the same file); the native
stack's ports and InfluxDB's names have defaults of their own. Also where
the cache and the native stack's state live."""

import hashlib
import os
import shlex
from pathlib import Path

from mqttbench import ROOT

# The native stack's ports and InfluxDB's names: every one can be overridden
# (scripts/lib.sh gives the shell the same defaults from this table).
STACK_DEFAULTS = {
    "INFLUXDB_PORT": "8086",
    "TELEGRAF_K6_PORT": "8186",  # InfluxDB v1 listener for `k6 --out influxdb=`
    "NODE_EXPORTER_PORT": "9100",
    "MQTT_PORT": "1883",
    "MQTTS_PORT": "8883",  # mqtts:// (TLS)
    "MTLS_PORT": "8884",  # mqtts:// with a client certificate (mutual TLS)
    "WS_PORT": "8083",  # ws:// (MQTT over WebSocket)
    "INFLUXDB_ORG": "mqtt-bench",
    "INFLUXDB_BUCKET": "mqtt-bench",
    "INFLUXDB_RETENTION": "30d",
}


def env_file(path=ROOT / ".env"):
    """NAME=VALUE lines of a dotenv file, values unquoted as a shell would."""
    values = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip().removeprefix("export ").strip()
        name, eq, value = line.partition("=")
        if eq and name.isidentifier() and not line.startswith("#"):
            words = shlex.split(value, comments=True)
            values[name] = " ".join(words)
    return values


def settings(environ=None):
    """.env under the environment, with the stack's defaults beneath both."""
    environ = os.environ if environ is None else environ
    return STACK_DEFAULTS | env_file() | {k: v for k, v in environ.items()}


def get(name, environ=None):
    return settings(environ).get(name)


def cache(environ=None):
    """Toolchains and builds, outside the clone, keyed by version."""
    environ = os.environ if environ is None else environ
    return Path(environ.get("MQTTBENCH_CACHE") or Path.home() / ".cache/mqtt-bench")


def state(environ=None):
    """The native stack's data, pids, logs and generated TLS files."""
    environ = os.environ if environ is None else environ
    return Path(environ.get("MQTTBENCH_STATE") or ROOT / ".state")


def influxd_bin(environ=None):
    return cache(environ) / f"influxd/{get('INFLUXDB_VERSION', environ)}/influxd"


def telegraf_bin(environ=None):
    """Telegraf's build, keyed by its version and its plugins (the build tags)."""
    key = hashlib.sha256((ROOT / "telegraf/plugins.txt").read_bytes()).hexdigest()[:10]
    return cache(environ) / f"telegraf/{get('TELEGRAF_VERSION', environ)}-{key}/telegraf"


def compose_bin(environ=None):
    return cache(environ) / f"compose/{get('DOCKER_COMPOSE_VERSION', environ)}/docker-compose"
