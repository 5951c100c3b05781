"""Test-only (the GitHub job `k6-operator`): checks the merged result of the
README's TestRun against numbers fixed before the run, not read from it, and
against the broker's own counts, so that the job cannot pass on an empty or
partial run.

Usage: python3 deploy/k6-operator/ci/check_run.py RESULT_JSON --instances N
  --publishes N --connections N --broker-received N --broker-sent N

--broker-received/--broker-sent: Mosquitto's $SYS/broker/publish/messages/
received and .../sent, read after the run. Exit 0 when every check holds,
else 1 with each one that does not.
"""

import argparse
import json
import sys
from pathlib import Path

# The one count of shared-subscription probes (mqttbench/brokers/counters.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from mqttbench.brokers import counters as broker_counters  # noqa: E402


def problems(merged, args):
    c, m = merged["counts"], merged["merge"]
    probes_in, probes_out = broker_counters.probes(merged)
    want = {
        "passed": (merged["passed"], True),
        "incomplete": (m["incomplete"], False),
        "missing_instances": (m["missing_instances"], []),
        "instances_expected": (m["instances_expected"], args.instances),
        "instances": (len(m["instances"]), args.instances),
        "mqtt_publishes": (c["mqtt_publishes"], args.publishes),
        "mqtt_receives": (c["mqtt_receives"], args.publishes),
        "mqtt_lost": (c["mqtt_lost"], 0),
        "mqtt_duplicates": (c["mqtt_duplicates"], 0),
        "mqtt_connects": (c["mqtt_connects"], args.connections),
        "mqtt_connect_failures": (c["mqtt_connect_failures"], 0),
        # Every PUBLISH the broker took is one the instances sent (or a probe),
        # every one it sent is one they received.
        "broker received - probes": (args.broker_received - probes_in, c["mqtt_publishes"]),
        "broker sent - probes": (args.broker_sent - probes_out, c["mqtt_receives"]),
    }
    out = [f"{k}: {got!r}, expected {exp!r}" for k, (got, exp) in want.items() if got != exp]
    if not merged["passed"]:
        # The merge's verdict says why (k6/extension/verdict): its cause, not a guess here.
        d = merged.get("diagnosis") or {}
        out.append(f"diagnosis: {d.get('cause')}: {d.get('text')}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    for name in ("instances", "publishes", "connections", "broker-received", "broker-sent"):
        ap.add_argument(f"--{name}", type=int, required=True)
    args = ap.parse_args(argv)
    with open(args.result) as f:
        merged = json.load(f)
    found = problems(merged, args)
    c = merged["counts"]
    print(
        f"{args.result}: passed={merged['passed']}, {len(merged['merge']['instances'])} instances, "
        f"{c['mqtt_connects']} connections, {c['mqtt_publishes']} published, {c['mqtt_receives']} received, "
        f"{c['mqtt_lost']} lost; broker: {args.broker_received} received, {args.broker_sent} sent"
    )
    for p in found:
        print(f"error: {p}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
