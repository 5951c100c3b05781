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
#   --run FOLDER      a saved run's folder (reports/<run_id>, from here or elsewhere), twice or
#                     more: those runs side by side from what their folders saved; nothing is run.
#   --docs FILE       also this comparison's section of a docs page (e.g. docs/brokers-compared.md):
#                     the date, machine, load average, this command, the brokers' versions and
#                     settings and the tables; the section of the same scenario and QoS is
#                     replaced, the rest of the page kept (mqttbench/report/docs_page.py).
# A broker that does not start, or cannot be reached, is marked in its column
# with the reason, and the others still run. Exit code: 0 every broker ran;
# 1 some broker was marked (the report is written all the same); 2 bad input;
# 4 a --fail-on bound was breached (after the report is written).
set -euo pipefail
command=scripts/compare.sh  # as given, for --docs: a word quoted only where the shell needs it
for a in "$@"; do [[ "$a" =~ ^[A-Za-z0-9_./=,:@%+-]+$ ]] && command+=" $a" || command+=" $(printf '%q' "$a")"; done
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Saved run folders side by side (--run FOLDER): the package's, nothing run.
for a in "$@"; do
  if [[ "$a" == --run || "$a" == --run=* ]]; then
    [[ -x "$CACHE/venv/current/bin/python" ]] || "$ROOT/scripts/setup.sh" python
    exec "$CACHE/venv/current/bin/python" -P -m mqttbench.compare "$@"
  fi
done

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
scenario=p2p mode=auto search=false compare_id="" cpu_target=75 search_opts=() docs=""
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
    --docs) [[ -n "${2-}" ]] || bad "--docs needs a Markdown page, e.g. --docs docs/brokers-compared.md"
      docs="$2"; shift 2 ;;
    -h|--help) sed -n '2,41p' "$0"; sed -n '4,19p' "$(dirname "$0")/compare_rounds.sh"; exit 0 ;;
    *) bad "unexpected argument '$1': options are --broker, --target, --scenario, --search, --native, --compose, --id, --cpu-target, --impair, --docs (and the search's, with --search); scenario parameters go as -e NAME=VALUE (e.g. -e QOS=1); other k6 options: scripts/bench.sh" ;;
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
if [[ -n "$docs" ]]; then
  ! $search || bad "--docs writes single runs' tables; a capacity search's are in its compare.md: leave --docs out with --search"
  docs="$(realpath -m -- "$docs")"
  report_module docs_page check "$docs" || exit 2
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
      checked=$(python3 -P -m mqttbench.stack.impair check "$p") || exit 2
      impair_label[$p]=$(jq -r .profile <<<"$checked")
    fi
  done
  [[ "$(printf '%s\n' "${impair_label[@]}" | sort | uniq -d)" == "" && ${#impair_label[@]} == "${#impairs[@]}" ]] ||
    bad "--impair: a profile is named twice (${impairs[*]}): each runs once"
  mode=native
fi
[[ -n "$compare_id" ]] || compare_id="$scenario-$(date -u +%Y%m%dT%H%M%S)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
[[ "$compare_id" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || bad "--id: '$compare_id' must be letters, digits, '.', '_' or '-'"
out="$RESULTS/compare-$compare_id"
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
    for f in "$RESULTS/raw/$rid.json" "$RESULTS/capacity-$rid"; do
      [[ ! -e "$f" ]] || bad "--id: $f exists already (an earlier comparison with this id): choose another id"
    done
  done
done

# Managed brokers: natively or under compose (as scripts/bench.sh decides).
if ((${#brokers[@]})) && [[ "$mode" == auto ]]; then mode="$(stack_mode "${brokers[@]}")"; fi
[[ "$mode" != auto ]] || mode=native

mkdir -p "$out/logs" "$RESULTS/raw"
env_args=()
for kv in "${k6_env[@]}"; do env_args+=(-e "$kv"); done
entries=()  # one JSON object per broker, in order (jq -c)
marked=0

# Each column's run and its outcome (entry, run_managed, run_target): the
# helpers read this script's settings, so they are sourced only now.
# shellcheck source=compare_runs.sh
. "$(dirname "$0")/compare_runs.sh"

load_start="$(cut -d' ' -f1-3 /proc/loadavg)" started_at="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
rounds_loop
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

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
  --arg started "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --argjson rounds "$(rounds_json)" --arg command "$command" \
  --arg began "$started_at" --arg load_start "$load_start" --arg load_end "$load_end" \
  --args '{compare_id: $id, scenario: $scenario, search: $search, rounds: $rounds, command: $command,
    mode: $mode, cpu_target: $cpu, search_options: $search_opts, limits: (if $limits == "" then null else $limits end),
    started_at: $began, written_at: $started, load_average: {start: $load_start, end: $load_end},
    env: $ARGS.positional, brokers: .}' "${k6_env[@]}" >"$out/manifest.json"
report_and_exit
