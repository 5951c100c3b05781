"""Writes scripts/verdict_policy.py, the verdict package's policy and causes
for Python readers, from the Go package itself (k6/extension/verdict, printed
by its cmd/verdictpolicy); with --check fails naming it when it is out of
date, so that no Python reader restates a bound or a cause."""

from pathlib import Path

from generated import go_command, sync

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "scripts/verdict_policy.py"


def generate():
    return go_command("verdict/cmd/verdictpolicy")


if __name__ == "__main__":
    sync({MODULE: generate()}, "verdict policy", "python3 scripts/verdict_policy_gen.py")
