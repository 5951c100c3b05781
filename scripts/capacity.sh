#!/usr/bin/env bash
# The capacity search: see mqttbench/capacity/__main__.py (or --help).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# --compose and --native are this script's (where the broker runs); the
# rest go to the search (mqttbench/capacity/__main__.py).
target=false broker=mosquitto mode=native args=()
for ((i = 1; i <= $#; i++)); do
  case "${!i}" in
    --compose) mode=compose; continue ;;
    --native) mode=native; continue ;;
    --target|--target=*) target=true ;;
    --broker) j=$((i + 1)); broker="${!j:-}" ;;
    --broker=*) broker="${!i#--broker=}" ;;
    -h|--help) target=true ;; # help needs no stack
  esac
  args+=("${!i}")
done

$target || is_broker "$broker" || die "unknown broker '$broker' (known: $(brokers | xargs)); a broker this stack does not start: --target NAME=URL"
[[ -x "$CACHE/venv/current/bin/python" && -x "$(k6_bin)" ]] || "$ROOT/scripts/setup.sh"
MQTTBENCH_K6_BIN="$(k6_bin)"
export MQTTBENCH_K6_BIN
if ! $target && [[ "$mode" == compose ]]; then
  # The broker's profile with the core (InfluxDB, Telegraf, Grafana); k6
  # runs here, through the published loopback ports. The broker's CPU is
  # its container's, normalised to its limit BROKER_CPUS.
  compose_profile "$broker" || exit 1
  compose --profile "$broker" up -d --wait
  INFLUX_TOKEN=$(compose_secret influx_token)
  export INFLUX_TOKEN MQTTBENCH_BROKER_CPUS="$BROKER_CPUS"
  export MQTTBENCH_MQTT_URL="mqtt://127.0.0.1:$MQTT_PORT" MQTTBENCH_K6_OUT="influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6"
  ulimit -n "$(ulimit -Hn)"
elif ! $target; then
  # The native stack runs the broker; its InfluxDB and Telegraf measure
  # the trials. A running stack with another broker is not ours to stop.
  if "$ROOT/scripts/stack.sh" status >/dev/null 2>&1; then
    running="$(cat "$STATE/broker" 2>/dev/null || true)"
    [[ "$running" == "$broker" ]] || die "the native stack runs broker '$running': scripts/stack.sh down first, or --broker $running"
  else
    "$ROOT/scripts/stack.sh" up --broker "$broker"
  fi
  export MQTTBENCH_MQTT_URL="mqtt://127.0.0.1:$MQTT_PORT" MQTTBENCH_K6_OUT="influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6"
  ulimit -n "$(ulimit -Hn)"
fi
load_influx_token
exec "$CACHE/venv/current/bin/python" -P -m mqttbench.capacity "${args[@]}"
