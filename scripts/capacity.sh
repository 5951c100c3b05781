#!/usr/bin/env bash
# The capacity search: see mqttbench/capacity/__main__.py (or --help).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# The stack the search runs on (--native, --compose) is the search's to
# start (mqttbench/stack); here only what Python needs before it starts.
[[ -x "$CACHE/venv/current/bin/python" && -x "$(k6_bin)" ]] || "$ROOT/scripts/setup.sh"
MQTTBENCH_K6_BIN="$(k6_bin)"
export MQTTBENCH_K6_BIN
# The trials' thousands of connections; the stack's broker inherits it too.
ulimit -n "$(ulimit -Hn)"
# --target: a broker elsewhere, measured into the native stack's InfluxDB if it runs.
load_influx_token
exec "$CACHE/venv/current/bin/python" -P -m mqttbench.capacity "$@"
