#!/usr/bin/env python3
"""The scenarios' parameter table in docs/scenarios.md, rendered from the one
table of parameters in code (TABLE in k6/lib/params.js): its variables in the
order the scenarios read them, each one's key in the result's `parameters`,
and its default where the code gives a literal. What each one means is
written here, in WHAT; a variable of TABLE without it, or a WHAT entry for a
variable TABLE no longer reads, stops the rendering. Run after editing either.
Usage: python3 -m mqttbench.generated.scenario_params [--check]"""

import re
import sys

from mqttbench import ROOT
from mqttbench.generated import between_markers, sync

PARAMS = ROOT / "k6/lib/params.js"
DOC = ROOT / "docs/scenarios.md"
BEGIN = "<!-- parameters: rendered from k6/lib/params.js by mqttbench/generated/scenario_params.py; edit those -->"
END = "<!-- end of parameters -->"

# What each variable does, and its default where the code's is not a literal.
WHAT = {
    "SCALE": "shrinks the scenario's own client counts proportionally, keeping each client's load; "
    "`PUBLISHERS`, `SUBSCRIBERS` and `RATE` given explicitly are kept as given",
    "BROKER": "the broker's name: the tag of the run's metrics (`BROKER=emqx docker compose run ...`)",
    "MQTT_URL": "the broker; its scheme chooses the transport ([transports.md](transports.md))",
    "TLS_CA": (
        "PEM file of the CA that signed the broker's certificate",
        "the stack's `tls/ca.pem` (else the system's CAs)",
    ),
    "TLS_CERT": (
        "client certificate, sent when the broker asks (mutual TLS; [transports.md](transports.md))",
        "the stack's `tls/client.pem`",
    ),
    "TLS_KEY": ("the client certificate's key", "the stack's `tls/client.key`"),
    "TLS_SERVER_NAME": ("the name checked against the broker's certificate", "the URL's host"),
    "MQTT_URL_B": "the second broker, for bridging only (`bridge-500-500`)",
    "MQTT_VERSION": "3.1.1, 5 or 5.0",
    "QOS": "0, 1 or 2",
    "PAYLOAD": "message size, bytes",
    "PUBLISHERS": "publishing connections",
    "SUBSCRIBERS": "subscribing connections",
    "BACKGROUND": (
        "composite scenarios: background connections, which hold their keep-alive and session and send nothing "
        "(`SCALE` shrinks the scenario's own; one given is kept)",
        "the scenario's",
    ),
    "RATE": "total msg/s",
    "DURATION": "how long the rate is held",
    "CONNECT_RATE": "connections opened per second (the ramp must fit in the run)",
    "KEEPALIVE": "keep alive, seconds (a 16-bit field in CONNECT)",
    "P99_MS": "the p99 latency bound, ms (over `--impair`, plus the delay the profile adds: "
    "[impairment.md](impairment.md))",
    "STEPS": "step load, `1000:60s,2000:60s` (rate:duration)",
    "PAYLOAD_TEMPLATE": "each message filled from a template ([transports.md](transports.md#payload-templates))",
    "PAYLOADS": "the payload sweep's sizes (`payload-1K-1K-20K`)",
    "MAX_INSTANCES": "the most instances a segmented test can have ([distributed.md](distributed.md)); each is an "
    "idle VU of about 270 KB in every process ([benchmarks-instances.md](benchmarks-instances.md))",
    "RESULTS_DIR": ("where the result file is written", "`$MQTTBENCH_RESULTS/raw`, else the project's `reports/raw`"),
    "LOCAL_ADDRESS": "source addresses of the connections: `127.0.0.2`, a list or a range `127.0.0.2-127.0.0.9`",
    "RUN_ID": ("the run's name: its result file and tags", "`<scenario>-<broker>-<time>-<random>`, unique per process"),
    "SEARCH_ID": "the capacity search this run is a trial of (`scripts/capacity.sh`): a tag on every sample",
    "TOPIC_PREFIX": "e.g. `run1/`: keeps concurrent runs on one broker apart",
    "ACCEPT_QOS_DOWNGRADE": "`true` measures at the QoS the broker grants instead of failing before load; "
    "recorded in the result",
    "CLEAN_SESSION": (
        "`false`: persistent sessions for subscribers and publishers (3.1.1; under MQTT 5 it needs `SESSION_EXPIRY`)",
        "the scenario's, else `true`",
    ),
    "SESSION_EXPIRY": "MQTT 5 session expiry, seconds: sessions outlive a connection",
    "STRICT_ORDER": "`true`: a delivery out of order fails the run ([Ordering](#ordering))",
    "TOXIPROXY_URL": "storm scenarios: Toxiproxy's API, whose proxy `mqtt` carries `MQTT_URL`; `none` cuts nothing "
    "([impairment.md](impairment.md#reconnect-storm))",
    "STORM_AT": "storm scenarios: when every connection is cut",
    "OUTAGE": "storm scenarios: how long the path stays cut",
    "RECOVERY_S": "storm scenarios: every connection must be back within this many seconds of the path's return",
}

ROW = re.compile(r"^  \['([A-Z0-9_]+)', '([a-z0-9_]+)', (.*)$")
LITERAL = r"('[^']*'|-?\d+(?:\.\d+)?)"


def table(source):
    """[(variable, key, read expression)] of TABLE in params.js's text."""
    body = re.search(r"^const TABLE = \[\n(.*?)^\];", source, re.S | re.M)
    if not body:
        raise ValueError("no `const TABLE = [ ... ];` in k6/lib/params.js")
    rows = []
    for line in body.group(1).splitlines():
        m = ROW.match(line)
        if m:
            rows.append([m.group(1), m.group(2), m.group(3)])
        elif rows and not line.lstrip().startswith("//"):
            rows[-1][2] += " " + line.strip()
    return [tuple(r) for r in rows]


def default(name, read):
    """The default the read expression gives, as the docs say it."""
    what = WHAT[name]
    if isinstance(what, tuple):
        return what[1]
    lit = re.search(r"(?:\?\?|\|\|)\s*" + LITERAL, read)
    if lit:
        return f"the scenario's, else `{lit.group(1).strip(chr(39))}`"
    lit = re.search(r"(?:env\.\w+|bool)\('" + name + r"',\s*" + LITERAL, read)
    if lit:
        value = lit.group(1).strip("'")
        return f"`{value}`" if value else "none"
    return "the scenario's" if "d." in read else "none"


def markdown(source):
    rows = table(source)
    names = [name for name, _, _ in rows]
    missing = [n for n in names if n not in WHAT]
    gone = [n for n in WHAT if n not in names]
    if missing or gone:
        raise ValueError(
            f"mqttbench/generated/scenario_params.py WHAT and k6/lib/params.js TABLE differ: "
            f"without a description {missing}, described but not read {gone}"
        )
    lines = ["| variable | default | what | result's `parameters` |", "|---|---|---|---|"]
    for name, key, read in rows:
        what = WHAT[name][0] if isinstance(WHAT[name], tuple) else WHAT[name]
        lines.append(f"| `{name}` | {default(name, read)} | {what} | `{key}` |")
    return "\n".join(lines)


def render(doc, source):
    """The doc's text with the block between the markers rendered afresh."""
    return between_markers(doc, BEGIN, END, markdown(source))


def main():
    sync(files(), "scenario parameter table")


def files():
    """docs/scenarios.md with its parameter table rendered: {path: text}."""
    try:
        return {DOC: render(DOC.read_text(), PARAMS.read_text())}
    except ValueError as e:
        sys.exit(f"{DOC}: {e}")


if __name__ == "__main__":
    main()
