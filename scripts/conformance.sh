#!/usr/bin/env bash
# The broker conformance suite (tests/conformance) against a running broker:
# its start-up log has no error line its README does not explain; p2p, fanin
# and fanout at QoS 0, 1 and 2 deliver exactly; k6's counts equal the
# broker's own counters (offsets from brokers/<name>/broker.toml); every auth
# claim of brokers/<name>/README.md holds. Load goes to the broker: run it on
# a stack of its own, with no other client publishing or reading $SYS.
#
# Usage: scripts/conformance.sh --broker NAME --mqtt-url URL [--metrics-url URL | --no-metrics]
#          [--secret-file FILE] [--log-file FILE] [--native] [-- PYTEST ARGS...]
#   --broker       a broker of this stack: its facts are brokers/NAME/broker.toml
#   --mqtt-url     mqtt://HOST:PORT of the broker
#   --metrics-url  its Prometheus endpoint (brokers whose [metrics] input is inputs.prometheus)
#   --no-metrics   it serves none where it runs (broker.toml [compose] metrics = false):
#                  deliveries are checked, its counters and HTTP claims are not
#   --secret-file  the generated secret its claims name (NanoMQ's HTTP password,
#                  EMQX's dashboard password: scripts/compose.sh secret NAME > FILE)
#   --log-file     the broker's log since its start (docker compose logs --no-log-prefix NAME > FILE)
#   --native       it is the native stack's broker (scripts/stack.sh): its [native.capabilities]
# Without --broker, scripts/test.sh runs the suite on Debian's Mosquitto.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() { sed -n '9,19p' "$0" >&2; exit 2; }
broker="" url="" metrics="" no_metrics=false secret="" logfile="" native=""
while (($#)); do
  case "$1" in
    --broker) broker="${2:?--broker needs a name}"; shift 2 ;;
    --mqtt-url) url="${2:?--mqtt-url needs a URL}"; shift 2 ;;
    --metrics-url) metrics="${2:?--metrics-url needs a URL}"; shift 2 ;;
    --no-metrics) no_metrics=true; shift ;;
    --secret-file) secret="${2:?--secret-file needs a file}"; shift 2 ;;
    --log-file) logfile="${2:?--log-file needs a file}"; shift 2 ;;
    --native) native=1; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) warn "unknown argument '$1'"; usage ;;
  esac
done

# Every input is checked before any connection.
mapfile -t known < <(brokers)
[[ -n "$broker" ]] || die "--broker is required (one of: ${known[*]})"
is_broker "$broker" || die "--broker $broker: no brokers/$broker/broker.toml (known: ${known[*]})"
[[ "$url" =~ ^mqtt://[^/:]+(:[0-9]+)?/?$ ]] || die "--mqtt-url '$url' is not mqtt://HOST:PORT"
if [[ "$(broker_fact "$broker" metrics.input)" == inputs.prometheus && -z "$metrics" ]] && ! $no_metrics; then
  die "--metrics-url is required for $broker: its Prometheus endpoint (brokers/$broker/broker.toml [metrics]), or --no-metrics where it serves none"
fi
! $no_metrics || [[ -z "$metrics" ]] || die "--no-metrics and --metrics-url: give one"
[[ -z "$metrics" || "$metrics" =~ ^https?:// ]] || die "--metrics-url '$metrics' is not an http:// URL"
for f in "$secret" "$logfile"; do
  [[ -z "$f" || -r "$f" ]] || die "cannot read '$f' (--secret-file / --log-file)"
done

export CONFORMANCE_BROKER="$broker" CONFORMANCE_MQTT_URL="$url" CONFORMANCE_METRICS_URL="$metrics"
export CONFORMANCE_SECRET_FILE="${secret:+$(realpath "$secret")}" CONFORMANCE_LOG_FILE="${logfile:+$(realpath "$logfile")}"
export CONFORMANCE_NATIVE="$native"
cd "$ROOT"
# -rs: every skipped check is printed with its reason.
exec "$CACHE/venv/current/bin/python" -m pytest -q -rs -p no:cacheprovider tests/conformance "$@"
