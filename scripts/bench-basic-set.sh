#!/usr/bin/env bash
# Runs the mqttbs basic set at full scale (full client counts and rates)
# against the native stack's broker, and records achieved rate, latency and
# success rate of each use case in one results file.
# Usage: scripts/bench-basic-set.sh [DURATION]   (default 30m, the spec's hold time)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

duration="${1:-30m}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out_dir="$(python3 -P -c 'from mqttbench import RESULTS; print(RESULTS)')/basic-set-$stamp"
mkdir -p "$out_dir"
# 10,000 connections need file descriptors in this generator process.
ulimit -n "$(ulimit -Hn)"
(($(ulimit -n) >= 11000)) || die "open-files limit $(ulimit -n) is below the 11000 that conn-tcp-10K-100 needs"

"$ROOT/scripts/setup.sh" k6 python
"$ROOT/scripts/stack.sh" status >/dev/null 2>&1 || "$ROOT/scripts/stack.sh" up
k6="$(k6_bin)"
args=(run --quiet --address "" --out "influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6")
for sc in conn-tcp-10K-100 fanout-1-1K-1-1K p2p-1K-1K-1K-1K sharedsub-1K-5-1K-1K; do
  log "$sc (hold $duration)"
  # A failed threshold (exit 99) is a result too: record it and go on.
  K6_NO_USAGE_REPORT=true RUN_ID="$sc-$stamp" DURATION="$duration" RESULTS_DIR="$out_dir" \
    MQTT_URL="mqtt://127.0.0.1:$MQTT_PORT" "$k6" "${args[@]}" "$ROOT/k6/scenarios/$sc.js" || true
done
# The same success and latency figures as the report (mqttbench/report/basic_set.py).
"$CACHE/venv/current/bin/python" -P -m mqttbench.report.basic_set "$out_dir"
