# shellcheck shell=bash
# Network impairment of a native run (scripts/bench.sh --impair PROFILE,
# scripts/compare.sh --impair a,b): a Toxiproxy of the run's own, on
# loopback, between the generator and the broker, with the profile's
# toxics (scripts/impair.py). Sourced after lib.sh. Whatever way the run
# ends, impair_stop (the caller's EXIT trap) removes the proxy and stops the
# server: no impairment outlives its run.

: "${TOXIPROXY_PORT:=8474}"       # Toxiproxy's API
: "${TOXIPROXY_MQTT_PORT:=21883}" # the impaired path to the broker
export TOXIPROXY_PORT TOXIPROXY_MQTT_PORT
impair_pid="" impair_events_pid="" impair_url=""

# impair_check PROFILE: the profile is valid (or the run stops, naming
# --impair and the valid names), before anything starts.
impair_check() {
  python3 "$ROOT/scripts/impair.py" check "$1" >/dev/null || exit 2
}

# ours PID EXE: PID is still the process we started from EXE (not a pid
# recycled since).
ours() { [[ -n "$1" && "$(readlink "/proc/$1/exe" 2>/dev/null)" == "$2" ]]; }

# impair_start PROFILE UPSTREAM(host:port): starts Toxiproxy and sets the
# profile; exports NETWORK (the record, for the result file) and prints
# the impaired broker URL in impair_url (not printed: a $(...) subshell
# would lose the server's pid).
impair_start() {
  local bin api holder port
  bin="$(toxiproxy_bin)"
  [[ -x "$bin" ]] || "$ROOT/scripts/setup.sh" toxiproxy >&2
  api="http://127.0.0.1:$TOXIPROXY_PORT"
  for port in "$TOXIPROXY_PORT" "$TOXIPROXY_MQTT_PORT"; do
    if holder=$(port_holder "$port"); then
      die "--impair needs port $port ($([[ $port == "$TOXIPROXY_PORT" ]] && echo TOXIPROXY_PORT || echo TOXIPROXY_MQTT_PORT)), held by $holder; or move it: TOXIPROXY_PORT=... TOXIPROXY_MQTT_PORT=..."
    fi
  done
  mkdir -p "$STATE/logs"
  "$bin" -host 127.0.0.1 -port "$TOXIPROXY_PORT" >>"$STATE/logs/toxiproxy.log" 2>&1 &
  impair_pid=$!
  local i
  for ((i = 0; i < 50; i++)); do
    curl -fsS -o /dev/null "$api/version" 2>/dev/null && break
    ours "$impair_pid" "$bin" || die "Toxiproxy did not start: see $STATE/logs/toxiproxy.log"
    sleep 0.1
  done
  NETWORK=$(python3 "$ROOT/scripts/impair.py" apply "$1" --api "$api" --listen "127.0.0.1:$TOXIPROXY_MQTT_PORT" --upstream "$2") ||
    die "--impair $1: the profile could not be set in Toxiproxy (above)"
  TOXIPROXY_URL="$api"
  export NETWORK TOXIPROXY_URL
  log "network impaired: profile $1 through Toxiproxy 127.0.0.1:$TOXIPROXY_MQTT_PORT -> $2 ($(jq -r '[.toxics[] | "\(.type) \(.stream) \(.attributes | to_entries | map("\(.key)=\(.value)") | join(","))"] | join("; ")' <<<"$NETWORK"))"
  # shellcheck disable=SC2034 # read by the sourcing script
  impair_url="mqtt://127.0.0.1:$TOXIPROXY_MQTT_PORT"
}

# impair_events PROFILE: the profile's timed events (a reset, a timeout),
# counted from now, in the background.
impair_events() {
  [[ "$(jq '.events | length' <<<"$NETWORK")" != 0 ]] || return 0
  python3 "$ROOT/scripts/impair.py" events "$1" --api "http://127.0.0.1:$TOXIPROXY_PORT" &
  impair_events_pid=$!
}

# impair_stop: no impairment left: the events stopped, the proxy removed,
# Toxiproxy stopped (each pid checked to be ours first).
impair_stop() {
  if ours "$impair_events_pid" "$(readlink -f "$(command -v python3)")"; then
    kill "$impair_events_pid" 2>/dev/null || true
  fi
  impair_events_pid=""
  [[ -n "$impair_pid" ]] || return 0
  if ours "$impair_pid" "$(toxiproxy_bin)"; then
    python3 "$ROOT/scripts/impair.py" remove --api "http://127.0.0.1:$TOXIPROXY_PORT" || true
    kill "$impair_pid" 2>/dev/null || true
    wait "$impair_pid" 2>/dev/null || true
  fi
  impair_pid=""
}
