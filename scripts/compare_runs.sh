# shellcheck shell=bash
# The columns of scripts/compare.sh: one run (or capacity search) of a broker
# this stack starts (run_managed) or of a target already running
# (run_target), and each column's outcome as compare.md records it (entry).
# Sourced by compare.sh once its input is checked: these read its settings
# (mode, scenario, out, env_args, ...).
# shellcheck disable=SC2154 # compare.sh's settings

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

# failed STEP RC [RUN_ID]: why a column's step failed, from what it left as
# values: its run's refusal (<run id>.refused.json: bad input, a capability
# the broker lacks, the generator's limit), else the first message its
# scripts died with ($MQTTBENCH_OUTCOME, lib.sh die), else its exit code.
failed() {
  local refusal="$RESULTS/raw/${3:-}.refused.json" said=""
  if [[ -n "${3:-}" && -f "$refusal" ]]; then
    said="$(jq -r '.message' "$refusal")"
  elif [[ -s "$MQTTBENCH_OUTCOME" ]]; then
    said="$(head -n 1 "$MQTTBENCH_OUTCOME")"
  fi
  printf '%s exit code %s: %s' "$1" "$2" "${said:-no message (see its log)}"
}

result_ok() { is_result "$RESULTS/raw/$1.json"; }
native_up() { "$ROOT/scripts/stack.sh" status >/dev/null 2>&1; }
# A native stack that was down when the comparison began is the comparison's
# own (bench.sh starts it): it may switch that stack from one broker to the
# next. So is one an earlier comparison left up ($STATE/compared; a page's
# two compare.sh commands in a row), until stack.sh up makes it the user's
# again. A stack the user had up is theirs, never stopped here.
OWN_STACK=false
if [[ "$mode" == native ]] && { ! native_up || [[ -f "$STATE/compared" ]]; }; then OWN_STACK=true; fi

# native_ready B LOG: the native stack can run broker B (starting it is
# bench.sh's or capacity.sh's job). When the stack runs another broker, the
# comparison's own stack is stopped for B's; a user's is not this script's
# to stop, and B is marked: why, in $MQTTBENCH_OUTCOME, is the stack's own
# check of B (no native build), else the broker in the way.
native_ready() {
  local b="$1" logf="$2" running
  native_up || return 0
  running="$(cat "$STATE/broker" 2>/dev/null || true)"
  [[ "$running" != "$b" ]] || return 0
  if $OWN_STACK && is_native "$b"; then
    log "the native stack this comparison started runs $running: stopping it for $b's (its data kept)"
    "$ROOT/scripts/stack.sh" down >>"$logf" 2>&1 && return 0
  fi
  local said
  said=$(python3 -P -m mqttbench.brokers.native check "$b" 2>&1) || { echo "$said" >>"$MQTTBENCH_OUTCOME"; return 1; }
  echo "the native stack runs broker '$running': scripts/stack.sh down first, then compare again" >>"$MQTTBENCH_OUTCOME"
  return 1
}

# not_native B REASON SHORT [RUN_ID]: marks broker B, which did not run natively
# (stack.sh's reason: most often, no native build; or the scenario asked for
# what the broker lacks, which k6/lib/params.js refused, naming it, in the
# run's refusal file, <run id>.refused.json).
not_native() {
  local short="$3" reason="$2" refusal="$RESULTS/raw/${4:-}.refused.json"
  if [[ "$reason" == *"no native build"* ]]; then
    short="no native build; use --compose"
    reason+="; scripts/compare.sh --compose runs it in its container"
  fi
  if [[ -n "${4:-}" && -f "$refusal" ]]; then
    # What it lacks, and where its broker.toml says so ([capabilities], natively [native.capabilities]).
    short="$(jq -r '"refused: it lacks \(.lacks) (\(.facts))"' "$refusal")"
    reason="$(jq -r '.message' "$refusal"): refused before any connection"
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
  local name="$1" logf="$2" rc="$3" cap="$RESULTS/capacity-$compare_id-$1/capacity.json"
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
    REASON="$(failed scripts/capacity.sh "$rc")" SHORT="capacity search failed"
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
  export MQTTBENCH_OUTCOME="$out/logs/$name$rsuffix.outcome" # what its scripts die with (lib.sh)
  : >"$MQTTBENCH_OUTCOME"
  entry_broker="" entry_profile=""
  ((${#impairs[@]} == 0)) || entry_broker="$b" entry_profile="$profile"
  : >"$logf"
  log "$name ($mode): $($search && echo "capacity search $run_id" || echo "run $run_id"); log: $logf"
  version="" influx=true
  [[ "$mode" == compose ]] && version="$(pinned_image "$b")"
  if [[ "$mode" == native ]] && ! native_ready "$b" "$logf"; then
    not_native "$name" "$(head -n 1 "$MQTTBENCH_OUTCOME")" "did not start natively"
    return 0
  fi
  if [[ "$mode" == compose ]]; then
    log "$b: starting its profile and waiting until healthy (the core stays up)"
    # docker compose's own last word on stderr is its reason (it leaves no other).
    up_rc=0
    compose --profile "$b" up -d --wait >>"$logf" 2>"$MQTTBENCH_OUTCOME.compose" || up_rc=$?
    cat "$MQTTBENCH_OUTCOME.compose" >>"$logf"
    if ((up_rc != 0)); then
      entry "$b" broker compose "" "not run" "did not start under compose" \
        "docker compose --profile $b up -d --wait exit code $up_rc: $(tail -n 1 "$MQTTBENCH_OUTCOME.compose")" "$version" false ""
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
      not_native "$name" "$(failed scripts/bench.sh "$rc" "$run_id")" "the run did not complete" "$run_id"
    else
      entry "$name" broker "$mode" "" "not run" "the run did not complete" "$(failed scripts/bench.sh "$rc" "$run_id")" \
        "$version" false ""
    fi
  fi
  if [[ "$mode" == native ]] && $OWN_STACK && native_up; then : >"$STATE/compared"; fi
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
  export MQTTBENCH_OUTCOME="$out/logs/$name$rsuffix.outcome" # what its scripts die with (lib.sh)
  : >"$MQTTBENCH_OUTCOME"
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
      RESULTS_DIR="$RESULTS/raw"
    mapfile -d '' cmd < <(python3 -P -m mqttbench.k6 argv "${out_args[@]}" "$ROOT/k6/scenarios/$scenario.js" -- "${env_args[@]}")
    exec "${cmd[@]}"
  ) 2>&1 | tee -a "$logf" >&2 || rc=${PIPESTATUS[0]}
  unwatch
  if result_ok "$run_id"; then
    ((rc == 0)) || log "$name: the run's thresholds failed (k6 exit code $rc): its column says which"
    if $influx; then sleep 2; run_report "$run_id" ${host_tag:+"--host-tag=$host_tag"}; else run_report --no-influx "$run_id"; fi # Telegraf's last flush
    entry "$name" target target "$url" ran "" "" "$version" "$influx" "$host_tag"
  else
    entry "$name" target target "$url" "not run" "the run did not complete" "$(failed k6 "$rc" "$run_id")" "$version" false ""
  fi
}

