"""scripts/lib.sh reads .env as docker compose does: a variable the
environment already has wins over its line in .env, and .env supplies the
rest (BROKER_CPUS=4 scripts/bench.sh --compose runs with 4 CPUs, as
BROKER_CPUS=4 docker compose up does)."""

import os
import re
import subprocess

from conftest import ROOT

OURS = ("BROKER_CPUS", "BROKER_MEMORY", "EMQX_IMAGE")


def dot_env(name):
    return re.search(rf"^{name}=(.*)$", (ROOT / ".env").read_text(), re.M).group(1)


def sourced(script, **env):
    """What a bash script prints after sourcing scripts/lib.sh, in an environment with env."""
    base = {k: v for k, v in os.environ.items() if k not in OURS}
    return subprocess.check_output(
        ["bash", "-c", f"set -euo pipefail; {script}"], env={**base, **env}, text=True, cwd=ROOT
    ).strip()


def test_the_environment_wins_over_dot_env():
    shown = sourced('. scripts/lib.sh; echo "$BROKER_CPUS $EMQX_IMAGE"', BROKER_CPUS="4", EMQX_IMAGE="emqx/emqx:5.8.5")
    assert shown == "4 emqx/emqx:5.8.5"


def test_dot_env_supplies_what_the_environment_does_not_set():
    shown = sourced('. scripts/lib.sh; echo "$BROKER_CPUS $BROKER_MEMORY"', BROKER_CPUS="4")
    assert shown == f"4 {dot_env('BROKER_MEMORY')}"
    assert sourced(". scripts/lib.sh; echo $BROKER_CPUS") == dot_env("BROKER_CPUS")


def test_the_scripts_a_script_starts_keep_the_value_in_force():
    # A script's child sources lib.sh again: it sees what its parent ran with.
    assert sourced('. scripts/lib.sh; bash -c ". scripts/lib.sh; echo \\$BROKER_CPUS"', BROKER_CPUS="4") == "4"


def test_a_variable_only_of_the_shell_is_not_the_environment():
    # Compose sees only the environment: an unexported shell variable does not win.
    assert sourced('BROKER_CPUS=9; . scripts/lib.sh; echo "$BROKER_CPUS"') == dot_env("BROKER_CPUS")
