# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # compare.sh's globals (k6_env, runs, out, round, ...), set and read there
# compare.sh in rounds, and its verdicts against a baseline (docs/comparison.md):
#   --rounds N           each column runs N times, alternating (A B A B ...), so that
#                        a busy spell of the host weighs on every column alike; each
#                        round is a run of its own, <id>-<name>-r<k>; a cell is the
#                        median of its rounds, every round's value beside it.
#   --baseline NAME      each other column, per metric, against column NAME: the change
#                        of the medians, its bootstrap interval and a word (regressed,
#                        improved, no change beyond noise) (mqttbench/report/regress.py).
#   --fail-on BOUNDS     e.g. 'p99=+10%,rate=-5%,broker_cpu_per_msg=+10%': exit 4 when a
#                        metric regressed with its whole interval beyond its bound
#                        (after the report is written). Metrics: rate, p50, p99,
#                        broker_cpu_per_msg, rss, conn_rate, loss (in points: loss=+0.1pt).
#   --save-baseline FILE the baseline column's rounds (or the only column's), with what
#                        judges comparability: scenario, parameters, versions, host.
#   --against FILE       a saved baseline as the baseline column; refused when the
#                        scenario or a parameter differs, a warning when host or
#                        generator do.
# Sourced by scripts/compare.sh, whose bad, log, ROOT, CACHE and compare_id it uses;
# the options are checked by report.rounds (one reader of bounds and baseline files).

rounds=1 baseline="" fail_on="" save_baseline="" against=""
round=1 rsuffix=""

# rounds_option OPTION VALUE: one of the options above.
rounds_option() {
  [[ -n "$2" ]] || bad "$1 needs a value (see scripts/compare.sh --help)"
  case "$1" in
    --rounds) rounds="$2" ;;
    --baseline) baseline="$2" ;;
    --fail-on) fail_on="$2" ;;
    --save-baseline) save_baseline="$2" ;;
    --against) against="$2" ;;
  esac
}

# report_module MODULE ARG...: python -m mqttbench.report.MODULE (rounds, brokers).
report_module() {
  [[ -x "$CACHE/venv/current/bin/python" ]] || "$ROOT/scripts/setup.sh" python >&2
  "$CACHE/venv/current/bin/python" -P -m "mqttbench.report.$1" "${@:2}"
}

# rounds_check SEARCH COLUMN...: the options read and checked before anything
# starts (exit 2 with the fix); a relative FILE is the caller's.
rounds_check() {
  local search="$1"
  shift
  [[ -z "$save_baseline" ]] || save_baseline="$(realpath -m -- "$save_baseline")"
  [[ -z "$against" ]] || against="$(realpath -m -- "$against")"
  local env_args=()
  for kv in "${k6_env[@]}"; do env_args+=(--env "$kv"); done
  report_module rounds check --rounds "$rounds" --baseline "$baseline" --fail-on "$fail_on" \
    --save-baseline "$save_baseline" --against "$against" --scenario "$scenario" --search "$search" \
    --columns "$(IFS=,; echo "$*")" "${env_args[@]}" || exit 2
}

# set_round K: the round that runs now; its runs are <id>-<name>-r<k> (one round: <id>-<name>).
set_round() {
  round="$1"
  if ((rounds == 1)); then rsuffix=""; else rsuffix="-r$1"; fi
}

# round_ids NAME: every run id of a column.
round_ids() {
  local k
  if ((rounds == 1)); then echo "$compare_id-$1"; return; fi
  for ((k = 1; k <= rounds; k++)); do echo "$compare_id-$1-r$k"; done
}

# rounds_loop: every column once per round, in the same order each round.
rounds_loop() {
  local k r n
  for ((k = 1; k <= rounds; k++)); do
    set_round "$k"
    ((rounds == 1)) || log "round $k of $rounds"
    for r in "${runs[@]}"; do run_managed "$r"; done
    for n in "${target_names[@]}"; do run_target "$n"; done
  done
}

# rounds_json: the options, for the manifest (report.brokers reads them).
rounds_json() {
  jq -nc --argjson n "$rounds" --arg baseline "$baseline" --arg fail_on "$fail_on" \
    --arg save "$save_baseline" --arg against "$against" \
    'def opt: if . == "" then null else . end;
     {n: $n, baseline: ($baseline | opt), fail_on: ($fail_on | opt), save_baseline: ($save | opt),
      against: ($against | opt)}'
}

# report_and_exit: compare.md from the manifest (report.brokers: the verdicts
# too), then the exit code: 4 when a --fail-on bound was breached (a marked
# run matters less than a regression found), else 1 when a run was marked.
report_and_exit() {
  local rc=0
  report_module brokers "$out/manifest.json" || rc=$?
  case "$rc" in
    0 | 4) ;;
    2) exit 2 ;; # not comparable with the baseline: report.brokers said why
    *) die "the comparison report failed: see the message above (the runs' own reports are in reports/<run id>/)" ;;
  esac
  # --docs: this comparison's section of the page (its marked columns too, with their reasons).
  if [[ -n "$docs" ]]; then
    report_module docs_page write "$out" --docs "$docs" || die "--docs: the section of $docs was not written: see the message above ($out/compare.md was)"
  fi
  if ((marked)); then
    warn "$marked of $(((${#brokers[@]} + ${#target_names[@]}) * rounds)) runs marked (in $out/compare.md)"
    ((rc == 4)) || exit 1
  fi
  exit "$rc"
}
