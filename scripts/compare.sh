#!/usr/bin/env bash
# A comparison in one command: the same scenario (or the same capacity
# search) on each broker in turn, with equal limits, then one report with a
# column per broker: reports/compare-<id>/compare.md (+ charts, results.json).
#
# Usage: scripts/compare.sh --broker mosquitto,emqx,nanomq,vernemq [--native|--compose]
#                           [--target NAME=URL ...] [--scenario p2p] [--search]
#                           [--id ID] [--cpu-target 75] [-e NAME=VALUE ...]
#                           [--search options: --qos --p99-ms --trial --budget --start-rate --max-rate --precision]
#   --broker B,B...   brokers this stack starts (brokers/B), one after another: natively
#                     (scripts/stack.sh; those with [native] in their broker.toml) or
#                     under compose (its profile up, the run, then that broker's
#                     services stopped; InfluxDB and Grafana stay up; equal
#                     limits: BROKER_CPUS/BROKER_MEMORY in .env). Default mode:
#                     compose when Docker and every broker's image are here.
#   --target N=URL    a broker already running (another host, another config):
#                     not started or stopped; unreachable ones are marked.
#   --target N=URL,pid=P  (or ,process=NAME) on this host: its process's CPU
#                     and RSS measured during its run by Telegraf's procstat
#                     (telegraf/native/procstat.conf, as for the stack's own
#                     broker), into the native stack's InfluxDB.
#   --search          a capacity search per broker (scripts/capacity.sh)
#                     instead of one run; --cpu-target and its own options
#                     (--qos 1, --p99-ms 50, --trial 30s, --budget 15m, ...) go to it.
#   -e NAME=VALUE     scenario parameters, the same for every broker (README:
#                     Scenarios); RUN_ID, BROKER and MQTT_URL are set per broker.
#   --id ID           the comparison's id (default <scenario>-<time>-<random>);
#                     each broker's run is <id>-<name>.
#   --impair P,P...   each managed broker under each network profile in turn
#                     (scripts/bench.sh --impair; none: no impairment), natively:
#                     a column per broker and profile, <broker>-<profile>.
#   --rounds N --baseline NAME --fail-on BOUNDS --save-baseline FILE --against FILE:
#                     rounds and regressions (scripts/compare_rounds.sh says how).
# A broker that does not start, or cannot be reached, is marked in its column
# with the reason, and the others still run. Exit code: 0 every broker ran;
# 1 some broker was marked (the report is written all the same); 2 bad input;
# 4 a --fail-on bound was breached (after the report is written).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

NAME_RE='^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$'
URL_RE='^(mqtt|tcp|mqtts|ssl|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(:([0-9]{1,5}))?/?$'

# bad MESSAGE: bad input, before anything starts (exit 2).
bad() { printf 'error: %s\n' "$*" >&2; exit 2; }
# shellcheck source=compare_targets.sh
. "$(dirname "$0")/compare_targets.sh"
# shellcheck source=compare_rounds.sh
. "$(dirname "$0")/compare_rounds.sh"

