#!/usr/bin/env bash
# The Go half of the test command (scripts/test.sh runs it beside pytest):
# the k6 extension's tests with the race detector, then go vet for macOS and
# Windows. A script of its own, so that the first failure is its exit status:
# as a function on the left of `||`, bash ignored `set -e` in it and a failed
# `go test` passed as the last `go vet`'s 0 (CI, r36).
# With the race detector: the extension is concurrent throughout (readers,
# the poller, the reporter, publish phases) and a data race must not ship.
# The poller and getrusage are Linux/Unix-only: laptops on macOS or Windows
# must still get a k6 that builds (with goroutine readers there).
# Usage: scripts/go-test.sh [go test arguments...]   e.g. -run TestPoller
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cd "$ROOT/k6/extension"
MQTTBENCH_REQUIRE_BROKERS=1 go test -race -count=1 "$@" ./...
for os in darwin windows; do GOOS="$os" go vet ./...; done
