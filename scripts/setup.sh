#!/usr/bin/env bash
# Installs or builds every pinned tool this project runs, cached outside the
# clone ($CACHE, keyed by version): a second run is a cache hit in seconds.
# Usage: scripts/setup.sh [step...]   (default: all steps)
set -euo pipefail
# shellcheck source=setup/lib.sh
. "$(dirname "$0")/setup/lib.sh"

command -v go >/dev/null || die "Go is required (go >= 1.25 for k6 $K6_VERSION): install it and re-run"
all=(debian python telegraf k6 compose influxd staticcheck toxiproxy)
# A broker the native stack builds has a step of its name (brokers/NAME).
for b in $(brokers); do [[ -x "$ROOT/scripts/setup/$b.sh" ]] && all+=("$b"); done
# On request only: the Docker engine for the compose end-to-end test.
optional=(docker)
steps=("${@:-${all[@]}}")
for s in "${steps[@]}"; do
  [[ -x "$ROOT/scripts/setup/$s.sh" ]] || die "unknown setup step '$s' (known: ${all[*]} ${optional[*]})"
done
t0=$SECONDS
for s in "${steps[@]}"; do
  step "$s" "$ROOT/scripts/setup/$s.sh"
done
log "setup done in $((SECONDS - t0))s; cache: $CACHE"
