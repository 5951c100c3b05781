"""The result file's JSON Schema, generated from the Go type that owns the
document (k6/extension/result.Result, printed by its cmd/resultschema):
writes k6/extension/result/result.schema.json, or with --check fails naming
it when it is out of date. Readers (mqttbench/report, mqttbench/capacity)
validate result files against it."""

from mqttbench import ROOT
from mqttbench.generated import go_command, sync

SCHEMA = ROOT / "k6/extension/result/result.schema.json"


def generate():
    return go_command("result/cmd/resultschema")


def files():
    return {SCHEMA: generate()}


if __name__ == "__main__":
    sync(files(), "result schema")
