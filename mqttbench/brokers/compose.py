#!/usr/bin/env python3
"""What a broker's compose profile publishes, gathers and needs beyond the
stack's own, from its brokers/<name>/broker.toml ([compose], [metrics]), so
that the compose tests (tests/compose/e2e.sh, dashboards.sh) and GitHub's
compose job name no broker.
Usage: python3 -m mqttbench.brokers.compose plan NAME
       mqttbench/brokers/compose.py accept-eula NAME
plan prints bash assignments to eval: compose_ports (NAME=PORT of its own
published ports, each from the environment or its default), compose_metrics
(true when Telegraf gathers its series under compose), compose_metrics_url
(its metrics endpoint on the host, or empty), compose_claims_secret (the
secret its claims name, or empty), compose_eula (its EULA file, relative to
the project, or empty), metrics_measurement and metrics_filter (the Flux
condition on the points Telegraf writes of it). accept-eula writes the
broker's EULA line into its EULA file, as a user who read and accepted it
does; a broker without a EULA is left as it is."""

import json
import os
import re
import shlex
import sys

from mqttbench.brokers import facts as broker_facts


def compose(name):
    facts = broker_facts.load(name)
    if facts is None:
        sys.exit(f"unknown broker '{name}' (known: {' '.join(broker_facts.names())})")
    return facts.get("compose", {})


def flux_filter(tag):
    """[metrics] tag as a Flux condition: `key=value` that value, `key`
    (each series under its own value: Mosquitto's topics) any."""
    key, _, value = tag.partition("=")
    return f"r.{key} == {json.dumps(value)}" if value else f"exists r.{key}"


def planned(name, env=os.environ):
    table, metrics = compose(name), broker_facts.load(name)["metrics"]
    ports = {k: env.get(k) or str(v) for k, v in table.get("ports", {}).items()}
    url = re.sub(r"\{(\w+)\}", lambda m: ports[m[1]], table.get("metrics_url", ""))
    return {
        "compose_ports": [f"{k}={v}" for k, v in ports.items()],
        "compose_metrics": "true" if table.get("metrics", True) else "false",
        "compose_metrics_url": url,
        "compose_claims_secret": table.get("claims_secret", ""),
        "compose_eula": f"brokers/{name}/{table['eula_file']}" if "eula_file" in table else "",
        "metrics_measurement": metrics["measurement"],
        "metrics_filter": flux_filter(metrics["tag"]),
    }


def accept_eula(name):
    table = compose(name)
    if "eula_file" in table:
        (broker_facts.BROKERS / name / table["eula_file"]).write_text(table["eula"] + "\n")
        print(f"brokers/{name}/{table['eula_file']}: {table['eula']}", file=sys.stderr)


def main():
    match sys.argv[1:]:
        case ["plan", name]:
            for var, value in planned(name).items():
                if isinstance(value, list):
                    print(f"{var}=(" + " ".join(shlex.quote(v) for v in value) + ")")
                else:
                    print(f"{var}={shlex.quote(value)}")
        case ["accept-eula", name]:
            accept_eula(name)
        case _:
            sys.exit(__doc__)


if __name__ == "__main__":
    main()
