#!/usr/bin/env python3
"""How the native stack runs a broker, from the [native] table of its
brokers/<name>/broker.toml (the table says how; scripts/stack.sh only does
it): a broker without one runs under compose only.
Usage: scripts/broker_native.py check NAME
       scripts/broker_native.py plan NAME STATE_DIR
       scripts/broker_native.py version NAME
check exits 1 with the reason when NAME cannot run natively. plan writes the
rewritten config into STATE_DIR and prints bash assignments for stack.sh to
eval: native_command (an array) and native_ready (an array of commands, each
one shell-quoted string). version prints the installed broker's version."""

import os
import pwd
import re
import shlex
import subprocess
import sys
from pathlib import Path

import broker_facts

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


def plan(name, state):
    table = native(name)
    state = Path(state)
    values = {p: os.environ[p] for p in PORTS}
    values |= {
        "tls": str(state / "tls"),
        "user": pwd.getpwuid(os.getuid()).pw_name,
        "config": str(state / f"{name}.conf"),
    }
    text = (broker_facts.BROKERS / name / table["config"]).read_text()
    for pattern, replacement in table.get("rewrite", []):
        text, n = re.subn(pattern, fill(replacement, values).replace("\\", "\\\\"), text, flags=re.M)
        # A listener left as it is would listen on every interface, at the compose port.
        if not n:
            sys.exit(f"brokers/{name}/{table['config']}: no line matches {pattern!r} of [native] rewrite")
    text += "".join(fill(line, values) + "\n" for line in table.get("append", []))
    Path(values["config"]).write_text(text)
    print("native_command=(" + shlex.join(fill(a, values) for a in table["command"]) + ")")
    checks = (shlex.quote(shlex.join(fill(a, values) for a in check)) for check in table.get("ready", []))
    print("native_ready=(" + " ".join(checks) + ")")


def version(name):
    table = native(name)
    if "version" not in table:
        return
    out = subprocess.run(table["version"], capture_output=True, text=True, check=False)
    found = re.search(table["version_pattern"], out.stdout + out.stderr, re.M)
    if found:
        print(found[1])


def main():
    match sys.argv[1:]:
        case ["check", name]:
            native(name)
        case ["plan", name, state]:
            plan(name, state)
        case ["version", name]:
            version(name)
        case _:
            sys.exit(__doc__)


if __name__ == "__main__":
    main()
