"""The native stack's secrets: InfluxDB's token, which Telegraf and the
reports read too, and its admin password, in their own file (.env.local,
git-ignored, or MQTTBENCH_SECRETS: the tests' stacks keep their own there, so
that they never rewrite or read the token of a stack the user runs from this
clone). The compose stack generates its own, in its secrets volume
(scripts/init/secrets.sh). Values pass through files only, never a
command's argv."""

import base64
import os
import re
from pathlib import Path

from mqttbench import ROOT

NAMES = ("INFLUX_TOKEN", "INFLUXDB_ADMIN_PASSWORD")
ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def secrets_file(environ=None):
    environ = os.environ if environ is None else environ
    return Path(environ.get("MQTTBENCH_SECRETS") or ROOT / ".env.local")


def generate():
    """32 or so letters and digits: EMQX reads its secrets as HOCON, and
    passes its cookie unquoted (the same alphabet as scripts/init/secrets.sh)."""
    return re.sub(r"[/+=]", "", base64.b64encode(os.urandom(24)).decode())


def _value(raw):
    return "" if raw in ('""', "''") else raw


def read(path):
    """The file's entries as sourcing it gives them: the last one counts."""
    values = {}
    if Path(path).exists():
        for line in Path(path).read_text().splitlines():
            if m := ENTRY.match(line):
                values[m[1]] = _value(m[2])
    return values


def ensure(environ=None):
    """Generates the secrets missing from the file, or empty there (INFLUX_TOKEN=),
    keeping every other line: an empty token or password would otherwise be
    used as is. Returns the file's entries."""
    path = secrets_file(environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    path.chmod(0o600)
    lines = path.read_text().splitlines()
    first, empty = {}, set()  # name -> its first non-empty value; names with an empty entry
    for line in lines:
        if m := ENTRY.match(line):
            v = _value(m[2])
            if not v:
                empty.add(m[1])
            elif m[1] not in first:
                first[m[1]] = v
    present = {m[1] for line in lines if (m := ENTRY.match(line))}
    chosen = {name: first.get(name) or generate() for name in NAMES}
    added = [f"{n}={chosen[n]}" for n in NAMES if n not in present]
    # Every empty entry of the name: sourcing the file, the last one counts.
    filled = [
        f"{m[1]}={chosen[m[1]]}" if (m := ENTRY.match(line)) and m[1] in NAMES and m[1] in empty and not _value(m[2])
        else line
        for line in lines
    ]  # fmt: skip
    if added or filled != lines:
        tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
        tmp.touch(mode=0o600)
        tmp.write_text("".join(f"{line}\n" for line in filled + added))
        tmp.replace(path)
    return read(path)
