#!/usr/bin/env bash
# The test command (README, CI): builds or installs what is missing (from the
# caches when present), runs the linters (scripts/lint.sh), then every test
# against real components:
#   1. Go tests of the k6 extension, with the race detector (embedded
#      mochi-mqtt and real Mosquitto),
#   2. pytest: the native stack (influxd, Telegraf, node_exporter, Mosquitto),
#      the real k6 build running scripts and scenarios, compose and dashboards,
#      and the compose stack end to end under Debian's dockerd, with images
#      built here from the project's own builds (about 2.5 minutes; the first
#      run on a machine adds a debootstrap of 1 to 3 minutes).
# Extra arguments go to pytest (e.g. -k shared).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/setup.sh" docker
"$ROOT/scripts/lint.sh"

# With the race detector: the extension is concurrent throughout (readers,
# the poller, the reporter, publish phases) and a data race must not ship.
# It costs about 2 minutes of compiling on a cold build cache, and the
# tests run in ~35 s instead of ~30 s.
log "go test -race: k6 extension"
(cd "$ROOT/k6/extension" && MQTTBENCH_REQUIRE_BROKERS=1 go test -race -count=1 ./...)
# The poller and getrusage are Linux/Unix-only: laptops on macOS or Windows
# must still get a k6 that builds (with goroutine readers there).
for os in darwin windows; do
  (cd "$ROOT/k6/extension" && GOOS="$os" go vet ./...)
done

log "pytest: native stack, k6 scripts and scenarios"
cd "$ROOT"
# -rs: a skipped test says why (a broker with no native build, no ../shared).
"$CACHE/venv/current/bin/python" -m pytest -q -rs -p no:cacheprovider tests "$@"
