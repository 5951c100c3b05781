#!/usr/bin/env bash
# The native stack on loopback: influxd, Telegraf, node_exporter and a
# broker, using the same config files as compose.
# Usage: scripts/stack.sh up|down|status [--broker mosquitto]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

NATIVE_BROKERS=(mosquitto)
ALL_BROKERS=(mosquitto emqx nanomq vernemq)
PIDS="$STATE/pids"
LOGS="$STATE/logs"
SERVICES=(influxd node_exporter broker telegraf)

usage() { echo "usage: scripts/stack.sh up|down|status [--broker ${NATIVE_BROKERS[*]}]" >&2; exit 2; }

cmd="${1:-}"; shift || true
BROKER="${BROKER:-mosquitto}"
while (($#)); do
  case "$1" in
    --broker) BROKER="${2:?--broker needs a name}"; shift 2 ;;
    *) usage ;;
  esac
done
export BROKER

check_broker() {
  local b
  for b in "${NATIVE_BROKERS[@]}"; do [[ "$b" == "$BROKER" ]] && return 0; done
  for b in "${ALL_BROKERS[@]}"; do
    [[ "$b" == "$BROKER" ]] && die "broker '$BROKER' has no native build on this machine: run it with compose (docker compose --profile $BROKER up) or use --broker mosquitto"
  done
  die "unknown broker '$BROKER' (known: ${ALL_BROKERS[*]})"
}

pid_of()  { [[ -f "$PIDS/$1.pid" ]] && cat "$PIDS/$1.pid"; }
alive()   { local p; p=$(pid_of "$1") && [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; }

port_free() {  # port_free PORT VARIABLE
  if ss -Htln "sport = :$1" 2>/dev/null | grep -q .; then
    die "port $1 is already in use (set by $2): stop what listens there, or choose another, e.g. $2=$(( $1 + 10000 )) scripts/stack.sh up"
  fi
}

# start NAME CMD...: runs a daemon in its own session, logs and pid in $STATE.
start() {
  local name="$1"; shift
  mkdir -p "$PIDS" "$LOGS"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! >"$PIDS/$name.pid"
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

influx_setup() {
  local url="http://127.0.0.1:$INFLUXDB_PORT" allowed
  allowed=$(curl -fsS "$url/api/v2/setup" | jq -r .allowed)
  if [[ "$allowed" == "true" ]]; then
    local secs
    secs=$(retention_seconds "$INFLUXDB_RETENTION")
    jq -n --arg org "$INFLUXDB_ORG" --arg bucket "$INFLUXDB_BUCKET" --arg token "$INFLUX_TOKEN" \
       --arg pw "$INFLUXDB_ADMIN_PASSWORD" --argjson ret "$secs" \
       '{username:"admin", password:$pw, org:$org, bucket:$bucket, token:$token, retentionPeriodSeconds:$ret}' |
      curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' --data @- "$url/api/v2/setup" ||
      die "InfluxDB first-run setup failed (see $LOGS/influxd.log)"
    # InfluxQL (and Grafana's InfluxQL panels) read the bucket as database/autogen.
    local bucket_id org_id
    bucket_id=$(curl -fsS -H "Authorization: Token $INFLUX_TOKEN" "$url/api/v2/buckets?name=$INFLUXDB_BUCKET" | jq -r '.buckets[0].id')
    org_id=$(curl -fsS -H "Authorization: Token $INFLUX_TOKEN" "$url/api/v2/orgs?org=$INFLUXDB_ORG" | jq -r '.orgs[0].id')
    jq -n --arg b "$bucket_id" --arg o "$org_id" --arg db "$INFLUXDB_BUCKET" \
       '{bucketID:$b, orgID:$o, database:$db, retention_policy:"autogen", default:true}' |
      curl -fsS -o /dev/null -X POST -H "Authorization: Token $INFLUX_TOKEN" -H 'Content-Type: application/json' \
        --data @- "$url/api/v2/dbrps" || die "InfluxDB DBRP mapping failed"
    log "InfluxDB set up: org $INFLUXDB_ORG, bucket $INFLUXDB_BUCKET (retention $INFLUXDB_RETENTION)"
  fi
  curl -fsS -o /dev/null -H "Authorization: Token $INFLUX_TOKEN" "$url/api/v2/buckets?name=$INFLUXDB_BUCKET" ||
    die "the InfluxDB in $STATE/influxdb was set up with another token than INFLUX_TOKEN in .env.local: restore that token, or remove $STATE/influxdb to start afresh"
}

retention_seconds() {
  local v="$1" n="${1%[smhdw]}"
  case "$v" in
    0|infinite) echo 0 ;;
    *s) echo "$n" ;; *m) echo $((n * 60)) ;; *h) echo $((n * 3600)) ;;
    *d) echo $((n * 86400)) ;; *w) echo $((n * 604800)) ;;
    *) die "INFLUXDB_RETENTION must look like 30d, 12h or 0 (infinite), got '$v'" ;;
  esac
}

