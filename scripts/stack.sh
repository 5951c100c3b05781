#!/usr/bin/env bash
# The native stack on loopback: influxd, Telegraf, node_exporter and a
# broker, using the same config files as compose.
# Usage: scripts/stack.sh up [--broker NAME] | down | status [SERVICE]
#        scripts/stack.sh restart|stop|start SERVICE
# SERVICE is influxd, node_exporter, broker or telegraf; restart and start use
# the settings `up` recorded in $STATE/stack.env, not the caller's environment.
# A process is signalled only while its pid file still names the process
# start() began: $PIDS/NAME.pid holds only the pid (Telegraf's procstat reads
# the broker's), $PIDS/NAME.id that process's start time and executable.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=stack_pids.sh
. "$(dirname "$0")/stack_pids.sh"

PIDS="$STATE/pids"
LOGS="$STATE/logs"
SERVICES=(influxd node_exporter broker telegraf)
# What `up` ran with, so that restart/start SERVICE starts it the same way (no secrets here).
SETTINGS=(BROKER MQTT_PORT MQTTS_PORT MTLS_PORT WS_PORT INFLUXDB_PORT TELEGRAF_K6_PORT NODE_EXPORTER_PORT INFLUXDB_ORG INFLUXDB_BUCKET
  INFLUXDB_RETENTION TELEGRAF_INTERVAL TELEGRAF_FLUSH_INTERVAL TELEGRAF_HOSTNAME NODE_EXPORTER_FLAGS MQTTBENCH_SECRETS)

usage() {
  cat >&2 <<EOF
usage: scripts/stack.sh up [--broker NAME]      start the native stack (NAME: brokers/NAME with a [native] table)
       scripts/stack.sh down                    stop what up started (data kept in $STATE)
       scripts/stack.sh status [SERVICE]        exit 3 when SERVICE (with none named: any) is not running
       scripts/stack.sh restart|stop|start SERVICE
SERVICE: ${SERVICES[*]}
EOF
  exit 2
}

cmd="${1:-}"; shift || true
BROKER="${BROKER:-mosquitto}"
service=""
while (($#)); do
  case "$1" in
    --broker) BROKER="${2:?--broker needs a name}"; shift 2 ;;
    -*) usage ;;
    *) [[ -z "$service" ]] || usage; service="$1"; shift ;;
  esac
done
export BROKER

# check_broker: BROKER runs natively (its broker.toml says how), else die
# with the reason and the fix.
check_broker() {
  local why
  why=$(python3 -P -m mqttbench.brokers.native check "$BROKER" 2>&1) || die "$why"
}

check_service() {
  local s
  for s in "${SERVICES[@]}"; do [[ "$s" == "$1" ]] && return 0; done
  die "unknown service '$1' (known: ${SERVICES[*]})"
}

# port_free PORT VARIABLE: dies naming what holds PORT (the compose stack,
# another program) and the command that frees it.
port_free() {
  local holder
  if holder=$(port_holder "$1"); then
    die "port $1 ($2) is held by $holder; or choose another port, e.g. $2=$(( $1 + 10000 )) scripts/stack.sh up"
  fi
}

