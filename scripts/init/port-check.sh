#!/bin/bash
# port-check.sh VAR...: the compose stack's one-shot `port-check` service,
# before any service publishes a port. Each VAR (MQTT_PORT, INFLUXDB_PORT,
# ...) is a port variable of compose.yaml, its value in the environment.
# Fails, naming the port, the service and the one command that frees it,
# when this clone's native stack (scripts/stack.sh up) listens on one of
# them; Docker would otherwise fail the start with only "address already in
# use", and a stack on the host's network would restart in a loop.
# Runs in the host's network and pid namespaces (compose.yaml), with the
# clone mounted read-only: it reads the native stack's records in .state
# (the settings `up` used, the pid and start time of each service).
# Anything else on a port (another compose project, another program) is
# Docker's to report.
set -u
state="${NATIVE_STATE:-/mqtt-bench/clone/.state}"
# The native stack's service behind each port variable (scripts/stack.sh).
declare -A service=([MQTT_PORT]=broker [MQTTS_PORT]=broker [MTLS_PORT]=broker [WS_PORT]=broker [INFLUXDB_PORT]=influxd [TELEGRAF_K6_PORT]=telegraf [NODE_EXPORTER_PORT]=node_exporter)

# listening PORT: a TCP socket listens on PORT in this network namespace.
listening() {
  local hex
  hex=$(printf ':%04X' "$1")
  awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# native_pid NAME: the pid of the native stack's NAME while it is the process
# stack.sh started (its start time, field 22 of /proc/PID/stat, as recorded).
native_pid() {
  local pid stat f
  pid=$(cat "$state/pids/$1.pid" 2>/dev/null) && [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  read -r -a f <<<"${stat##*) }"
  [[ "${f[19]}" == "$(cut -d' ' -f1 "$state/pids/$1.id" 2>/dev/null)" ]] && echo "$pid"
}

# native_port VAR: the port the native stack's `up` gave VAR.
native_port() { sed -n "s/^$1=//p" "$state/stack.env" 2>/dev/null; }

rc=0
for var in "$@"; do
  port="${!var:-}"
  [[ "$port" =~ ^[0-9]+$ ]] || { echo "port-check: $var='$port' is not a port number" >&2; rc=2; continue; }
  listening "$port" || continue
  for v in "${!service[@]}"; do
    [[ "$(native_port "$v")" == "$port" ]] || continue
    pid=$(native_pid "${service[$v]}") || continue
    echo "error: port $port ($var) is held by this clone's native stack: ${service[$v]} (pid $pid," \
      "scripts/stack.sh up). Free it with: scripts/stack.sh down  (or move compose's: $var=$((port + 10000)) docker compose ...)" >&2
    rc=1
  done
done
((rc == 0)) && echo "port-check: no port of the stack is held by this clone's native stack"
exit "$rc"
