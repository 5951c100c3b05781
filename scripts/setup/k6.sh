#!/usr/bin/env bash
# Builds k6 with our MQTT extension: what xk6 would generate, a main package
# importing go.k6.io/k6/cmd plus the extension (k6/extension/cmd/k6).
# The cache key includes a hash of the extension's source.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out="$(k6_bin)"
# `k6` for the user is bin/k6 in the clone (git-ignored), a link to the
# build for the current source: `export PATH="$PWD/bin:$PATH"` (README).
link_for_user() { mkdir -p "$ROOT/bin" && ln -sfn "$out" "$ROOT/bin/k6"; }
if [[ -x "$out" ]]; then
  link_for_user
  exit 0
fi
cd "$ROOT/k6/extension"
mkdir -p "$(dirname "$out")"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out.tmp" ./cmd/k6
mv "$out.tmp" "$out"
link_for_user
# Remove the oldest builds (each is ~50 MB) down to three, but none of the
# last day:
# another checkout on this host (MQTTBENCH_TEST_PORT_OFFSET) may be running
# its tests with its own.
find "$CACHE/k6" -mindepth 1 -maxdepth 1 -type d -mmin +1440 -printf '%T@ %p\n' | sort -n | cut -d' ' -f2- |
  while read -r dir; do
    (($(find "$CACHE/k6" -mindepth 1 -maxdepth 1 -type d | wc -l) > 3)) || break
    rm -rf "$dir"
  done
