#!/usr/bin/env bash
# tests/compose/dockerd.sh start|stop: a Docker engine for the compose
# end-to-end test. `start` uses the engine that answers, or starts Debian's
# dockerd with no bridge network and no iptables rules (the test's
# containers use the host's network, on 127.0.0.1 only) and records its pid
# and start time; `stop` stops only a dockerd that `start` started, and only
# while that pid is still the same process.
set -euo pipefail
# shellcheck source=../../scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

dir="$CACHE/dockerd"
pidf="$dir/dockerd.pid" idf="$dir/dockerd.id"
proc_start() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }

case "${1:-}" in
  start)
    if docker info >/dev/null 2>&1; then log "using the Docker engine that answers"; exit 0; fi
    command -v dockerd >/dev/null || die "dockerd is missing: scripts/setup.sh docker installs it"
    # node-exporter binds / with rslave propagation, which needs / to be a
    # shared mount: systemd makes it one at boot, a container without
    # systemd (a CI sandbox) leaves it private.
    if [[ "$(findmnt -no PROPAGATION / 2>/dev/null)" == private ]]; then
      log "making / a shared mount, as systemd does at boot (node-exporter's rslave bind needs it)"
      mount --make-rshared /
    fi
    mkdir -p "$dir"
    dockerd --bridge=none --iptables=false --ip-masq=false \
      --exec-root "$dir/exec" --pidfile "$dir/dockerd-own.pid" >"$dir/dockerd.log" 2>&1 &
    pid=$!
    echo "$pid" >"$pidf"
    proc_start "$pid" >"$idf"
    for _ in $(seq 60); do
      if docker info >/dev/null 2>&1; then log "dockerd started (pid $pid; log $dir/dockerd.log)"; exit 0; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    tail -n 20 "$dir/dockerd.log" >&2
    kill "$pid" 2>/dev/null || true
    rm -f "$pidf" "$idf"
    die "dockerd did not start; log: $dir/dockerd.log"
    ;;
  stop)
    [[ -f "$pidf" ]] || exit 0
    pid=$(cat "$pidf")
    if [[ -n "$pid" && "$(proc_start "$pid")" == "$(cat "$idf" 2>/dev/null)" ]]; then
      kill "$pid"
      for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      log "dockerd (pid $pid) stopped"
    else
      warn "pid $pid is no longer the dockerd this script started: left alone"
    fi
    rm -f "$pidf" "$idf"
    ;;
  *) echo "usage: tests/compose/dockerd.sh start|stop" >&2; exit 2 ;;
esac
