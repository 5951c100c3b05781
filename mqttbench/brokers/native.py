"""How the native stack runs a broker, from the [native] table of its
brokers/<name>/broker.toml (the table says how; mqttbench/stack/native.py
only does it): a broker without one runs under compose only. native()
refuses, naming the fix, a broker with no table; planned() writes the
rewritten config and returns the command, its readiness checks and the
rest; version_of() reads the installed broker's version."""

import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

from mqttbench.brokers import facts as broker_facts

# The broker's listeners: plain, TLS, mutual TLS, WebSocket.
PORTS = ("MQTT_PORT", "MQTTS_PORT", "MTLS_PORT", "WS_PORT")


def native(name):
    """The broker's [native] table; exits naming the fix when there is none."""
    facts = broker_facts.load(name)
    if facts is None:
        sys.exit(f"unknown broker '{name}' (known: {' '.join(broker_facts.names())})")
    if "native" not in facts:
        sys.exit(
            f"broker '{name}' has no native build here (no [native] table in brokers/{name}/broker.toml): "
            f"run it under compose (scripts/bench.sh --compose --broker {name}, or docker compose --profile {name} up)"
        )
    return facts["native"]


def fill(text, values):
    """A string of the table with its {PLACEHOLDERS} filled in; only the
    known ones, so that other braces (a pattern's {2}) stay as they are."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], m[0]), text)


def rewrite(text, rules, values, where):
    """A config file's text with each [pattern, replacement] of rules applied
    to every line, the replacement's placeholders filled in; exits naming a
    pattern that matches nothing (where: the file)."""
    for pattern, replacement in rules:
        text, n = re.subn(pattern, fill(replacement, values).replace("\\", "\\\\"), text, flags=re.M)
        # A listener left as it is would listen on every interface, at the compose port.
        if not n:
            sys.exit(f"{where}: no line matches {pattern!r} of [native] rewrite")
    return text


def planned(name, state, env=os.environ):
    """Writes the rewritten config into state; returns how to run the broker:
    command, ready (commands), ready_seconds, env, ports, metrics_url, stop
    (commands), each placeholder filled in (tests/native_broker.py runs it so)."""
    table = native(name)
    state = Path(state)
    values = {p: env[p] for p in PORTS} | {k: env.get(k, str(v)) for k, v in table.get("ports", {}).items()}
    values |= {
        "tls": str(state / "tls"),
        "user": pwd.getpwuid(os.getuid()).pw_name,
        "config": str(state / f"{name}.conf"),
        "state": str(state),
        "dir": str(broker_facts.BROKERS / name),
    }
    text = rewrite((broker_facts.BROKERS / name / table["config"]).read_text(), table.get("rewrite", []), values,
                   f"brokers/{name}/{table['config']}")  # fmt: skip
    text += "".join(fill(line, values) + "\n" for line in table.get("append", []))
    # Directories the broker writes into but will not create (its HOME, say).
    for d in table.get("dirs", []):
        Path(fill(d, values)).mkdir(parents=True, exist_ok=True)
    Path(values["config"]).write_text(text)

    def commands(key):
        return [[fill(a, values) for a in c] for c in table.get(key, [])]

    return {
        "command": [fill(a, values) for a in table["command"]],
        "ready": commands("ready"),
        # A broker that boots for seconds (an Erlang node) says how long it may take.
        "ready_seconds": int(table.get("ready_seconds", 10)),
        "env": {k: fill(v, values) for k, v in table.get("env", {}).items()},
        # Its own ports beyond the stack's four ([native] ports: NAME = default,
        # each moved by a variable of that name).
        "ports": {k: values[k] for k in table.get("ports", {})},
        "metrics_url": fill(table.get("metrics_url", ""), values),
        "stop": commands("stop"),
    }


def version_of(name):
    """The installed broker's version, as its [native] version command tells it (or None)."""
    table = native(name)
    if "version" not in table:
        return None
    try:
        out = subprocess.run(table["version"], capture_output=True, text=True, check=False)
    except OSError:
        return None
    found = re.search(table["version_pattern"], out.stdout + out.stderr, re.M)
    return found[1] if found else None
