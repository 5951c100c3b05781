# shellcheck shell=bash
# compare.sh's brokers already running (--target NAME=URL): where each is,
# whether it answers, its version, and the watch on its process on this host.
# Sourced by scripts/compare.sh, whose bad, URL_RE and out they use.

# watched_pid NAME URL pid=P|process=NAME: the pid of a target's process on
# this host, for procstat (watch_process); bad input otherwise.
watched_pid() {
  local pids=() what="${3#*=}"
  [[ "$2" =~ ^[a-z]+://(127\.[0-9.]+|localhost|\[::1\])(:|/|$) ]] ||
    bad "--target $1: ${3%%=*}= watches a process on this host, and $2 is not on loopback: leave it out (its host's own Telegraf can report it with BROKER=$1)"
  case "$3" in
    pid=*) [[ "$what" =~ ^[0-9]+$ && -d "/proc/$what" ]] || bad "--target $1: $3 is no running process (pid=N, e.g. pid=\$(pgrep -x mosquitto))"
      pids=("$what") ;;
    process=?*) mapfile -t pids < <(pgrep -x -- "$what" || true)
      ((${#pids[@]})) || bad "--target $1: no process is named '$what' (process=NAME is the exact name pgrep -x finds)"
      ((${#pids[@]} == 1)) || bad "--target $1: ${#pids[@]} processes are named '$what' (pids ${pids[*]}): give the one with pid=N" ;;
    *) bad "--target $1: after the URL comes pid=N or process=NAME (the broker's process, for its CPU and RSS); got '$3'" ;;
  esac
  "$ROOT/scripts/stack.sh" status >/dev/null 2>&1 ||
    bad "--target $1: $3 is measured by Telegraf into the native stack's InfluxDB, and the native stack is not running: scripts/stack.sh up first"
  echo "${pids[0]}"
}

# host_port URL: "HOST PORT" of a broker URL (default ports 1883, TLS 8883).
host_port() {
  [[ "$1" =~ $URL_RE ]]
  local scheme="${BASH_REMATCH[1]}" host="${BASH_REMATCH[2]}" port="${BASH_REMATCH[4]}"
  host="${host#[}" host="${host%]}"
  [[ -n "$port" ]] || { [[ "$scheme" == mqtt || "$scheme" == tcp ]] && port=1883 || port=8883; }
  printf '%s %s\n' "$host" "$port"
}

# reachable HOST PORT: a TCP connect within 5 s; on failure, REACH says why.
REACH=""
reachable() {
  local err
  # shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
  if err=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>&1); then return 0; fi
  err="${err##*: }"
  # shellcheck disable=SC2034 # compare.sh reads it
  REACH="${err:-no answer in 5 s}"
  return 1
}

# watch_process NAME PID LOG: a Telegraf of its own with the native stack's
# procstat input (telegraf/native/procstat.conf) on PID, into its InfluxDB at
# its intervals, the points tagged broker=NAME and with the run's id
# (watched.conf: the report reads them by it, as NAME may be the stack's own
# tag); WATCHER is its pid, for unwatch.
WATCHER=""
watch_process() {
  local buffer settings="$STATE/stack.env"
  buffer=$(mktemp -d)
  # shellcheck disable=SC2154 # out: compare.sh's report directory
  echo "$2" >"$out/logs/$1.pid"
  load_influx_token
  (
    # shellcheck source=/dev/null # written by scripts/stack.sh up
    [[ -f "$settings" ]] && { set -a; . "$settings"; set +a; }
    export INFLUX_TOKEN
    # shellcheck disable=SC2154 # compare_id: compare.sh's
    exec env INFLUX_URL="http://127.0.0.1:$INFLUXDB_PORT" INFLUX_ORG="$INFLUXDB_ORG" INFLUX_BUCKET="$INFLUXDB_BUCKET" \
      BROKER="$1" BROKER_PIDFILE="$out/logs/$1.pid" TELEGRAF_BUFFER_DIR="$buffer" WATCHED_RUN_ID="$compare_id-$1" \
      "$(telegraf_bin)" --config "$ROOT/telegraf/telegraf.conf" --config "$ROOT/telegraf/native/procstat.conf" \
      --config "$ROOT/telegraf/native/watched.conf"
  ) >>"$3" 2>&1 &
  WATCHER=$!
  log "$1: its process (pid $2) watched by Telegraf's procstat (pid $WATCHER), tagged broker=$1"
}

# unwatch: stops the watcher, which writes what it holds as it exits.
unwatch() {
  [[ -n "$WATCHER" ]] || return 0
  kill -TERM "$WATCHER" 2>/dev/null || true
  wait "$WATCHER" 2>/dev/null || true
  WATCHER=""
}
