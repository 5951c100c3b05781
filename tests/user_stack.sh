#!/usr/bin/env bash
# The user's native stack survives the test suite (issue 23): run after the
# README's first command (scripts/bench.sh, which leaves its stack up) and
# around its second (scripts/test.sh).
#   tests/user_stack.sh snapshot FILE   record the stack's processes and data
#   tests/user_stack.sh check FILE      the same processes still run, and
#                                       InfluxDB still holds every point
# The data recorded is the count of mqtt_publishes points in the stack's
# InfluxDB (the benchmark's, and nothing the tests may write there).
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() { echo "usage: tests/user_stack.sh snapshot|check FILE" >&2; exit 2; }
(($# == 2)) || usage
cmd=$1 file=$2

[[ -f "$STATE/stack.env" ]] || die "no native stack was started from this clone ($STATE/stack.env): run scripts/bench.sh first"
# The stack's own settings (ports, org, bucket) and token, as its up wrote them.
# shellcheck disable=SC1091
. "$STATE/stack.env"
# shellcheck disable=SC1090
. "$(secrets_file)"

points() {
  influx_curl -fsS "http://127.0.0.1:$INFLUXDB_PORT/api/v2/query?org=$INFLUXDB_ORG" \
      -H 'Content-Type: application/vnd.flux' -H 'Accept: application/csv' \
      --data "from(bucket:\"$INFLUXDB_BUCKET\") |> range(start:-7d) |> filter(fn:(r) => r._measurement == \"mqtt_publishes\") |> group() |> count()" |
    awk -F, 'NR==2 {print $NF}' | tr -d '\r'
}

snapshot() {
  "$ROOT/scripts/stack.sh" status >/dev/null || die "the native stack is not running: start it (scripts/bench.sh or scripts/stack.sh up) first"
  # Telegraf flushes every 5 s: a run that just ended still has points on
  # their way. The count is the one that holds over a flush.
  local n m _
  m=$(points)
  for _ in 1 2 3 4 5; do
    sleep 6
    n=$m m=$(points)
    [[ "$n" == "$m" ]] && break
  done
  printf 'points=%s\n' "${m:-0}"
  "$ROOT/scripts/stack.sh" status | grep -F running
}

case "$cmd" in
  snapshot)
    snapshot >"$file"
    grep -q '^points=[1-9]' "$file" || die "the stack's InfluxDB holds no mqtt_publishes point: run the benchmark (scripts/bench.sh) first"
    log "user stack recorded in $file: $(head -1 "$file")"
    ;;
  check)
    now=$(snapshot) || die "the user's stack is no longer running: $("$ROOT/scripts/stack.sh" status 2>&1 | tr '\n' ';')"
    if ! diff <(cat "$file") <(printf '%s\n' "$now") >&2; then
      die "the user's stack changed during the tests (above: < before, > after)"
    fi
    log "user stack untouched: same processes, $(head -1 "$file")"
    ;;
  *) usage ;;
esac
