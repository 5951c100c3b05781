"""Every file this project generates and commits, from its one source each:
the dashboards (mqttbench/dashboards), the brokers' README facts
(brokers/*/broker.toml), the scenarios' parameter table (k6/lib/params.js),
the result schema and the Python readers' verdict policy (the Go packages
result and verdict). `python -m mqttbench generate [--check]`."""

import sys

from mqttbench.brokers import facts
from mqttbench.dashboards import __main__ as dashboards
from mqttbench.generated import COMMAND, result_schema, scenario_params, stale, verdict_policy

GENERATORS = {
    "dashboards": dashboards.files,
    "broker READMEs": facts.readmes,
    "scenario parameter table": scenario_params.files,
    "result schema": result_schema.files,
    "verdict policy": verdict_policy.files,
}


def generate(check=False):
    """Writes the stale files, naming them; with check writes nothing and
    returns 1 when any is stale, naming each."""
    found = 0
    for what, files in GENERATORS.items():
        made = files()
        for path in stale(made):
            found += 1
            if check:
                print(f"stale {what}: {path} (run {COMMAND})", file=sys.stderr)
            else:
                path.write_text(made[path])
                print(f"wrote {what}: {path}")
    return 1 if check and found else 0
