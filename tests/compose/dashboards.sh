#!/usr/bin/env bash
# The provisioned dashboards in a real browser, as a person opens them after
# a p2p run: the compose stack up from this checkout (its own project name),
#
#   docker compose --profile <broker> up -d --wait
#   docker compose run --rm k6 run p2p.js
#
# then tests/compose/check_dashboards.py opens every dashboard with the
# run's run_id in headless Chromium, saves a screenshot of each in --out and
# fails on a panel error, a Flux group key in a legend or a `_value` stat;
# the stack is taken down (volumes too) at the end.
#
# Usage: tests/compose/dashboards.sh [--broker mosquitto] [--accept-eula] [--out DIR] [--keep]
#   --accept-eula          writes the broker's EULA line into its EULA file
#                          (brokers/<broker>/broker.toml [compose] eula), as a
#                          user who read and accepted it does; nothing for a
#                          broker without one
#   --keep                 leave the stack up (Grafana on GRAFANA_PORT)
# It needs the stack's ports free (a stack of yours down). By hand against a
# stack that is already up: tests/compose/check_dashboards.py alone.
# GitHub's compose job runs it after tests/compose/e2e.sh, with the real images.
set -euo pipefail
# shellcheck source=../../scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

broker=mosquitto out="$PWD/dashboard-screenshots" keep=false accept_eula=false
while (($#)); do
  case "$1" in
    --broker) broker="${2:?--broker needs a name}"; shift 2 ;;
    --out) out="$(realpath -m "${2:?--out needs a directory}")"; shift 2 ;;
    --accept-eula) accept_eula=true; shift ;;
    --keep) keep=true; shift ;;
    *) die "unknown argument '$1' (usage: tests/compose/dashboards.sh [--broker NAME] [--accept-eula] [--out DIR] [--keep])" ;;
  esac
done
python3 -P -m mqttbench.brokers.facts get "$broker" image >/dev/null 2>&1 || die "--broker $broker: no brokers/$broker/broker.toml (known: $(brokers | tr '\n' ' '))"
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"
cd "$ROOT"
! $accept_eula || python3 -P -m mqttbench.brokers.compose accept-eula "$broker"
# The same host limit on open files as tests/compose/e2e.sh allows for.
if [[ -z "${NOFILE_LIMIT:-}" && "$(ulimit -Hn)" != unlimited ]] && (($(ulimit -Hn) < 1048576)); then
  NOFILE_LIMIT=$(ulimit -Hn)
  export NOFILE_LIMIT
fi
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-mqtt-bench-dashboards}"

password=$(mktemp)
cleanup() {
  local rc=$?
  rm -f "$password"
  ((rc == 0)) || compose --profile "$broker" logs --no-color --tail 20 grafana >&2 || true
  $keep || compose --profile "$broker" --profile k6 down -v --remove-orphans >/dev/null 2>&1 || true
  exit "$rc"
}
trap cleanup EXIT
mkdir -p "$out"

log "docker compose --profile $broker up -d --wait"
compose --profile "$broker" up -d --wait
run_id="dashboards-$broker-$(date -u +%Y%m%dT%H%M%S)"
log "docker compose run --rm k6 run p2p.js   (run $run_id, its output in $out/k6.log)"
compose run --rm -e RUN_ID="$run_id" -e BROKER="$broker" -e SCALE="${DASHBOARDS_SCALE:-0.2}" \
  -e DURATION="${DASHBOARDS_DURATION:-30s}" k6 run p2p.js >"$out/k6.log" 2>&1 ||
  { tail -n 30 "$out/k6.log" >&2; die "k6 run p2p.js failed"; }
# Two Telegraf flushes, and Mosquitto's $SYS a few sys_intervals on.
sleep 20

compose_secret grafana_admin_password >"$password"
python3 "$ROOT/tests/compose/check_dashboards.py" --grafana "http://127.0.0.1:${GRAFANA_PORT:-3000}" \
  --run-id "$run_id" --broker "$broker" --scenario p2p --password-file "$password" --out "$out"
