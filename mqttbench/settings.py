"""The settings every part reads, by compose's rule: a variable the
environment has wins over its line in .env (the pinned versions, the
stack's ports and InfluxDB's names; compose and scripts/lib.sh read the
same file). Also where the cache, the native stack's state and the pinned
builds are."""

import hashlib
import os
import shlex
from pathlib import Path

from mqttbench import ROOT


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
    """.env (the pinned versions, the stack's ports and names) under the environment."""
    environ = os.environ if environ is None else environ
    return env_file() | dict(environ)


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


def staticcheck_bin(environ=None):
    return cache(environ) / f"staticcheck/{get('STATICCHECK_VERSION', environ)}/staticcheck"


def toxiproxy_bin(environ=None):
    return cache(environ) / f"toxiproxy/{get('TOXIPROXY_VERSION', environ)}/toxiproxy-server"


# The pinned builds of scripts/setup/, each in the cache keyed by its version
# (k6's by its sources too: mqttbench/k6/command.py).
BINARIES = {"influxd": influxd_bin, "telegraf": telegraf_bin, "compose": compose_bin,
            "staticcheck": staticcheck_bin, "toxiproxy": toxiproxy_bin}  # fmt: skip

if __name__ == "__main__":
    # python3 -m mqttbench.settings bin NAME: where a pinned build is (scripts/lib.sh).
    import sys

    if sys.argv[1:2] != ["bin"] or len(sys.argv) != 3 or sys.argv[2] not in BINARIES:
        sys.exit(f"usage: python3 -m mqttbench.settings bin {'|'.join(BINARIES)}")
    print(BINARIES[sys.argv[2]]())
