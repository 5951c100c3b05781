#!/usr/bin/env bash
# The report command: see scripts/report/__main__.py (or --help).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[[ -x "$CACHE/venv/current/bin/python" ]] || "$ROOT/scripts/setup.sh" python
# The InfluxDB token: the caller's INFLUX_TOKEN; else, while the compose
# stack's InfluxDB runs, its generated one; else the native stack's (.env.local).
if [[ -z "${INFLUX_TOKEN:-}" ]] && command -v docker >/dev/null && [[ -n "$(compose ps -q influxdb 2>/dev/null)" ]]; then
  if INFLUX_TOKEN=$(compose_secret influx_token 2>/dev/null); then export INFLUX_TOKEN; else unset INFLUX_TOKEN; fi
fi
if [[ -z "${INFLUX_TOKEN:-}" && -f "$ROOT/.env.local" ]]; then
  set -a
  # shellcheck source=/dev/null # generated secrets, not in the repo
  . "$ROOT/.env.local"
  set +a
fi
# The k6 build whose `k6 x mqtt-merge` merges a split run's instance files.
MQTTBENCH_K6_BIN="$(k6_bin)"
export MQTTBENCH_K6_BIN
# From the caller's directory, so that relative paths in arguments work.
PYTHONPATH="$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}" exec "$CACHE/venv/current/bin/python" -m report "$@"