broker_start() {
  case "$BROKER" in
    mosquitto)
      local conf="$STATE/mosquitto.conf"
      sed -E "s/^listener .*/listener $MQTT_PORT 127.0.0.1/" "$ROOT/brokers/mosquitto/mosquitto.conf" >"$conf"
      start broker mosquitto -c "$conf"
      wait_for broker 10 mosquitto_sub -h 127.0.0.1 -p "$MQTT_PORT" -t "\$SYS/broker/version" -C 1 -W 3
      ;;
  esac
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
  port_free "$MQTT_PORT" MQTT_PORT
  # 10K+ connections need file descriptors: the broker inherits this limit.
  ulimit -n "$(ulimit -Hn)"
  ensure_secrets
  mkdir -p "$STATE/influxdb" "$STATE/telegraf-buffer"

  start influxd "$(influxd_bin)" --bolt-path "$STATE/influxdb/influxd.bolt" --engine-path "$STATE/influxdb/engine" \
    --sqlite-path "$STATE/influxdb/influxd.sqlite" --http-bind-address "127.0.0.1:$INFLUXDB_PORT" \
    --reporting-disabled --log-level warn
  wait_for influxd 30 http_ok "http://127.0.0.1:$INFLUXDB_PORT/health"
  influx_setup

  # The collectors the dashboards use (NODE_EXPORTER_FLAGS in .env, shared with compose).
  local ne_flags
  read -r -a ne_flags <<<"$NODE_EXPORTER_FLAGS"
  start node_exporter prometheus-node-exporter --web.listen-address="127.0.0.1:$NODE_EXPORTER_PORT" "${ne_flags[@]}"
  wait_for node_exporter 10 http_ok "http://127.0.0.1:$NODE_EXPORTER_PORT/metrics"

  broker_start

  INFLUX_URL="http://127.0.0.1:$INFLUXDB_PORT" INFLUX_ORG="$INFLUXDB_ORG" INFLUX_BUCKET="$INFLUXDB_BUCKET" \
  MQTT_SYS_URL="tcp://127.0.0.1:$MQTT_PORT" BROKER_PIDFILE="$PIDS/broker.pid" \
  NODE_EXPORTER_URL="http://127.0.0.1:$NODE_EXPORTER_PORT/metrics" TELEGRAF_K6_LISTEN="127.0.0.1:$TELEGRAF_K6_PORT" \
  TELEGRAF_BUFFER_DIR="$STATE/telegraf-buffer" \
    start telegraf "$(telegraf_bin)" --config "$ROOT/telegraf/telegraf.conf" \
      --config-directory "$ROOT/telegraf/telegraf.d" \
      --config "$ROOT/telegraf/brokers/$BROKER.conf" --config "$ROOT/telegraf/native/procstat.conf"
  wait_for telegraf 20 http_ok "http://127.0.0.1:$TELEGRAF_K6_PORT/ping"
  echo "$BROKER" >"$STATE/broker"
  log "native stack up: broker $BROKER on mqtt://127.0.0.1:$MQTT_PORT, InfluxDB http://127.0.0.1:$INFLUXDB_PORT, k6 output influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6"
}

down() {
  local s p i stopped=()
  # Telegraf first, so it flushes what it holds while InfluxDB still runs.
  for s in telegraf broker node_exporter influxd; do
    p=$(pid_of "$s") || continue
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
      stopped+=("$s")
    fi
    rm -f "$PIDS/$s.pid"
  done
  log "stopped: ${stopped[*]:-nothing was running}; data kept in $STATE"
}

status() {
  local s rc=0
  for s in "${SERVICES[@]}"; do
    if alive "$s"; then printf '%-14s running (pid %s)\n' "$s" "$(pid_of "$s")"
    else printf '%-14s stopped\n' "$s"; rc=3; fi
  done
  [[ -f "$STATE/broker" ]] && printf '%-14s %s\n' "broker name" "$(cat "$STATE/broker")"
  return $rc
}

case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) usage ;;
esac
