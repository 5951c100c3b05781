"""Secrets: generated when missing or empty, and never in a process's argv
(which every user of the machine can read in ps and /proc)."""

import os
import subprocess
from pathlib import Path

from conftest import ROOT, Stack, loopback_port

# The native stack's secrets (.env.local); the compose stack's are files in
# its own volume (scripts/init/secrets.sh, tests/compose/e2e.sh).
SECRET_NAMES = ("INFLUX_TOKEN", "INFLUXDB_ADMIN_PASSWORD")


def env_file(path):
    return dict(line.split("=", 1) for line in Path(path).read_text().splitlines() if "=" in line)


def ensure_secrets(local):
    """The stack's secrets file at local, made as `stack.sh up` makes it
    (mqttbench/stack/secrets.py), in a process of its own; its token on stdout."""
    code = "from mqttbench.stack import secrets; print(secrets.ensure()['INFLUX_TOKEN'])"
    env = dict(os.environ, MQTTBENCH_SECRETS=str(local), PYTHONPATH=str(ROOT))
    return subprocess.run(["python3", "-P", "-c", code], env=env, text=True, capture_output=True)


def test_empty_secret_entries_are_regenerated_and_the_rest_kept(tmp_path):
    local = tmp_path / ".env.local"
    lines = ["# my notes", "MY_SETTING=keep-me", "INFLUX_TOKEN=", "INFLUXDB_ADMIN_PASSWORD=chosen-by-me"]
    # An empty entry after a chosen one: sourcing the file, the last counts.
    local.write_text("\n".join([*lines, "INFLUXDB_ADMIN_PASSWORD=''"]) + "\n")
    r = ensure_secrets(local)
    assert r.returncode == 0, r.stderr
    got = env_file(local)
    for name in SECRET_NAMES:
        assert got[name] and got[name] not in ('""', "''"), f"{name} is {got[name]!r}"
    assert len(got["INFLUX_TOKEN"]) >= 20
    assert r.stdout.strip() == got["INFLUX_TOKEN"], "the sourced token must be the regenerated one"
    # What the user wrote stays, and fills the empty entry after it.
    assert got["INFLUXDB_ADMIN_PASSWORD"] == "chosen-by-me"
    assert got["MY_SETTING"] == "keep-me" and local.read_text().startswith("# my notes\n")
    names = [line.split("=")[0] for line in local.read_text().splitlines()]
    assert names.count("INFLUX_TOKEN") == 1, "an empty entry is filled in, not added again"
    assert oct(local.stat().st_mode & 0o777) == "0o600"
    # A second run changes nothing.
    before = local.read_text()
    assert ensure_secrets(local).returncode == 0
    assert local.read_text() == before


# Every external program the stack's scripts hand data to: each is replaced by
# a shim that records its argv, then runs the real one.
SHIMMED = (
    "curl",
    "jq",
    "setsid",
    "sed",
    "grep",
    "head",
    "tail",
    "tr",
    "base64",
    "cat",
    "ss",
    "awk",
    "mosquitto_sub",
    "env",
    "touch",
    "chmod",
    "mv",
)

# The shims' folder is taken out of PATH wherever it is (a python3 started
# through pyenv puts its own folders in front), or the shim would exec itself.
SHIM = """#!/bin/bash
printf '%s\\n' "${0##*/} $*" >>"$ARGV_LOG"
PATH=":$PATH:"
PATH="${PATH//:"$SHIM_DIR":/:}"
PATH="${PATH#:}"
PATH="${PATH%:}"
exec "${0##*/}" "$@"
"""


def test_no_secret_reaches_any_argv(tmp_path, stack):
    """stack.sh up on a fresh state dir (InfluxDB's first-run setup and token
    check), a restart of InfluxDB, and bench.sh's token check: the token and
    passwords of .env.local appear in no recorded argv and in no daemon's
    command line. The session stack is there so that bench.sh finds one up."""
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "shim").write_text(SHIM)
    (shims / "shim").chmod(0o755)
    for name in SHIMMED:
        (shims / name).symlink_to("shim")
    log = tmp_path / "argv.log"
    s = Stack(tmp_path / "fresh")
    s.env.update(
        INFLUXDB_PORT=str(loopback_port(25086)),
        TELEGRAF_K6_PORT=str(loopback_port(25186)),
        NODE_EXPORTER_PORT=str(loopback_port(25100)),
        MQTT_PORT=str(loopback_port(25883)),
        MQTTS_PORT=str(loopback_port(25841)),
        MTLS_PORT=str(loopback_port(25842)),
        WS_PORT=str(loopback_port(25843)),
        PATH=f"{shims}:{os.environ['PATH']}",
        SHIM_DIR=str(shims),
        ARGV_LOG=str(log),
    )
    try:
        r = s.run("up", check=False)
        assert r.returncode == 0, r.stderr
        daemons = {n: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ") for n, pid in s.pids().items()}
        r = s.run("restart", "influxd", check=False)
        assert r.returncode == 0, r.stderr
    finally:
        s.run("down", check=False)
    # bench.sh checks the token against the running stack before k6 starts
    # (and its stack's commands run with the shims); QOS=3 then stops the run before any load.
    bench_env = dict(stack.env, PATH=s.env["PATH"], SHIM_DIR=str(shims), ARGV_LOG=str(log), RUN_ID="argv-check")
    subprocess.run(
        [str(ROOT / "scripts/bench.sh"), "--native", "-e", "QOS=3"],
        env=bench_env,
        text=True,
        capture_output=True,
        timeout=600,
    )
    recorded = log.read_text()
    # The shims saw the calls that used to carry the token.
    assert "curl " in recorded and "/api/v2/buckets" in recorded and "/api/v2/setup" in recorded
    # bench.sh's own token check asks InfluxDB from its process (mqttbench/stack/native.py), with no argv.
    secrets = {v for f in (s.secrets, stack.secrets) for k, v in env_file(f).items() if k in SECRET_NAMES and v}
    assert len(secrets) == 2 * len(SECRET_NAMES), "each stack has its own secrets file"
    for secret in secrets:
        assert secret not in recorded, "a secret from a secrets file was passed in a command's argv"
        for name, cmdline in daemons.items():
            assert secret.encode() not in cmdline, f"a secret is in {name}'s command line"
