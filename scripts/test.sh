#!/usr/bin/env bash
# The test command (README, CI): builds or installs what is missing (from the
# caches when present), runs the linters (tests/lint.sh), then every test
# against real components:
#   1. Go tests of the k6 extension, with the race detector (embedded
#      mochi-mqtt and real Mosquitto), and the cross-OS go vet, beside
#   2. pytest in MQTTBENCH_TEST_WORKERS workers (pytest-xdist, default 4):
#      the native stack (influxd, Telegraf, node_exporter, Mosquitto; HiveMQ
#      CE and RabbitMQ), the real k6 build running scripts and scenarios,
#      compose and dashboards, and the compose stack end to end under
#      Debian's dockerd, with images built here from the project's own builds
#      (the first run on a machine adds a debootstrap of 1 to 3 minutes).
# It ends with each phase's time and pytest's 30 slowest tests.
# Usage: scripts/test.sh [--fast] [pytest arguments...]
#   --fast  the editing lane: no compose, no HiveMQ CE or RabbitMQ stack, no
#           slow test (pytest -m "not compose and not native_brokers and not slow")
#   e.g. scripts/test.sh -k shared; MQTTBENCH_TEST_WORKERS=1 scripts/test.sh
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

lane=()
if [[ "${1:-}" == --fast ]]; then
  lane=(-m "not compose and not native_brokers and not slow")
  shift
fi
# Four workers on two cores: much of a test is waiting (a JVM starting, a
# run's fixed duration, Telegraf's flush); the compose and native-broker
# lanes run in one worker each, and a test that measures latency against a
# bound runs alone (tests/lanes.py).
workers="${MQTTBENCH_TEST_WORKERS:-4}"
[[ "$workers" =~ ^[1-4]$ ]] ||
  die "MQTTBENCH_TEST_WORKERS=$workers: give 1 to 4 (the port plan, tests/ports.py, serves four workers)"

phases=()
# phase NAME CMD...: runs CMD and records how long it took.
phase() {
  local name="$1" t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  phases+=("$(printf '%-26s %4ds%s' "$name" "$((SECONDS - t0))" "$( ((rc == 0)) || echo "  (failed: exit $rc)")")")
  return "$rc"
}
# shellcheck disable=SC2317 # called by the trap
report_phases() {
  log "phase times"
  printf '  %s\n' "${phases[@]}" >&2
}
trap report_phases EXIT

# shellcheck disable=SC2317 # called by phase
setup() {
  "$ROOT/scripts/setup.sh"
  "$ROOT/scripts/setup.sh" docker
}
phase setup setup
# Bytecode beside the other builds: the suite writes nothing into the
# checkout (its runs go to a results folder of its own, tests/conftest.py).
export PYTHONPYCACHEPREFIX="$CACHE/pycache"
phase lint "$ROOT/tests/lint.sh"

# The Go tests (scripts/go-test.sh), beside pytest, their output kept until
# pytest ends so that the two do not interleave.
go_log=$(mktemp) go_time=$(mktemp)
log "go test -race and the cross-OS go vet: k6 extension (beside pytest)"
(
  t0=$SECONDS rc=0
  "$ROOT/scripts/go-test.sh" || rc=$?
  echo "$((SECONDS - t0))" >"$go_time"
  exit "$rc"
) >"$go_log" 2>&1 &
go_pid=$!

log "pytest ($workers workers): native stack, k6 scripts and scenarios, compose"
cd "$ROOT"
# -rs: a skipped test says why (a broker with no native build, no ../shared).
pytest_rc=0
phase pytest "$CACHE/venv/current/bin/python" -m pytest -q -rs -p no:cacheprovider \
  -n "$workers" --dist loadgroup --durations=30 "${lane[@]}" tests "$@" || pytest_rc=$?

go_rc=0
wait "$go_pid" || go_rc=$?
log "go test -race and go vet: its output"
cat "$go_log"
phases+=("$(printf '%-26s %4ds%s' "go test -race, go vet" "$(cat "$go_time")" \
  "$( ((go_rc == 0)) || echo "  (failed: exit $go_rc; beside pytest)")")")
rm -f "$go_log" "$go_time"
((go_rc == 0)) || die "go test -race or go vet failed (exit $go_rc): see above"
exit "$pytest_rc"
