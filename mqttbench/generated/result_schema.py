"""The result file's JSON Schema, generated from the Go type that owns the
document (k6/extension/result.Result, printed by its cmd/resultschema):
writes k6/extension/result/result.schema.json, or with --check fails naming
it when it is out of date. Readers (mqttbench/report, mqttbench/capacity)
validate result files against it."""

import json
from functools import cache

from mqttbench import ROOT
from mqttbench.generated import go_command, sync

SCHEMA = ROOT / "k6/extension/result/result.schema.json"


@cache
def schema_id():
    """The `schema` a result file of this version carries (mqtt-bench/result/vN)."""
    return json.loads(SCHEMA.read_text())["properties"]["schema"]["enum"][0]


def is_result(path):
    """path is a finished run's result (not a claim, nor one instance's part)."""
    try:
        return json.loads(path.read_text()).get("schema") == schema_id()
    except (OSError, ValueError, AttributeError):
        return False


def generate():
    return go_command("result/cmd/resultschema")


def files():
    return {SCHEMA: generate()}


if __name__ == "__main__":
    sync(files(), "result schema")