brokers=() targets=() k6_env=()
brokers_arg() {
  local names
  [[ -n "$1" ]] || bad "--broker needs names, e.g. --broker mosquitto,emqx"
  IFS=, read -r -a names <<<"$1"
  brokers+=("${names[@]}")
}
impairs=()
impairs_arg() {
  local names
  [[ -n "$1" ]] || bad "--impair needs profiles, e.g. --impair none,4g (none: no impairment)"
  IFS=, read -r -a names <<<"$1"
  impairs+=("${names[@]}")
}
scenario=p2p mode=auto search=false compare_id="" cpu_target=75 search_opts=()
while (($#)); do
  case "$1" in
    --broker) brokers_arg "${2-}"; shift $(($# > 1 ? 2 : 1)) ;;
    --broker=*) brokers_arg "${1#*=}"; shift ;;
    --target) targets+=("${2-}"); shift $(($# > 1 ? 2 : 1)) ;;
    --target=*) targets+=("${1#*=}"); shift ;;
    --scenario) scenario="${2:?--scenario needs a name}"; shift 2 ;;
    --search) search=true; shift ;;
    --native) mode=native; shift ;;
    --compose) mode=compose; shift ;;
    --id) compare_id="${2:?--id needs a value}"; shift 2 ;;
    --cpu-target) cpu_target="${2:?--cpu-target needs a percentage}"; shift 2 ;;
    --qos|--p99-ms|--trial|--budget|--start-rate|--max-rate|--precision)
      search_opts+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    -e|--env) k6_env+=("${2:?$1 needs NAME=VALUE}"); shift 2 ;;
    -e=*|--env=*) k6_env+=("${1#*=}"); shift ;;
    --impair) impairs_arg "${2-}"; shift $(($# > 1 ? 2 : 1)) ;;
    --rounds|--baseline|--fail-on|--save-baseline|--against) rounds_option "$1" "${2-}"; shift $(($# > 1 ? 2 : 1)) ;;
    -h|--help) sed -n '2,37p' "$0"; sed -n '4,19p' "$(dirname "$0")/compare_rounds.sh"; exit 0 ;;
    *) bad "unexpected argument '$1': options are --broker, --target, --scenario, --search, --native, --compose, --id, --cpu-target, --impair (and the search's, with --search); scenario parameters go as -e NAME=VALUE (e.g. -e QOS=1); other k6 options: scripts/bench.sh" ;;
  esac
done

# --- Input, checked before anything starts ------------------------------
((${#brokers[@]} + ${#targets[@]})) ||
  bad "name the brokers to compare: --broker mosquitto,emqx,... (brokers this stack starts) and/or --target NAME=URL (brokers already running), e.g. --target emqx=mqtt://10.0.0.5:1883"
declare -A seen=() target_url=() target_pid=()
for b in "${brokers[@]}"; do
  is_broker "$b" || bad "--broker: unknown broker '$b' (known: $(brokers | xargs)); a broker this stack does not start: --target $b=mqtt://HOST:PORT"
  [[ -z "${seen[$b]:-}" ]] || bad "--broker: '$b' is named twice: each broker runs once"
  seen[$b]=1
done
target_names=()
for t in "${targets[@]}"; do
  [[ "$t" == *=* ]] || bad "--target takes NAME=URL, e.g. --target emqx=mqtt://10.0.0.5:1883; got '$t'"
  name="${t%%=*}" url="${t#*=}" watch=""
  [[ "$url" == *,* ]] && watch="${url#*,}" url="${url%%,*}"
  [[ "$name" =~ $NAME_RE ]] ||
    bad "--target: the name '$name' must be letters, digits, '.', '_' or '-' (at most 40; it becomes part of the run id), e.g. --target emqx=mqtt://10.0.0.5:1883"
  [[ "$url" =~ $URL_RE ]] ||
    bad "--target $name: '$url' is not a broker URL: use mqtt://HOST:PORT (or tcp://, mqtts://, ssl://, tls://)"
  [[ -z "${seen[$name]:-}" ]] || bad "--target: the name '$name' is used twice: give each broker its own name"
  seen[$name]=1 target_url[$name]="$url"
  target_names+=("$name")
  [[ -z "$watch" ]] || target_pid[$name]=$(watched_pid "$name" "$url" "$watch")
done
if [[ ! -f "$ROOT/k6/scenarios/$scenario.js" ]]; then
  known=("$ROOT"/k6/scenarios/*.js)
  known=("${known[@]##*/}")
  bad "--scenario: unknown scenario '$scenario' (known: ${known[*]%.js})"
fi
for kv in "${k6_env[@]}"; do
  [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bad "-e takes NAME=VALUE, got '$kv'"
  case "${kv%%=*}" in
    RUN_ID|BROKER|BROKER_VERSION|MQTT_URL|RESULTS_DIR)
      bad "-e ${kv%%=*} is set per broker by compare.sh (run id <id>-<name>, the broker's name and URL): leave it out; name the comparison with --id" ;;
  esac
done
[[ "$cpu_target" =~ ^[0-9]+([.][0-9]+)?$ ]] || bad "--cpu-target takes a percentage, e.g. --cpu-target 75; got '$cpu_target'"
if ! $search && ((${#search_opts[@]})); then
  bad "${search_opts[0]} is an option of the capacity search (--search); for one run per broker, scenario parameters go as -e NAME=VALUE (e.g. -e QOS=1 -e P99_MS=50 -e DURATION=2m)"
fi
if $search; then
  for kv in "${k6_env[@]}"; do
    case "${kv%%=*}" in
      RATE|QOS|DURATION|P99_MS|STEPS)
        bad "-e ${kv%%=*} is the capacity search's to set: use --start-rate/--max-rate, --qos, --trial or --p99-ms with --search" ;;
    esac
  done
fi
if $search && ((${#target_pid[@]})); then
  bad "--target NAME=URL,pid=... measures the process during a run; the capacity search judges a target on its host's CPU: leave pid=/process= out with --search"
fi
if $search && [[ ! -x "$ROOT/scripts/capacity.sh" ]]; then
  bad "--search runs scripts/capacity.sh per broker, and it is not here: run without --search (one run per broker)"
fi
# Network profiles: each managed broker runs once per profile, named
# <broker>-<profile>; checked here, before anything starts.
declare -A impair_label=()
if ((${#impairs[@]})); then
  ((${#target_names[@]} == 0)) || bad "--impair runs the brokers this stack starts through a Toxiproxy of its own; a --target is reached directly: leave --target out"
  ! $search || bad "--impair with --search: the capacity search is not run through a proxy yet; compare single runs"
  [[ "$mode" != compose ]] || bad "compare.sh --impair runs natively so far (one run under compose: scripts/bench.sh --compose --impair): use --native"
  for p in "${impairs[@]}"; do
    if [[ "$p" == none ]]; then
      impair_label[$p]=none
    else
      checked=$(python3 "$ROOT/scripts/impair.py" check "$p") || exit 2
      impair_label[$p]=$(jq -r .profile <<<"$checked")
    fi
  done
  [[ "$(printf '%s\n' "${impair_label[@]}" | sort | uniq -d)" == "" && ${#impair_label[@]} == "${#impairs[@]}" ]] ||
    bad "--impair: a profile is named twice (${impairs[*]}): each runs once"
  mode=native
fi
[[ -n "$compare_id" ]] || compare_id="$scenario-$(date -u +%Y%m%dT%H%M%S)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
[[ "$compare_id" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || bad "--id: '$compare_id' must be letters, digits, '.', '_' or '-'"
out="$ROOT/reports/compare-$compare_id"
[[ ! -e "$out" ]] || bad "--id: $out exists already: choose another id (or remove it)"
runs=()  # "broker profile" pairs of the managed brokers, in order
for b in "${brokers[@]}"; do
  if ((${#impairs[@]} == 0)); then runs+=("$b -"); else for p in "${impairs[@]}"; do runs+=("$b $p"); done; fi
done
run_name() { [[ "$2" == - ]] && echo "$1" || echo "$1-${impair_label[$2]}"; }
names=("${target_names[@]}")
for r in "${runs[@]}"; do
  read -r b p <<<"$r"
  n=$(run_name "$b" "$p")
  [[ "$n" =~ $NAME_RE ]] || bad "--impair: the run name '$n' must be letters, digits, '.', '_' or '-' (at most 40): give the profile a shorter name"
  names+=("$n")
done
rounds_check "$search" "${names[@]}"
for name in "${names[@]}"; do
  for rid in $(round_ids "$name"); do
    for f in "$ROOT/reports/raw/$rid.json" "$ROOT/reports/capacity-$rid"; do
      [[ ! -e "$f" ]] || bad "--id: $f exists already (an earlier comparison with this id): choose another id"
    done
  done
done

# Managed brokers: natively or under compose (as scripts/bench.sh decides).
if ((${#brokers[@]})) && [[ "$mode" == auto ]]; then mode="$(stack_mode "${brokers[@]}")"; fi
[[ "$mode" != auto ]] || mode=native

mkdir -p "$out/logs" "$ROOT/reports/raw"
env_args=()
for kv in "${k6_env[@]}"; do env_args+=(-e "$kv"); done
entries=()  # one JSON object per broker, in order (jq -c)
marked=0

# entry NAME KIND MODE URL STATUS SHORT REASON VERSION INFLUX HOST_TAG: records one broker's outcome
# (a run under --impair: entry_broker and entry_profile say which broker, which profile).
entry_broker="" entry_profile=""
entry() {
  local id_key=run_id
  $search && id_key=search_id
  entries+=("$(jq -nc --arg name "$1" --arg kind "$2" --arg mode "$3" --arg url "$4" --arg status "$5" \
    --arg short "$6" --arg reason "$7" --arg version "$8" --argjson influx "$9" --arg host_tag "${10}" \
    --arg id "$compare_id-$1$rsuffix" --arg id_key "$id_key" --arg log "logs/$1$rsuffix.log" --arg pid "${target_pid[$1]:-}" \
    --arg broker "$entry_broker" --arg profile "$entry_profile" --argjson round "$round" \
    'def opt: if . == "" then null else . end;
     {name: $name, kind: $kind, mode: $mode, url: ($url | opt), status: $status, short: ($short | opt),
      reason: ($reason | opt), version: ($version | opt), influx: $influx, host_tag: ($host_tag | opt),
      pid: ($pid | opt | if . then tonumber else . end), log: $log, round: $round} + {($id_key): $id}
     + (if $broker == "" then {} else {broker: $broker, profile: ($profile | opt)} end)')")
  if [[ "$5" != ran ]]; then
    marked=$((marked + 1))
    warn "$1: $5: $7"
  fi
}

# why LOG RC: the reason a step failed, from its log: its last error line, else its last line.
why() {
  local line
  line=$(tr '\r' '\n' <"$1" | grep -E '^(error|ERRO|Error)|level=error' | tail -n 1 || true)
  [[ -n "$line" ]] || line=$(tr '\r' '\n' <"$1" | grep -v '^[[:space:]]*$' | tail -n 1 || true)
  line="${line#error: }"
  printf 'exit code %s: %s' "$2" "${line:-no message (see the log)}"
}

result_ok() { is_result "$ROOT/reports/raw/$1.json"; }
native_up() { "$ROOT/scripts/stack.sh" status >/dev/null 2>&1; }
# A native stack that was down when the comparison began is the comparison's
# own (bench.sh starts it): it may switch that stack from one broker to the
# next. A stack the user had up is theirs, never stopped here.
OWN_STACK=false
if [[ "$mode" == native ]] && ! native_up; then OWN_STACK=true; fi

# native_ready B LOG: the native stack can run broker B (starting it is
# bench.sh's or capacity.sh's job). When the stack runs another broker,
# stack.sh up --broker B says whether B has a native build at all (it checks
# that before anything else, and starts nothing); the comparison's own stack
# is then stopped for B's, a user's is not this script's to stop.
native_ready() {
  local b="$1" logf="$2" running
  native_up || return 0
  running="$(cat "$STATE/broker" 2>/dev/null || true)"
  [[ "$running" != "$b" ]] || return 0
  if $OWN_STACK && is_native "$b"; then
    log "the native stack this comparison started runs $running: stopping it for $b's (its data kept)"
    "$ROOT/scripts/stack.sh" down >>"$logf" 2>&1 && return 0
  fi
  if ! "$ROOT/scripts/stack.sh" up --broker "$b" >>"$logf" 2>&1 && ! grep -q 'already running' "$logf"; then
    return 1
  fi
  echo "error: the native stack runs broker '$running': scripts/stack.sh down first, then compare again" >>"$logf"
  return 1
}

# not_native B REASON SHORT: marks broker B, which did not run natively
# (stack.sh's reason: most often, no native build).
not_native() {
  local short="$3" reason="$2"
  if [[ "$reason" == *"no native build"* ]]; then
    short="no native build; use --compose"
    reason+="; scripts/compare.sh --compose runs it in its container"
  fi
  entry "$1" broker native "" "not run" "$short" "$reason" "" false ""
}

trap unwatch EXIT

# Metrics reach InfluxDB when a Telegraf k6 listener answers here (native
# stack, or a compose profile's Telegraf).
telegraf_up() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$TELEGRAF_K6_PORT/ping" 2>/dev/null; }

# run_report RUN_ID [report.sh options]: each run's own full report.
run_report() {
  local rc=0
  "$ROOT/scripts/report.sh" "$@" >>"$out/logs/reports.log" 2>&1 || rc=$?
  # 3: a complete report exists and was kept.
  ((rc == 0 || rc == 3)) || warn "scripts/report.sh $* failed (exit code $rc): see $out/logs/reports.log"
}

# search_outcome NAME LOG RC: status and reason of a capacity search (its capacity.json).
search_outcome() {
  local name="$1" logf="$2" rc="$3" cap="$ROOT/reports/capacity-$compare_id-$1/capacity.json"
  STATUS="no result" SHORT="" REASON=""
  if [[ -f "$cap" ]] && jq -e '.recommended != null' "$cap" >/dev/null 2>&1 && ((rc == 0)); then
    STATUS=ran
  elif [[ -f "$cap" ]] && jq -e '.limit' "$cap" >/dev/null 2>&1; then
    REASON=$(jq -r '.limit_text // .limit' "$cap")
    case "$(jq -r '.limit' "$cap")" in
      generator) SHORT="generator-limited: no broker capacity found" ;;
      *) SHORT="no capacity found ($(jq -r '.limit' "$cap"))" ;;
    esac
  else
    REASON="scripts/capacity.sh $(why "$logf" "$rc")" SHORT="capacity search failed"
  fi
  [[ -n "$REASON" ]] || return 0
  log "$name: $SHORT"
}

# --- Brokers this stack starts -------------------------------------------
# run_managed "BROKER PROFILE": one run (or search) of a broker this stack starts.
run_managed() {
  local r="$1"
  read -r b profile <<<"$r"
  name=$(run_name "$b" "$profile")
  impair_args=()
  [[ "$profile" == - || "$profile" == none ]] || impair_args=(--impair "$profile")
  run_id="$compare_id-$name$rsuffix" logf="$out/logs/$name$rsuffix.log"
  entry_broker="" entry_profile=""
  ((${#impairs[@]} == 0)) || entry_broker="$b" entry_profile="$profile"
  : >"$logf"
  log "$name ($mode): $($search && echo "capacity search $run_id" || echo "run $run_id"); log: $logf"
  version="" influx=true
  [[ "$mode" == compose ]] && version="$(pinned_image "$b")"
  if [[ "$mode" == native ]] && ! native_ready "$b" "$logf"; then
    reason="$(why "$logf" 1)"
    not_native "$name" "${reason#exit code 1: }" "did not start natively"
    return 0
  fi
  if [[ "$mode" == compose ]]; then
    log "$b: starting its profile and waiting until healthy (the core stays up)"
    if ! compose --profile "$b" up -d --wait >>"$logf" 2>&1; then
      entry "$b" broker compose "" "not run" "did not start under compose" \
        "docker compose --profile $b up -d --wait $(why "$logf" 1)" "$version" false ""
      compose --profile "$b" stop "$b" "telegraf-$b" >>"$logf" 2>&1 || true
      return 0
    fi
  fi
  rc=0
  if $search; then
    args=("--$mode" --broker "$b" --scenario "$scenario" --search-id "$run_id" --cpu-target "$cpu_target" "${search_opts[@]}")
    "$ROOT/scripts/capacity.sh" "${args[@]}" "${env_args[@]}" 2>&1 | tee -a "$logf" >&2 || rc=${PIPESTATUS[0]}
    search_outcome "$name" "$logf" "$rc"
    entry "$name" broker "$mode" "" "$STATUS" "$SHORT" "$REASON" "$version" true ""
  else
    # bench.sh: the stack up (natively) or the profile (compose), the run, and its report.
    "$ROOT/scripts/bench.sh" "--$mode" --broker "$b" --scenario "$scenario" "${impair_args[@]}" -e "RUN_ID=$run_id" \
      "${env_args[@]}" 2>&1 | tee -a "$logf" >&2 || rc=${PIPESTATUS[0]}
    if result_ok "$run_id"; then
      ((rc == 0)) || log "$name: the run's thresholds failed (exit code $rc): its column says which"
      entry "$name" broker "$mode" "" ran "" "" "$version" "$influx" ""
    elif [[ "$mode" == native ]]; then
      not_native "$name" "scripts/bench.sh $(why "$logf" "$rc")" "the run did not complete"
    else
      entry "$name" broker "$mode" "" "not run" "the run did not complete" "scripts/bench.sh $(why "$logf" "$rc")" \
        "$version" false ""
    fi
  fi
  if [[ "$mode" == compose ]]; then
    log "$b: stopping its services ($b, telegraf-$b); InfluxDB and Grafana stay up"
    compose --profile "$b" stop "$b" "telegraf-$b" >>"$logf" 2>&1 || warn "$b: could not stop its services: see $logf"
  fi
}

# --- Brokers already running ---------------------------------------------
# run_target NAME: one run (or search) of a broker already running.
run_target() {
  name="$1"
  entry_broker="" entry_profile=""
  url="${target_url[$name]}" run_id="$compare_id-$name$rsuffix" logf="$out/logs/$name$rsuffix.log"
  : >"$logf"
  read -r host port < <(host_port "$url")
  if ! reachable "$host" "$port"; then
    entry "$name" target target "$url" "not run" "unreachable ($host:$port: $REACH)" \
      "unreachable: a TCP connect to $host:$port failed ($REACH)" "" false ""
    return 0
  fi
  version="$(broker_version "$host" "$port")"
  host_tag=""
  # A target on this host: the native stack's Telegraf measures this host (its points are tagged
  # with the stack's broker, which the target's own report reads them under); not the target's process.
  if [[ "$host" =~ ^(127\.|localhost$|::1$) ]] && native_up; then host_tag="$(cat "$STATE/broker" 2>/dev/null || true)"; fi
  rc=0
  if $search; then
    log "$name: capacity search $run_id on $url; log: $logf"
    args=(--target "$name=$url" --scenario "$scenario" --search-id "$run_id" --cpu-target "$cpu_target" "${search_opts[@]}")
    influx=false
    # The trials' k6 metrics to InfluxDB, when a Telegraf listener answers here.
    if telegraf_up; then influx=true; export MQTTBENCH_K6_OUT="influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6"; fi
    "$ROOT/scripts/capacity.sh" "${args[@]}" "${env_args[@]}" 2>&1 | tee -a "$logf" >&2 || rc=${PIPESTATUS[0]}
    unset MQTTBENCH_K6_OUT
    search_outcome "$name" "$logf" "$rc"
    entry "$name" target target "$url" "$STATUS" "$SHORT" "$REASON" "$version" "$influx" ""
    return 0
  fi
  [[ -x "$(k6_bin)" ]] || "$ROOT/scripts/setup.sh" k6
  out_args=() influx=false
  if telegraf_up; then
    out_args=(--out "influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6") influx=true
  else
    log "$name: no Telegraf listener at 127.0.0.1:$TELEGRAF_K6_PORT: run without InfluxDB (host and broker metrics missing)"
  fi
  [[ -z "${target_pid[$name]:-}" ]] || watch_process "$name" "${target_pid[$name]}" "$logf"
  log "$name: running $scenario on $url (run $run_id); log: $logf"
  (
    ulimit -n "$(ulimit -Hn)"
    export K6_NO_USAGE_REPORT=true RUN_ID="$run_id" BROKER="$name" BROKER_VERSION="$version" MQTT_URL="$url" \
      RESULTS_DIR="$ROOT/reports/raw"
    exec "$(k6_bin)" run --address "" "${out_args[@]}" "${env_args[@]}" "$ROOT/k6/scenarios/$scenario.js"
  ) 2>&1 | tee -a "$logf" >&2 || rc=${PIPESTATUS[0]}
  unwatch
  if result_ok "$run_id"; then
    ((rc == 0)) || log "$name: the run's thresholds failed (k6 exit code $rc): its column says which"
    if $influx; then sleep 2; run_report "$run_id" ${host_tag:+"--host-tag=$host_tag"}; else run_report --no-influx "$run_id"; fi # Telegraf's last flush
    entry "$name" target target "$url" ran "" "" "$version" "$influx" "$host_tag"
  else
    entry "$name" target target "$url" "not run" "the run did not complete" "k6 $(why "$logf" "$rc")" "$version" false ""
  fi
}

rounds_loop

# --- The comparison report -----------------------------------------------
load_influx_token
limits=""
if ((${#brokers[@]} == 0)); then
  mode=target
elif [[ "$mode" == compose ]]; then
  limits="every broker's container: cpus BROKER_CPUS=$BROKER_CPUS, mem_limit BROKER_MEMORY=$BROKER_MEMORY (.env)"
else
  limits="native processes: no CPU or memory limit; the broker shares this host with the load generator"
fi
printf '%s\n' "${entries[@]}" | jq -s --arg id "$compare_id" --arg scenario "$scenario" --argjson search "$search" \
  --arg mode "$mode" --argjson cpu "$cpu_target" --arg limits "$limits" --arg search_opts "${search_opts[*]}" \
  --arg started "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --argjson rounds "$(rounds_json)" --args '{compare_id: $id, scenario: $scenario, search: $search, rounds: $rounds,
    mode: $mode, cpu_target: $cpu, search_options: $search_opts, limits: (if $limits == "" then null else $limits end),
    written_at: $started, env: $ARGS.positional, brokers: .}' "${k6_env[@]}" >"$out/manifest.json"
report_and_exit
