#!/usr/bin/env bash
# The main job: start the stack, wait until healthy, run a scenario, write
# the report. Uses compose when a Docker engine with the images is there,
# otherwise the native stack (building what is missing), and says which.
#
# Usage: scripts/bench.sh [--broker mosquitto] [--scenario p2p] [--native|--compose]
#                        [--instances N] [--impair PROFILE] [k6 options...]
#   k6 options go to `k6 run` as given: -e NAME=VALUE sets scenario parameters
#   (-e QOS=0 -e RATE=5000 -e DURATION=2m; README: Parameters), and --out,
#   --summary-export, --tag ... work as in k6. Under compose, k6 runs in its
#   container: write files under /results (reports/raw on this host).
#   --broker a,b,... runs the same scenario on each broker in turn and writes
#   one comparison (scripts/compare.sh, which takes the options).
#   --instances N splits the load over N k6 processes on this host (k6's
#   execution segments, one source address each natively), then merges
#   their results (k6 x mqtt-merge) into one, judged as one run.
#   --impair PROFILE puts a Toxiproxy between k6 and the broker with the
#   profile's toxics (lan, wan, 4g, 3g, satellite: toxiproxy/profiles.toml,
#   or a file of your own: path/to/file.toml), recorded in the result.
#   BROKER_VERSION=V in the environment: the broker version the result
#   records (default: what it tells on its broker.toml's version_topic, or
#   its [native] version, natively; under compose, what it tells the run
#   (version_topic, as version_username), else its image).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=impair.sh
. "$(dirname "$0")/impair.sh"

