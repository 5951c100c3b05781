"""Writes mqttbench/verdict_policy.py, the verdict package's policy and causes
for Python readers, from the Go package itself (k6/extension/verdict, printed
by its cmd/verdictpolicy); with --check fails naming it when it is out of
date, so that no Python reader restates a bound or a cause."""

from mqttbench import ROOT
from mqttbench.generated import go_command, sync

MODULE = ROOT / "mqttbench/verdict_policy.py"


def generate():
    return go_command("verdict/cmd/verdictpolicy")


def files():
    return {MODULE: generate()}


if __name__ == "__main__":
    sync(files(), "verdict policy")
