#!/bin/sh
# `influx ping` of the healthcheck, and nothing else: this is a stand-in.
[ "${1:-}" = ping ] || { echo "influx (stand-in): only 'ping' is implemented" >&2; exit 2; }
exec curl -fsS -o /dev/null --max-time 3 "${INFLUX_HOST:-http://localhost:8086}/health"