# Several brokers (--broker a,b,...) are a comparison: the same scenario on
# each in turn, one report with a column per broker (scripts/compare.sh).
for ((i = 1; i < $#; i++)); do
  j=$((i + 1))
  if [[ "${!i}" == --broker && "${!j}" == *,* ]]; then exec "$ROOT/scripts/compare.sh" "$@"; fi
done

broker=mosquitto scenario=p2p mode=auto instances=1 impair=""
k6_env=() k6_args=()
while (($#)); do
  case "$1" in
    --broker) broker="${2:?--broker needs a name}"; shift 2 ;;
    --scenario) scenario="${2:?--scenario needs a name}"; shift 2 ;;
    --native) mode=native; shift ;;
    --compose) mode=compose; shift ;;
    --instances) instances="${2:?--instances needs a number}"; shift 2 ;;
    --impair) impair="${2:?--impair needs a profile: lan, wan, 4g, 3g, satellite or path/to/file.toml}"; shift 2 ;;
    -e|--env) k6_env+=("${2:?$1 needs NAME=VALUE}"); shift 2 ;;
    -e=*|--env=*) k6_env+=("${1#*=}"); shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*)
      # Any other k6 option, with its value: this script takes no
      # positional argument, so a word that follows an option is its value.
      k6_args+=("$1"); shift
      if (($#)) && [[ "$1" != -* ]]; then k6_args+=("$1"); shift; fi
      ;;
    *) die "unexpected argument '$1': options of this script are --broker, --scenario, --native, --compose, --instances, --impair; the rest go to k6 (see scripts/bench.sh --help)" ;;
  esac
done

is_broker "$broker" || die "unknown broker '$broker' (known: $(brokers | xargs); a broker is a folder brokers/NAME with a broker.toml)"
if [[ ! -f "$ROOT/k6/scenarios/$scenario.js" ]]; then
  known=("$ROOT"/k6/scenarios/*.js)
  known=("${known[@]##*/}")
  die "unknown scenario '$scenario' (known: ${known[*]%.js})"
fi
for kv in "${k6_env[@]}"; do [[ "$kv" == *=* ]] || die "-e takes NAME=VALUE, got '$kv'"; done
# A TLS scenario (conn-tls-*, mqttbs's name) measures TLS connections: it
# gets the broker's TLS listener where the others get its plain one.
tls_scenario=false
[[ "$scenario" != *-tls-* ]] || tls_scenario=true
[[ "$instances" =~ ^[1-9][0-9]*$ ]] || die "--instances takes a whole number >= 1, got '$instances'"
((instances <= 250)) || die "--instances $instances: at most 250 on one host (one loopback source address each); use several hosts (README: Several generators)"
# The scenario's VUs cap the instances (MAX_INSTANCES, default 32).
if ((instances > 32)); then
  given=false
  for kv in "${k6_env[@]}"; do [[ "$kv" == MAX_INSTANCES=* ]] && given=true; done
  $given || k6_env+=("MAX_INSTANCES=$instances")
fi
# Distinct source addresses only reach a broker on loopback.
mqtt_host=127.0.0.1
for kv in "${k6_env[@]}"; do
  [[ "$kv" == MQTT_URL=* ]] && mqtt_host="$(sed -E 's#^[a-z]+://##; s#[:/].*$##' <<<"${kv#MQTT_URL=}")"
done
# A storm's cut runs in one instance and times the connections it sees:
# split over instances it would judge part of the storm as all of it.
[[ "$scenario" != storm-* ]] || ((instances == 1)) ||
  die "--instances $instances: $scenario times the reconnection of the connections of the process that cuts them; run it in one process"
if [[ -n "$impair" ]]; then
  ! $tls_scenario || die "--impair routes the broker's plain listener through Toxiproxy: $scenario measures TLS connections; impair a plain scenario (conn-tcp-*, p2p, ...)"
  impair_check "$impair"
  for kv in "${k6_env[@]}"; do
    [[ "$kv" != MQTT_URL=* ]] || die "--impair routes the stack's broker through Toxiproxy: leave -e MQTT_URL out (or impair by hand: README, Network impairment)"
  done
fi
for a in "${k6_args[@]}"; do
  [[ "$a" != --execution-segment* ]] || ((instances == 1)) ||
    die "--instances sets each process's --execution-segment itself: give one or the other"
done

[[ "$mode" != auto ]] || mode="$(stack_mode "$broker")"

# The run id: -e RUN_ID=... or RUN_ID in the environment, else the
# scenarios' own form (<scenario>-<broker>-<time>-<random>), so that two
# runs started in the same second never share a result file.
run_id="${RUN_ID:-}"
for kv in "${k6_env[@]}"; do [[ "$kv" == RUN_ID=* ]] && run_id="${kv#RUN_ID=}"; done
if [[ -z "$run_id" ]]; then
  run_id="$scenario-$broker-$(date -u +%Y%m%dT%H%M%S)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
fi
mkdir -p "$RESULTS/raw"
env_args=()
for kv in "${k6_env[@]}"; do env_args+=(-e "$kv"); done
env_args+=("${k6_args[@]}")
user_local_address=false
for kv in "${k6_env[@]}"; do [[ "$kv" == LOCAL_ADDRESS=* ]] && user_local_address=true; done

# capabilities [native]: BROKER_MQTT and BROKER_QOS, what the broker can do
# as comma lists (empty: all), and BROKER_CAPABILITIES, the broker.toml table
# they come from (mqttbench/brokers/facts.py capabilities): k6/lib/params.js
# refuses what it lacks, naming that table.
capabilities() {
  local out kv
  out=$(python3 -P -m mqttbench.brokers.facts capabilities "$broker" "$@") || die "cannot read brokers/$broker/broker.toml"
  while IFS= read -r kv; do printf -v "${kv%%=*}" '%s' "${kv#*=}"; done <<<"$out"
}


# launch OPTIONS... SCRIPT: runs k6 once per instance, its command line
# built by mqttbench/k6/command.py (OPTIONS are its `argv` options; the
# instance's segment, the user's k6 arguments, and, natively against a
# loopback broker, its own loopback source address: one address has ~28,000
# ephemeral ports), after k6_prefix (compose's `run` of the k6 service,
# whose name is the command's first word), and waits for all.
# The first instance talks to the terminal; the others write logs beside
# the results. rc is the worst exit code; broken names the instances that
# ended otherwise than passed or failed thresholds (0, 99).
launch() {
  local i pids=() cmd code log
  rc=0 broken=()
  for ((i = 0; i < instances; i++)); do
    local extra=()
    if ((instances > 1)) && [[ "$mode" == native ]] && ! $user_local_address && [[ "$mqtt_host" == 127.* ]]; then
      extra=(-e "LOCAL_ADDRESS=127.0.0.$((i + 2))")
    fi
    mapfile -d '' cmd < <(python3 -P -m mqttbench.k6 argv --instance "$i/$instances" "$@" -- "${env_args[@]}" "${extra[@]}")
    ((${#cmd[@]})) || die "the k6 command line of instance $((i + 1)) was not built (python3 -m mqttbench.k6 argv failed)"
    if ((i == 0)); then
      "${k6_prefix[@]}" "${cmd[@]}" &
    else
      # One live view (the first instance's): the others would want its port.
      log="$RESULTS/raw/$run_id.seg-$((i + 1))-of-$instances.log"
      K6_WEB_DASHBOARD=false "${k6_prefix[@]}" "${cmd[@]}" >"$log" 2>&1 &
    fi
    pids+=($!)
  done
  ((instances == 1)) || log "$instances k6 processes (instances 2..$instances log to reports/raw/$run_id.seg-*.log)"
  for i in "${!pids[@]}"; do
    code=0
    wait "${pids[$i]}" || code=$?
    ((code == 0)) || log "instance $((i + 1)) of $instances: k6 exit code $code"
    ((code == 0 || code == 99)) || broken+=("$((i + 1)) (exit code $code)")
    ((code > rc)) && rc=$code
  done
  return 0
}

# dashboard_period DURATION: a tenth of a k6 duration (10s, 2m, 1h30m), in
# whole seconds from 1 to 10 (k6's own period for runs of 100 s and more).
dashboard_period() {
  local rest="$1" secs=0 n unit
  while [[ "$rest" =~ ^([0-9]+)(h|m|s)(.*)$ ]]; do
    n="${BASH_REMATCH[1]}" unit="${BASH_REMATCH[2]}" rest="${BASH_REMATCH[3]}"
    case "$unit" in h) secs=$((secs + n * 3600)) ;; m) secs=$((secs + n * 60)) ;; s) secs=$((secs + n)) ;; esac
  done
  n=$((secs / 10))
  echo $((n < 1 ? 1 : n > 10 ? 10 : n))
}

# live_view: k6's own web dashboard (built into k6 v1.8.1: xk6-dashboard
# v0.8.1) on loopback, the live view where there is no Grafana, with the
# extension's metrics on its first tab (k6/scenarios/.dashboard.json), and
# its HTML export beside the report. K6_WEB_DASHBOARD=false turns it off,
# K6_WEB_DASHBOARD_PORT moves it (k6's own variables); with --instances,
# the first instance's.
live_view() {
  local port="${K6_WEB_DASHBOARD_PORT:-5665}" holder kv
  [[ "${K6_WEB_DASHBOARD:-true}" == true ]] || return 0
  mkdir -p "$RESULTS/$run_id"
  # The dashboard exports nothing before its first aggregation period (k6's
  # 10 s): a run given a short DURATION gets a tenth of it, at least 1 s.
  for kv in "${k6_env[@]}"; do
    [[ "$kv" == DURATION=* && -z "${K6_WEB_DASHBOARD_PERIOD:-}" ]] || continue
    K6_WEB_DASHBOARD_PERIOD="$(dashboard_period "${kv#DURATION=}")s"
    export K6_WEB_DASHBOARD_PERIOD
  done
  export K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_HOST=127.0.0.1 K6_WEB_DASHBOARD_PORT="$port" \
    K6_WEB_DASHBOARD_EXPORT="$RESULTS/$run_id/k6-dashboard.html" XK6_DASHBOARD_CONFIG="$ROOT/k6/scenarios/.dashboard.json"
  if holder=$(port_holder "$port"); then
    # Still saved: k6 serves nothing (-1) but writes the export.
    K6_WEB_DASHBOARD_PORT=-1
    warn "no live view: port $port (K6_WEB_DASHBOARD_PORT) is held by $holder; or move it: K6_WEB_DASHBOARD_PORT=$((port + 1)) scripts/bench.sh ..."
  else
    log "live view: http://127.0.0.1:$port (k6's web dashboard; saved as reports/$run_id/k6-dashboard.html; k6 ends, and the report follows, once no page shows it)"
  fi
}

# impair_traps: however the run ends (k6 killed, Ctrl-C, a failure), the
# proxy goes.
impair_traps() {
  trap impair_stop EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
}

if [[ "$mode" == native ]]; then
  read -ra plan <<<"$(setup_plan "$broker" "$impair")"
  SETUP_BROKER="$broker" "$ROOT/scripts/setup.sh" "${plan[@]}"
  "$ROOT/scripts/stack.sh" ensure --broker "$broker"
  secrets=$(secrets_file)
  # shellcheck source=/dev/null # generated secrets, not in the repo
  [[ -f "$secrets" ]] && { set -a; . "$secrets"; set +a; }
  [[ -n "${INFLUX_TOKEN:-}" ]] || die "INFLUX_TOKEN is missing from $secrets: scripts/stack.sh down, then remove $STATE/influxdb and rerun (a new token is generated)"
  influx_curl -fsS -o /dev/null "http://127.0.0.1:$INFLUXDB_PORT/api/v2/buckets" ||
    die "InfluxDB at 127.0.0.1:$INFLUXDB_PORT refuses INFLUX_TOKEN from $secrets: check scripts/stack.sh status"
  # BROKER_VERSION given wins: a build whose $SYS does not tell it apart (History: per version).
  version="${BROKER_VERSION:-$(broker_version 127.0.0.1 "$MQTT_PORT")}" source=BROKER_VERSION
  [[ -n "${BROKER_VERSION:-}" ]] || source="its version_topic (brokers/$broker/broker.toml)"
  # A broker with no version_topic in its broker.toml (HiveMQ, RabbitMQ): what its [native] version reads.
  [[ -n "$version" ]] || source="its [native] version command" version="$(python3 -P -m mqttbench.brokers.native version "$broker" 2>/dev/null)" || version=""
  ulimit -n "$(ulimit -Hn)" # scenarios with thousands of connections
  live_view
  log "running $scenario (run $run_id); metrics to InfluxDB through Telegraf"
  url="mqtt://127.0.0.1:$MQTT_PORT"
  ! $tls_scenario || url="mqtts://127.0.0.1:$MQTTS_PORT"
  if [[ -n "$impair" ]]; then
    impair_traps
    impair_start "$impair" "127.0.0.1:$MQTT_PORT"
    url="$impair_url"
    impair_events "$impair"
  fi
  capabilities native
  export K6_NO_USAGE_REPORT=true RUN_ID="$run_id" BROKER="$broker" BROKER_VERSION="$version" \
    BROKER_VERSION_SOURCE="$source" MQTT_URL="$url" RESULTS_DIR="$RESULTS/raw" BROKER_MQTT BROKER_QOS BROKER_CAPABILITIES
  k6_prefix=()
  launch --out "influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6" "$ROOT/k6/scenarios/$scenario.js"
  merge() { "$(k6_bin)" x mqtt-merge "$run_id" --dir "$RESULTS/raw"; }
  impair_stop
else
  "$ROOT/scripts/stack.sh" --compose ensure --broker "$broker"
  # compose run builds the k6 image (k6/Dockerfile) when it is missing. The
  # InfluxDB output is named here too: a --out of the user's replaces K6_OUT.
  impair_env=()
  ! $tls_scenario || impair_env=(-e "MQTT_URL=mqtts://broker:8883")
  if [[ -n "$impair" ]]; then
    impair_traps
    impair_compose "$impair"
    impair_events "$impair"
    # From this environment (-e NAME): the record is not put in argv.
    impair_env=(-e "MQTT_URL=$impair_url" -e NETWORK -e TOXIPROXY_URL)
  fi
  # The k6 service's own output, as this project's compose files resolve it
  # (an override that moves Telegraf's listener moves it too): a fixed
  # telegraf:8186 reached the user's native Telegraf from a host-network one.
  k6_out=$(compose --profile k6 config --format json | jq -r '.services.k6.environment.K6_OUT')
  # The version: the caller's, else the broker's answer to the run (compose's k6 service), else its image.
  image="$(broker_image "$broker")"
  log "running $scenario (run $run_id)"
  capabilities
  k6_prefix=(compose run --rm "${impair_env[@]}" -e RUN_ID="$run_id" -e BROKER="$broker" -e BROKER_VERSION="${BROKER_VERSION:-}"
    -e BROKER_IMAGE="$image" -e BROKER_MQTT="$BROKER_MQTT" -e BROKER_QOS="$BROKER_QOS" -e BROKER_CAPABILITIES="$BROKER_CAPABILITIES")
  launch --k6 k6 --out "$k6_out" "$scenario.js"
  merge() { compose run --rm k6 x mqtt-merge "$run_id" --dir /results; }
  impair_stop
  INFLUX_TOKEN=$(compose_secret influx_token)
  export INFLUX_TOKEN
fi

# The instances' results become one, judged again as one run: the merge's
# verdict (exit 99: a threshold failed, or an instance is missing) is the run's.
if ((instances > 1)); then
  mrc=0
  merge || mrc=$?
  ((mrc == 0 || mrc == 99)) || die "the merge of run $run_id failed (exit code $mrc): see its message above"
  rc=$mrc
fi

# A run whose thresholds failed (k6 exit 99) is still reported.
# The scenario reserves the file when it starts: only a written result counts.
if is_result "$RESULTS/raw/$run_id.json"; then
  sleep 2 # Telegraf's last flush
  "$ROOT/scripts/report.sh" "$run_id"
elif [[ -f "$RESULTS/raw/$run_id.refused.json" ]]; then
  # Bad input, refused before any connection (k6/lib/refusal.js): exit 2.
  printf 'error: %s\n' "$(jq -r '.message' "$RESULTS/raw/$run_id.refused.json")" >&2
  exit 2
else
  die "the run wrote no result file (k6 exit code $rc): see the k6 output above"
fi
# An instance that aborted or crashed may have written a result all the
# same: the run does not pass, whatever the merge found.
((${#broken[@]} == 0)) || die "k6 instance ${broken[*]} of run $run_id ended abnormally, not with a threshold verdict: see its output above (or reports/raw/$run_id.seg-*.log)"
((rc == 0)) || die "the run's thresholds failed (k6 exit code $rc); the report says which"
