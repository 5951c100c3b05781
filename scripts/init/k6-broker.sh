#!/bin/sh
# The k6 service's entrypoint under compose: scripts/init/k6-broker.sh k6 ARGS...
#
# A run names its broker (its result, its metrics' broker tag, its report):
# the one whose profile is up, so that the README's
#
#   docker compose --profile emqx up -d --wait
#   docker compose run --rm k6 run fanin.js
#
# measures and names EMQX. Each broker service is on the compose network
# under its own service name, and Docker's embedded DNS answers only for a
# running container's, so the brokers whose names resolve are the ones up.
# The names are the folders of brokers/ (mounted at BROKERS_DIR), the one
# list of brokers. BROKER given (BROKER=emqx docker compose run ..., or
# run -e BROKER=emqx) wins; with several brokers up or none, a run stops
# here rather than guess, naming them and the fix.
set -eu

brokers_dir="${BROKERS_DIR:-/mqtt-bench/brokers}"

# run_broker NAME ARGS...: runs k6 for broker NAME, whose version the run
# asks of it (k6/lib/scenario.js) where its broker.toml says it tells it:
# its top-level version_topic and version_username; and the verdicts its
# [[deviations]] list, which the run names as the broker's known ones
# (BROKER_DEVIATIONS, comma-separated: mqttbench/brokers/facts.py's too).
run_broker() {
  toml="$brokers_dir/$1/broker.toml"
  shift
  if [ -f "$toml" ]; then
    : "${BROKER_VERSION_TOPIC:=$(sed -n 's/^version_topic *= *"\(.*\)"$/\1/p' "$toml")}"
    : "${BROKER_VERSION_USERNAME:=$(sed -n 's/^version_username *= *"\(.*\)"$/\1/p' "$toml")}"
    : "${BROKER_DEVIATIONS:=$(awk -F'"' '/^\[/ { in_dev = ($0 == "[[deviations]]") }
      in_dev && /^verdict *=/ { printf "%s%s", sep, $2; sep = "," }' "$toml")}"
    export BROKER_VERSION_TOPIC BROKER_VERSION_USERNAME BROKER_DEVIATIONS
  fi
  exec "$@"
}

# Only a run needs its broker; k6 version, inspect, x ... do not. A k6 flag
# `-e BROKER=...` names it as BROKER does.
[ "${2:-}" = run ] || exec "$@"
[ -z "${BROKER:-}" ] || run_broker "$BROKER" "$@"
for arg in "$@"; do
  case "$arg" in BROKER=*) run_broker "${arg#BROKER=}" "$@" ;; esac
done

names=""
for dir in "$brokers_dir"/*/; do
  [ -f "$dir/broker.toml" ] && names="$names $(basename "$dir")"
done
[ -n "$names" ] || { echo "k6-broker: no broker folders in $brokers_dir (compose.yaml mounts ./brokers there)" >&2; exit 2; }

# All the names at once: a name nobody answers for may wait for the host's
# resolvers' timeout.
found=$(mktemp -d)
for name in $names; do
  (timeout 3 getent hosts "$name" >/dev/null 2>&1 && : >"$found/$name") &
done
wait
up=""
for name in $names; do
  if [ -e "$found/$name" ]; then up="${up:+$up }$name"; fi
done
rm -rf "$found"
cmd="docker compose run --rm k6 $(shift; echo "$*")"

case "$up" in
  "")
    echo "k6-broker: no broker is up (none of$names answers on the compose network):" >&2
    echo "  start one: docker compose --profile <name> up -d --wait" >&2
    echo "  or name the broker this run measures: BROKER=<name> $cmd" >&2
    exit 2 ;;
  *" "*)
    echo "k6-broker: several brokers are up ($up); this run does not guess which one it measures:" >&2
    echo "  BROKER=<name> $cmd   (<name>: one of $up)" >&2
    exit 2 ;;
esac
echo "k6-broker: BROKER=$up (the broker that is up)" >&2
export BROKER="$up"
run_broker "$up" "$@"
