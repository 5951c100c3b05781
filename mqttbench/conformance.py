"""scripts/conformance.sh --broker NAME --mqtt-url URL [--metrics-url URL | --no-metrics]
    [--secret-file FILE] [--log-file FILE] [--native] [-- PYTEST ARGS...]

The broker conformance suite (tests/conformance) against a running broker:
its start-up log has no error line its README does not explain; p2p, fanin
and fanout at QoS 0, 1 and 2 deliver exactly; k6's counts equal the
broker's own counters (offsets from brokers/<name>/broker.toml); every auth
claim of brokers/<name>/README.md holds. Load goes to the broker: run it on
a stack of its own, with no other client publishing or reading $SYS.
Without --broker, scripts/test.sh runs the suite on Debian's Mosquitto.
Every input is checked before any connection (exit 2)."""

import argparse
import os
import re
import sys
from pathlib import Path

from mqttbench import ROOT, settings
from mqttbench.brokers import facts as broker_facts


def parse(argv):
    ap = argparse.ArgumentParser(prog="scripts/conformance.sh", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--broker", required=True, choices=broker_facts.names(),
                    help="a broker of this stack: its facts are brokers/NAME/broker.toml")  # fmt: skip
    ap.add_argument("--mqtt-url", required=True, help="mqtt://HOST:PORT of the broker")
    metrics = ap.add_mutually_exclusive_group()
    metrics.add_argument("--metrics-url", default="", help="its Prometheus endpoint "
                         "(brokers whose [metrics] input is inputs.prometheus)")  # fmt: skip
    metrics.add_argument("--no-metrics", action="store_true",
                         help="it serves none where it runs (broker.toml [compose] metrics = false): deliveries are "
                         "checked, its counters and HTTP claims are not")  # fmt: skip
    ap.add_argument("--secret-file", default="", help="the generated secret its claims name (NanoMQ's HTTP "
                    "password, EMQX's dashboard password: scripts/compose.sh secret NAME > FILE)")  # fmt: skip
    ap.add_argument(
        "--log-file",
        default="",
        help="the broker's log since its start (docker compose logs --no-log-prefix NAME > FILE)",
    )
    ap.add_argument(
        "--native",
        action="store_true",
        help="it is the native stack's broker (scripts/stack.sh): its [native.capabilities]",
    )
    argv, pytest_args = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    a = ap.parse_args(argv)
    if not re.fullmatch(r"mqtt://[^/:]+(:[0-9]+)?/?", a.mqtt_url):
        ap.error(f"--mqtt-url '{a.mqtt_url}' is not mqtt://HOST:PORT")
    prometheus = broker_facts.load(a.broker)["metrics"].get("input") == "inputs.prometheus"
    if prometheus and not a.metrics_url and not a.no_metrics:
        ap.error(f"--metrics-url is required for {a.broker}: its Prometheus endpoint (brokers/{a.broker}/broker.toml "
                 "[metrics]), or --no-metrics where it serves none")  # fmt: skip
    if a.metrics_url and not re.match(r"https?://", a.metrics_url):
        ap.error(f"--metrics-url '{a.metrics_url}' is not an http:// URL")
    for f in (a.secret_file, a.log_file):
        if f and not os.access(f, os.R_OK):
            ap.error(f"cannot read '{f}' (--secret-file / --log-file)")
    return a, pytest_args


def main(argv=None):
    a, pytest_args = parse(sys.argv[1:] if argv is None else argv)
    os.environ |= {
        "CONFORMANCE_BROKER": a.broker,
        "CONFORMANCE_MQTT_URL": a.mqtt_url,
        "CONFORMANCE_METRICS_URL": a.metrics_url,
        "CONFORMANCE_SECRET_FILE": str(Path(a.secret_file).resolve()) if a.secret_file else "",
        "CONFORMANCE_LOG_FILE": str(Path(a.log_file).resolve()) if a.log_file else "",
        "CONFORMANCE_NATIVE": "1" if a.native else "",
    }
    os.chdir(ROOT)
    python = str(settings.cache() / "venv/current/bin/python")
    # -rs: every skipped check is printed with its reason.
    os.execv(python, [python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/conformance", *pytest_args])


if __name__ == "__main__":
    sys.exit(main())
