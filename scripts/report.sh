#!/usr/bin/env bash
# The report command: see mqttbench/report/__main__.py (or --help).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[[ -x "$CACHE/venv/current/bin/python" ]] || "$ROOT/scripts/setup.sh" python
load_influx_token
# The k6 build whose `k6 x mqtt-merge` merges a split run's instance files.
MQTTBENCH_K6_BIN="$(k6_bin)"
export MQTTBENCH_K6_BIN
# From the caller's directory, so that relative paths in arguments work.
exec "$CACHE/venv/current/bin/python" -P -m mqttbench.report "$@"