# wait_for NAME SECONDS CHECK...: polls CHECK until it passes.
wait_for() {
  local name="$1" secs="$2"; shift 2
  local i
  for ((i = 0; i < secs * 10; i++)); do
    if "$@" >/dev/null 2>&1; then log "$name is healthy"; return 0; fi
    alive "$name" || { tail -n 20 "$LOGS/$name.log" >&2; die "$name exited during start; log: $LOGS/$name.log"; }
    sleep 0.1
  done
  tail -n 20 "$LOGS/$name.log" >&2
  die "$name did not become healthy in ${secs}s; log: $LOGS/$name.log"
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1"; }

# The one initialisation path of both stacks (compose runs it in its `init`
# service). The token and password reach it as files (process substitution),
# never through argv.
influx_setup() {
  INFLUX_URL="http://127.0.0.1:$INFLUXDB_PORT" \
    INFLUX_TOKEN_FILE=<(printf '%s\n' "$INFLUX_TOKEN") \
    INFLUXDB_ADMIN_PASSWORD_FILE=<(printf '%s\n' "$INFLUXDB_ADMIN_PASSWORD") \
    "$ROOT/scripts/init/influxdb.sh" >&2 ||
    die "InfluxDB setup failed (log: $LOGS/influxd.log); a token mismatch means: restore INFLUX_TOKEN in $(secrets_file), or remove $STATE/influxdb to start afresh"
}

# One function per service: what up, start and restart run.
start_influxd() {
  port_free "$INFLUXDB_PORT" INFLUXDB_PORT
  mkdir -p "$STATE/influxdb"
  start influxd "$(influxd_bin)" --bolt-path "$STATE/influxdb/influxd.bolt" --engine-path "$STATE/influxdb/engine" \
    --sqlite-path "$STATE/influxdb/influxd.sqlite" --http-bind-address "127.0.0.1:$INFLUXDB_PORT" \
    --reporting-disabled --log-level warn
  wait_for influxd 30 http_ok "http://127.0.0.1:$INFLUXDB_PORT/health"
  influx_setup
}

start_node_exporter() {
  port_free "$NODE_EXPORTER_PORT" NODE_EXPORTER_PORT
  # The collectors the dashboards use (NODE_EXPORTER_FLAGS in .env, shared with compose).
  local ne_flags
  read -r -a ne_flags <<<"$NODE_EXPORTER_FLAGS"
  start node_exporter prometheus-node-exporter --web.listen-address="127.0.0.1:$NODE_EXPORTER_PORT" "${ne_flags[@]}"
  wait_for node_exporter 10 http_ok "http://127.0.0.1:$NODE_EXPORTER_PORT/metrics"
}

# The broker's listeners: plain, TLS, mutual TLS, WebSocket.
broker_ports_free() {
  port_free "$MQTT_PORT" MQTT_PORT
  port_free "$MQTTS_PORT" MQTTS_PORT
  port_free "$MTLS_PORT" MTLS_PORT
  port_free "$WS_PORT" WS_PORT
}

start_broker() {
  broker_ports_free
  # The CA, server and client certificates (kept once made): the scenarios'
  # TLS_CA, TLS_CERT and TLS_KEY default to them.
  sh "$ROOT/scripts/init/tls.sh" "$STATE/tls"
  # 10K+ connections need file descriptors: the broker inherits this limit.
  ulimit -n "$(ulimit -Hn)"
  # The command and its readiness checks, from [native] of its broker.toml.
  local native_command=() native_ready=() native_env=() native_ports=() native_stop=() native_ready_seconds=10
  local native_metrics_url="" check plan p
  plan=$(python3 -P -m mqttbench.brokers.native plan "$BROKER" "$STATE") || die "cannot run broker $BROKER natively"
  eval "$plan"
  # Its own ports beyond the four (an Erlang node's distribution and epmd, a metrics endpoint).
  for p in "${native_ports[@]}"; do
    port_free "${p#*=}" "${p%%=*}"
    # Recorded with the settings, so that `restart broker` binds the same ports.
    printf '%s=%q\n' "${p%%=*}" "${p#*=}" >>"$STATE/stack.env"
  done
  # What Telegraf and `down` need of this plan, whichever shell runs them later.
  declare -p native_metrics_url native_stop >"$STATE/broker.plan"
  # Its environment in this subshell only: start records the broker's own pid.
  (
    ((${#native_env[@]} == 0)) || export "${native_env[@]}"
    start broker "${native_command[@]}"
  )
  for check in "${native_ready[@]}"; do wait_for broker "$native_ready_seconds" eval "$check"; done
}

# broker_stopped: runs what the broker's [native] stop says once it has
# stopped (a daemon it started, such as epmd, outlives it).
broker_stopped() {
  local native_stop=() c
  [[ -f "$STATE/broker.plan" ]] || return 0
  # shellcheck source=/dev/null # written by start_broker
  . "$STATE/broker.plan"
  for c in "${native_stop[@]}"; do eval "$c" >>"$LOGS/broker.log" 2>&1 || warn "broker stop step failed: $c"; done
}

start_telegraf() {
  port_free "$TELEGRAF_K6_PORT" TELEGRAF_K6_PORT
  # The broker's metrics endpoint where its [native] table names one.
  local native_metrics_url="" native_stop=()
  # shellcheck source=/dev/null # written by start_broker
  [[ ! -f "$STATE/broker.plan" ]] || . "$STATE/broker.plan"
  mkdir -p "$STATE/telegraf-buffer"
  INFLUX_URL="http://127.0.0.1:$INFLUXDB_PORT" INFLUX_ORG="$INFLUXDB_ORG" INFLUX_BUCKET="$INFLUXDB_BUCKET" \
  MQTT_SYS_URL="tcp://127.0.0.1:$MQTT_PORT" BROKER_PIDFILE="$PIDS/broker.pid" \
  NODE_EXPORTER_URL="http://127.0.0.1:$NODE_EXPORTER_PORT/metrics" BROKER_METRICS_URL="$native_metrics_url" TELEGRAF_K6_LISTEN="127.0.0.1:$TELEGRAF_K6_PORT" \
  TELEGRAF_BUFFER_DIR="$STATE/telegraf-buffer" \
    start telegraf "$(telegraf_bin)" --config "$ROOT/telegraf/telegraf.conf" \
      --config-directory "$ROOT/telegraf/telegraf.d" \
      --config "$ROOT/$(broker_fact "$BROKER" metrics.telegraf)" --config "$ROOT/telegraf/native/procstat.conf"
  wait_for telegraf 20 http_ok "http://127.0.0.1:$TELEGRAF_K6_PORT/ping"
}

save_settings() {
  local v
  mkdir -p "$STATE"
  for v in "${SETTINGS[@]}"; do printf '%s=%q\n' "$v" "${!v:-}"; done >"$STATE/stack.env"
}

# load_settings: the settings of the last `up`, over the caller's environment.
load_settings() {
  [[ -f "$STATE/stack.env" ]] ||
    die "the native stack in $STATE was never started (no $STATE/stack.env): scripts/stack.sh up first"
  set -a
  # shellcheck source=/dev/null # written by save_settings
  . "$STATE/stack.env"
  set +a
}

up() {
  check_broker
  local bin
  for bin in "$(influxd_bin)" "$(telegraf_bin)"; do
    [[ -x "$bin" ]] || die "$bin is missing: run scripts/setup.sh first"
  done
  local s running=()
  for s in "${SERVICES[@]}"; do alive "$s" && running+=("$s"); done
  if ((${#running[@]})); then
    die "the native stack is already running (${running[*]}): scripts/stack.sh status, or scripts/stack.sh down first"
  fi
  port_free "$INFLUXDB_PORT" INFLUXDB_PORT
  port_free "$TELEGRAF_K6_PORT" TELEGRAF_K6_PORT
  port_free "$NODE_EXPORTER_PORT" NODE_EXPORTER_PORT
  broker_ports_free
  ensure_secrets
  save_settings
  start_influxd
  start_node_exporter
  start_broker
  start_telegraf
  echo "$BROKER" >"$STATE/broker"
  # Started here, by hand or by bench.sh: no comparison's to switch any more
  # (scripts/compare_runs.sh marks the stacks it started).
  rm -f "$STATE/compared"
  log "native stack up: broker $BROKER on mqtt://127.0.0.1:$MQTT_PORT (mqtts://127.0.0.1:$MQTTS_PORT, mutual TLS mqtts://127.0.0.1:$MTLS_PORT, ws://127.0.0.1:$WS_PORT/mqtt; TLS files in $STATE/tls), InfluxDB http://127.0.0.1:$INFLUXDB_PORT, k6 output influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6"
}

down() {
  local s stopped=()
  # Telegraf first, so it flushes what it holds while InfluxDB still runs.
  for s in telegraf broker node_exporter influxd; do
    stop "$s" && stopped+=("$s")
    [[ "$s" != broker ]] || broker_stopped
  done
  log "stopped: ${stopped[*]:-nothing was running}; data kept in $STATE"
}

status() {
  local s rc=0 list=("${SERVICES[@]}")
  if [[ -n "$service" ]]; then check_service "$service"; list=("$service"); fi
  for s in "${list[@]}"; do
    if ours "$s"; then
      printf '%-14s running (pid %s)\n' "$s" "$PID"
    else
      printf '%-14s stopped%s\n' "$s" "${WHY:+ (stale pid file: $WHY)}"
      rc=3
    fi
  done
  [[ -z "$service" && -f "$STATE/broker" ]] && printf '%-14s %s\n' "broker name" "$(cat "$STATE/broker")"
  return $rc
}

# service_cmd restart|stop|start: one service, with the settings of the last up.
service_cmd() {
  [[ -n "$service" ]] || usage
  check_service "$service"
  if [[ "$cmd" != start ]]; then
    if stop "$service"; then log "$service stopped"; else log "$service was not running"; fi
    [[ "$service" != broker ]] || broker_stopped
  fi
  [[ "$cmd" == stop ]] && return 0
  if ours "$service"; then die "$service is already running (pid $PID): scripts/stack.sh restart $service"; fi
  load_settings
  check_broker
  ensure_secrets
  "start_$service"
  log "$service started (pid $(pid_of "$service")) with the settings in $STATE/stack.env"
}

case "$cmd" in
  up) [[ -z "$service" ]] || usage; up ;;
  down) [[ -z "$service" ]] || usage; down ;;
  status) status ;;
  restart|stop|start) service_cmd ;;
  *) usage ;;
esac
