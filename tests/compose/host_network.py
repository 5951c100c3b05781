"""The stand-ins' override for one broker: its profile's services on the
host's network, as tests/compose/stand-ins.yaml puts the core's (a host
without a bridge network: every connection stays on 127.0.0.1).

    python3 tests/compose/host_network.py NAME IMAGE OUT

Reads how the broker listens there from brokers/NAME/broker.toml
[compose.host_network] (the one place a broker is described) and writes
OUT, the compose override of its service: IMAGE (never pulled), its config
files rewritten beside OUT by the table's `rewrite`, else [native]'s (its
listeners on loopback at the stack's ports: MQTT_PORT, ... of the
environment), mounted where compose.yaml mounts them, and the table's
healthcheck; of telegraf-NAME (the Telegraf stand-in, told the table's
`telegraf` addresses); and of k6's host list (NAME: the broker up). The
project's files are left as they are. A broker without the table is
refused (exit 2), naming it."""

import json
import re
import sys
from pathlib import Path

from mqttbench import ROOT, settings
from mqttbench.brokers import facts as broker_facts
from mqttbench.brokers import native as broker_native

# The core's names, every one on the host (stand-ins.yaml's x-hosts).
HOSTS = ["influxdb", "telegraf", "grafana", "node-exporter", "broker", "toxiproxy"]
# What the Telegraf stand-in reaches on the host, whichever broker it watches.
TELEGRAF = {
    "INFLUX_URL": "http://influxdb:${INFLUXDB_PORT:-8086}",
    "NODE_EXPORTER_URL": "http://node-exporter:${NODE_EXPORTER_PORT:-9100}/metrics",
    "TELEGRAF_K6_LISTEN": "127.0.0.1:${TELEGRAF_K6_PORT:-8186}",
}
TIMING = {"interval": "5s", "timeout": "3s", "retries": 24, "start_period": "10s"}


def table(name):
    facts = broker_facts.load(name)
    if facts is None:
        sys.exit(f"unknown broker '{name}' (known: {' '.join(broker_facts.names())})")
    hn = facts.get("compose", {}).get("host_network")
    if hn is None:
        print(
            f"error: brokers/{name}/broker.toml has no [compose.host_network]: how its container listens on the "
            "host's loopback at the stack's ports under host networking (its config's rewrite, healthcheck and "
            "Telegraf addresses; brokers/mosquitto/broker.toml has one)",
            file=sys.stderr,
        )
        sys.exit(2)
    return facts, hn


def rewrite_config(name, facts, hn, out_dir, values):
    """Its config files, their listeners moved, written into out_dir: the
    mounts that put them where compose.yaml mounts the project's."""
    native = facts.get("native", {})
    # The table's own rewrite applies to every config file; [native]'s to its own file alone.
    if "rewrite" in hn:
        rules, files = hn["rewrite"], facts.get("config", [])
    else:
        rules, files = native.get("rewrite", []), [native.get("config")]
    compose = (ROOT / "compose.yaml").read_text()
    mounts = []
    for f in filter(None, files):
        target = re.search(rf"\./brokers/{re.escape(name)}/{re.escape(f)}:([^:\"',\s\]]+)", compose)
        if target is None:
            sys.exit(f"compose.yaml mounts no ./brokers/{name}/{f} into the {name} service")
        text = (broker_facts.BROKERS / name / f).read_text()
        path = Path(out_dir) / f"{name}-{f}"
        path.write_text(broker_native.rewrite(text, rules, values, f"brokers/{name}/{f}"))
        mounts.append(f"{path}:{target[1]}:ro")
    return mounts


def override(name, image, hn, values, mounts):
    """The compose override, as YAML (JSON's scalars and lists are YAML's)."""
    hosts = json.dumps([f"{h}:127.0.0.1" for h in [*HOSTS, name]])
    test = json.dumps([broker_native.fill(a, values) for a in hn["healthcheck"]])
    telegraf = TELEGRAF | {k: broker_native.fill(v, values) for k, v in hn.get("telegraf", {}).items()}
    timing = "\n".join(f"      {k}: {json.dumps(v)}" for k, v in TIMING.items())
    env = "\n".join(f"      {k}: {json.dumps(v)}" for k, v in telegraf.items())
    return f"""# Written by tests/compose/host_network.py from brokers/{name}/broker.toml [compose.host_network].
services:
  {name}:
    image: {json.dumps(image)}
    pull_policy: never
    network_mode: host
    extra_hosts: {hosts}
    ports: !reset []
    networks: !reset {{}}
    sysctls: !reset {{}}
    volumes: {json.dumps(mounts)}
    healthcheck:
{timing}
      test: {test}
  telegraf-{name}:
    image: mqtt-bench-test/telegraf:test
    pull_policy: never
    network_mode: host
    extra_hosts: {hosts}
    ports: !reset []
    networks: !reset {{}}
    environment:
{env}
    healthcheck:
{timing}
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:${{TELEGRAF_K6_PORT:-8186}}/ping"]
  k6:
    extra_hosts: {hosts}
"""


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    name, image, out = argv
    facts, hn = table(name)
    env = settings.settings()
    # The stack's ports ({MQTT_PORT}...); {tls}: where compose's brokers read the certificates.
    values = {p: env[p] for p in broker_native.PORTS} | {"tls": "/run/secrets/mqtt-bench/tls"}
    mounts = rewrite_config(name, facts, hn, Path(out).resolve().parent, values)
    Path(out).write_text(override(name, image, hn, values, mounts))


if __name__ == "__main__":
    main(sys.argv[1:])
