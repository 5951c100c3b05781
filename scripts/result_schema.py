"""The result file's JSON Schema, generated from the Go type that owns the
document (k6/extension/result.Result, printed by its cmd/resultschema):
writes k6/extension/result/result.schema.json, or with --check fails naming
it when it is out of date. Readers (scripts/report, scripts/capacity)
validate result files against it."""

from pathlib import Path

from generated import go_command, sync

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "k6/extension/result/result.schema.json"


def generate():
    return go_command("result/cmd/resultschema")


if __name__ == "__main__":
    sync({SCHEMA: generate()}, "result schema", "python3 scripts/result_schema.py")
