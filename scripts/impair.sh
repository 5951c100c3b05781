# shellcheck shell=bash
# Network impairment of a run (scripts/bench.sh --impair PROFILE,
# scripts/compare.sh --impair a,b): a Toxiproxy between the generator and
# the broker with the profile's toxics (mqttbench/stack/impair.py). Natively, a
# Toxiproxy of the run's own on loopback; under compose, the core's
# `toxiproxy` service. Sourced after lib.sh. Whatever way the run ends,
# impair_stop (the caller's EXIT trap) removes the proxy and stops a server
# it started: no impairment outlives its run.

: "${TOXIPROXY_PORT:=8474}"       # Toxiproxy's API (published on 127.0.0.1 under compose)
: "${TOXIPROXY_MQTT_PORT:=21883}" # natively, the impaired path to the broker
export TOXIPROXY_PORT TOXIPROXY_MQTT_PORT
impair_pid="" impair_events_pid="" impair_url="" impair_api=""

# impair_check PROFILE: the profile is valid (or the run stops, naming
# --impair and the valid names), before anything starts.
impair_check() {
  python3 -P -m mqttbench.stack.impair check "$1" >/dev/null || exit 2
}

# ours PID EXE: PID is still the process we started from EXE (not a pid
# recycled since). The kernel names the executable by its resolved path: a
# relative or symlinked MQTTBENCH_CACHE must compare resolved too.
ours() { [[ -n "$1" && "$(readlink "/proc/$1/exe" 2>/dev/null)" == "$(readlink -f "$2")" ]]; }

# impair_apply PROFILE LISTEN UPSTREAM: the proxy and its toxics, through
# impair_api; exports NETWORK (the record, for the result file).
impair_apply() {
  NETWORK=$(python3 -P -m mqttbench.stack.impair apply "$1" --api "$impair_api" --listen "$2" --upstream "$3") ||
    die "--impair $1: the profile could not be set in Toxiproxy (above)"
  export NETWORK
  log "network impaired: profile $1 through Toxiproxy $2 -> $3 ($(jq -r '[.toxics[] | "\(.type) \(.stream) \(.attributes | to_entries | map("\(.key)=\(.value)") | join(","))"] | join("; ")' <<<"$NETWORK"))"
}

# impair_start PROFILE UPSTREAM(host:port): natively, starts Toxiproxy on
# loopback and sets the profile; the impaired broker URL is impair_url and
# the API TOXIPROXY_URL (exported, for a storm scenario). Not in a $(...):
# the subshell would lose the server's pid.
impair_start() {
  local bin holder port i
  bin="$(toxiproxy_bin)"
  [[ -x "$bin" ]] || "$ROOT/scripts/setup.sh" toxiproxy >&2
  for port in "$TOXIPROXY_PORT" "$TOXIPROXY_MQTT_PORT"; do
    if holder=$(port_holder "$port"); then
      die "--impair needs port $port ($([[ $port == "$TOXIPROXY_PORT" ]] && echo TOXIPROXY_PORT || echo TOXIPROXY_MQTT_PORT)), held by $holder; or move it: TOXIPROXY_PORT=... TOXIPROXY_MQTT_PORT=..."
    fi
  done
  mkdir -p "$STATE/logs"
  "$bin" -host 127.0.0.1 -port "$TOXIPROXY_PORT" >>"$STATE/logs/toxiproxy.log" 2>&1 &
  impair_pid=$!
  impair_api="http://127.0.0.1:$TOXIPROXY_PORT"
  for ((i = 0; i < 50; i++)); do
    curl -fsS -o /dev/null "$impair_api/version" 2>/dev/null && break
    ours "$impair_pid" "$bin" || die "Toxiproxy did not start: see $STATE/logs/toxiproxy.log"
    sleep 0.1
  done
  impair_apply "$1" "127.0.0.1:$TOXIPROXY_MQTT_PORT" "$2"
  TOXIPROXY_URL="$impair_api"
  export TOXIPROXY_URL
  # shellcheck disable=SC2034 # read by the sourcing script
  impair_url="mqtt://127.0.0.1:$TOXIPROXY_MQTT_PORT"
}

# impair_compose PROFILE: under compose, the core's toxiproxy service gets
# the profile (its TOXIPROXY_LISTEN, TOXIPROXY_UPSTREAM and TOXIPROXY_API,
# from compose.yaml and any override); impair_url and TOXIPROXY_URL are as
# the k6 container reaches them.
impair_compose() {
  local env
  env=$(compose config --format json | jq -c '.services.toxiproxy.environment // {}')
  [[ "$(jq -r '.TOXIPROXY_LISTEN // ""' <<<"$env")" != "" ]] ||
    die "--impair under compose needs the toxiproxy service of compose.yaml (with TOXIPROXY_LISTEN and TOXIPROXY_UPSTREAM)"
  impair_api="http://127.0.0.1:$TOXIPROXY_PORT"
  curl -fsS -o /dev/null "$impair_api/version" ||
    die "--impair: the toxiproxy service does not answer at $impair_api (docker compose ps toxiproxy; TOXIPROXY_PORT)"
  # A proxy an earlier run left (it was killed before its cleanup) goes first.
  python3 -P -m mqttbench.stack.impair remove --api "$impair_api"
  impair_apply "$1" "$(jq -r .TOXIPROXY_LISTEN <<<"$env")" "$(jq -r .TOXIPROXY_UPSTREAM <<<"$env")"
  TOXIPROXY_URL=$(jq -r '.TOXIPROXY_API // "http://toxiproxy:8474"' <<<"$env")
  export TOXIPROXY_URL
  # shellcheck disable=SC2034 # read by the sourcing script
  impair_url="mqtt://$(jq -r .TOXIPROXY_LISTEN <<<"$env")"
}

# impair_events PROFILE: the profile's timed events (a reset, a timeout),
# counted from now, in the background.
impair_events() {
  [[ "$(jq '.events | length' <<<"$NETWORK")" != 0 ]] || return 0
  python3 -P -m mqttbench.stack.impair events "$1" --api "$impair_api" &
  impair_events_pid=$!
}

# impair_stop: no impairment left: the events stopped, the proxy removed,
# a Toxiproxy this run started stopped (each pid checked to be ours first).
impair_stop() {
  if ours "$impair_events_pid" "$(readlink -f "$(command -v python3)")"; then
    kill "$impair_events_pid" 2>/dev/null || true
  fi
  impair_events_pid=""
  if [[ -n "$impair_api" ]] && { [[ -z "$impair_pid" ]] || ours "$impair_pid" "$(toxiproxy_bin)"; }; then
    python3 -P -m mqttbench.stack.impair remove --api "$impair_api" || true
  fi
  impair_api=""
  if ours "$impair_pid" "$(toxiproxy_bin)"; then
    kill "$impair_pid" 2>/dev/null || true
    wait "$impair_pid" 2>/dev/null || true
  fi
  impair_pid=""
}
