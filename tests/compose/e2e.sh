#!/usr/bin/env bash
# The compose stack end to end, as a user meets it: a fresh copy of the
# project (what git tracks or would track: no .env.local, no .state), then the card's
# own commands, typed as the README shows them:
#
#   docker compose --profile <broker> up -d --wait
#   docker compose run --rm k6 run fanin.js
#
# then checks that host, container, broker (where its image serves them) and
# k6 metrics reached InfluxDB, writes the report from that data, takes the
# stack down and up again (data and secrets kept) and down (nothing left
# running).
#
# Usage: tests/compose/e2e.sh [--broker mosquitto] [--stand-ins] [--accept-eula] [--conformance] [--keep]
#   --stand-ins  images built locally (build-images.sh) instead of pulled,
#                through tests/compose/stand-ins.yaml; the broker's own
#                image if this host has it (its image variable), else its
#                stand-in (tests/compose/images/<broker>.Dockerfile), on the
#                host's network as its broker.toml [compose.host_network] says
#   --accept-eula  writes the broker's EULA line into its EULA file in the
#                copy (brokers/<broker>/broker.toml [compose] eula), as a user
#                who read and accepted it does; nothing for a broker without one
#   --conformance  also run the broker conformance suite (scripts/conformance.sh)
#                on the stack's broker, as the copy's user would
#   --keep       leave the copy and the stack's volumes for inspection
# The same script runs in GitHub's compose matrix with the real images.
set -euo pipefail
# shellcheck source=../../scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"
# The copy is a fresh user's: its runs go to its own reports/, whatever the tests' results folder.
unset MQTTBENCH_RESULTS
# k6_tail LOG: a failed k6 run's last lines, each marked "k6| " so a caller
# that keeps only this script's own lines keeps them too.
k6_tail() { tail -n 30 "$1" | sed 's/^/k6| /' >&2; }

broker=mosquitto stand_ins=false keep=false accept_eula=false conformance=false
while (($#)); do
  case "$1" in
    --broker) broker="${2:?--broker needs a name}"; shift 2 ;;
    --stand-ins) stand_ins=true; shift ;;
    --accept-eula) accept_eula=true; shift ;;
    --conformance) conformance=true; shift ;;
    --keep) keep=true; shift ;;
    *) die "unknown argument '$1' (usage: tests/compose/e2e.sh [--broker NAME] [--stand-ins] [--accept-eula] [--conformance] [--keep])" ;;
  esac
done
python3 -P -m mqttbench.brokers.facts get "$broker" image >/dev/null 2>&1 || die "--broker $broker: no brokers/$broker/broker.toml (known: $(brokers | tr '\n' ' '))"
# --stand-ins: the broker's own image where this host has it (its image
# variable, from .env or the environment), else its stand-in; on the host's
# network as its broker.toml [compose.host_network] says (host_network.py).
image=""
if $stand_ins; then
  image_var=$(python3 -P -m mqttbench.brokers.facts get "$broker" image)
  image=${!image_var:-}
  if [[ -z "$image" ]] || ! docker image inspect "$image" >/dev/null 2>&1; then
    [[ -f "$ROOT/tests/compose/images/$broker.Dockerfile" ]] ||
      die "--stand-ins: $broker's image ${image:-($image_var is not set)} is not on this host and $broker has no stand-in image (tests/compose/images/$broker.Dockerfile): load or pull its image ($image_var in .env), or run it without --stand-ins"
    image="mqtt-bench-test/$broker:test"
  fi
  python3 -P -m mqttbench.brokers.facts get "$broker" compose.host_network >/dev/null 2>&1 ||
    die "--stand-ins: brokers/$broker/broker.toml has no [compose.host_network], which says how its container listens on the host's loopback (tests/compose/host_network.py; brokers/mosquitto/broker.toml has one)"
fi
# What the broker's profile publishes, gathers and needs beyond the stack's
# own: compose_ports, compose_metrics, compose_metrics_url,
# compose_claims_secret, compose_eula, metrics_measurement, metrics_filter
# (brokers/<broker>/broker.toml [compose] and [metrics]).
compose_ports=() compose_metrics=true compose_metrics_url="" compose_claims_secret="" compose_eula=""
metrics_measurement="" metrics_filter=""
plan=$(python3 -P -m mqttbench.brokers.compose plan "$broker") || die "brokers/$broker/broker.toml: no compose plan"
eval "$plan"
if [[ -n "$compose_eula" ]] && ! $accept_eula; then
  die "$broker's image starts once its EULA is accepted: read brokers/$broker/README.md, then run with --accept-eula (it writes $compose_eula into the copy)"
fi
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"

# A container cannot get more open files than the host allows (a CI sandbox
# may allow 20,000): compose.yaml's NOFILE_LIMIT, as a user there would set it.
if [[ -z "${NOFILE_LIMIT:-}" && "$(ulimit -Hn)" != unlimited ]] && (($(ulimit -Hn) < 1048576)); then
  NOFILE_LIMIT=$(ulimit -Hn)
  export NOFILE_LIMIT
  log "NOFILE_LIMIT=$NOFILE_LIMIT: the host's hard limit on open files"
fi

# The user's stack and this test's never share containers or volumes.
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-mqtt-bench-e2e}"
# Nor ports: the caller chooses them (compose.yaml's port variables, the
# broker's own among them: compose_ports, VAR=PORT; the pytest test moves
# them all off the defaults); each must be free, or the test stops here
# naming what holds it.
ports=(MQTT_PORT MQTTS_PORT MTLS_PORT WS_PORT INFLUXDB_PORT TELEGRAF_K6_PORT NODE_EXPORTER_PORT GRAFANA_PORT)
declare -A default_port=([GRAFANA_PORT]=3000)
for p in "${compose_ports[@]}"; do
  ports+=("${p%%=*}")
  default_port[${p%%=*}]=${p#*=}
done
for var in "${ports[@]}"; do
  port="${!var:-${default_port[$var]:-}}"
  if holder=$(python3 -P -m mqttbench.stack.ports holder "$port"); then
    die "port $port ($var) is held by $holder; or run the test on another port: $var=$((port + 10000)) tests/compose/e2e.sh ..."
  fi
done
work=$(mktemp -d)
copy="$work/mqtt-bench"
mkdir -p "$copy"
(cd "$ROOT" && git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do [[ -e "$f" ]] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -xf - -C "$copy"
cd "$copy"
! $accept_eula || python3 -P -m mqttbench.brokers.compose accept-eula "$broker"
if $stand_ins; then
  "$ROOT/tests/compose/build-images.sh"
  log "$broker: image $image, on the host's network (brokers/$broker/broker.toml [compose.host_network])"
  python3 -P "$ROOT/tests/compose/host_network.py" "$broker" "$image" "$work/host-network.yaml"
  export COMPOSE_FILE="compose.yaml:tests/compose/stand-ins.yaml:$work/host-network.yaml"
fi

dc() { docker compose "$@"; }
cleanup() {
  local rc=$?
  if ((rc != 0)); then
    warn "end-to-end test failed: the stack's last logs follow"
    dc --profile "$broker" ps -a >&2 || true
    dc --profile "$broker" logs --no-color --tail 40 >&2 || true
  fi
  if $keep; then
    log "kept: $copy (project $COMPOSE_PROJECT_NAME)"
  else
    dc --profile "$broker" --profile k6 down -v --remove-orphans >/dev/null 2>&1 || true
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT

t0=$SECONDS
log "docker compose --profile $broker up -d --wait   (fresh copy: $copy)"
dc --profile "$broker" up -d --wait
log "healthy in $((SECONDS - t0))s"
[[ ! -e .env.local ]] || die "compose up wrote .env.local: secrets belong in the secrets volume"

# What a user reads Grafana's password and the token with (README), from the copy.
secret() { "$copy/scripts/compose.sh" secret "$1"; }
INFLUX_TOKEN=$(secret influx_token)
export INFLUX_TOKEN
[[ ${#INFLUX_TOKEN} -ge 20 ]] || die "the generated InfluxDB token is too short: '${#INFLUX_TOKEN}' characters"
# No secret is in any container's configuration (the patterns reach grep
# through a file descriptor, not its argv): every file init wrote, so a
# secret added to scripts/init/secrets.sh is checked too.
# (tls/ holds the certificates and keys of init-tls: the server's and the
# client's keys are read by the broker and k6 as files, never as values.)
mapfile -t names < <(dc run --rm --no-deps -T --entrypoint ls init /run/secrets/mqtt-bench | grep -vx tls)
((${#names[@]} >= 6)) || die "the secrets volume holds ${#names[@]} files: ${names[*]}"
secrets=()
for name in "${names[@]}"; do secrets+=("$(secret "$name")"); done
for c in $(dc --profile "$broker" ps -aq); do
  if docker inspect "$c" | grep -qFf <(printf '%s\n' "${secrets[@]}"); then die "docker inspect of $c shows a secret"; fi
done

run_id="e2e-$broker-$(date -u +%Y%m%dT%H%M%S)"
log "docker compose run --rm k6 run fanin.js   (run $run_id)"
# P99_MS: this test asserts behaviour, not latency, which a busy machine
# pushes past the default 100 ms (BEHAVIOUR_P99_MS in tests/k6_runs.py). No
# BROKER, as in the README: the k6 service names the broker that is up.
dc run --rm -e RUN_ID="$run_id" -e SCALE="${E2E_SCALE:-0.05}" -e DURATION="${E2E_DURATION:-20s}" \
  -e P99_MS="${E2E_P99_MS:-60000}" \
  k6 run fanin.js 2>&1 | tee "$work/k6.log"
[[ -s "reports/raw/$run_id.json" ]] || die "k6 wrote no result file reports/raw/$run_id.json"
# Its broker's version, asked where brokers/<name>/broker.toml says the broker tells it.
if python3 -P -m mqttbench.brokers.facts get "$broker" version_topic >/dev/null 2>&1; then
  jq -e '.versions.broker' "reports/raw/$run_id.json" >/dev/null ||
    die "the run records no version of $broker: $(jq -r '.versions.broker_source' "reports/raw/$run_id.json")"
  log "the run records $broker $(jq -r '.versions.broker + " (" + .versions.broker_source + ")"' "reports/raw/$run_id.json")"
fi
grep -q "fanin on $broker: " "$work/k6.log" || die "the run does not name $broker, the broker that is up"
# The live status line, every 10 s: elapsed/planned, connections open/planned.
grep -Eq 'mqtt: 0:1[0-9]/[0-9:]+ connections [0-9]+/[0-9]+ sent' "$work/k6.log" ||
  die "k6 printed no status line at 0:10"

# The broker's TLS, mutual-TLS and WebSocket listeners, reached from the k6
# container as the README says (MQTT_URL; TLS_CA and the client certificate
# default to the files init-tls made): p2p at QoS 1 delivers exactly.
# Inside compose's network the broker listens on its own ports; the
# stand-ins' host network moves them as the listeners' variables say.
# Every profile listens on the same three (brokers/<name>/: settings read
# in each broker's source, tests/test_upstream_*.py); EMQX, NanoMQ and
# VerneMQ run them only here, in GitHub's compose matrix.
if $stand_ins; then
  # From .env (scripts/lib.sh loads it), or the environment.
  tls_port=${MQTTS_PORT:?} mtls_port=${MTLS_PORT:?} ws_port=${WS_PORT:?}
else
  tls_port=8883 mtls_port=8884 ws_port=8083
fi
for url in "mqtts://broker:$tls_port" "mqtts://broker:$mtls_port" "ws://broker:$ws_port/mqtt"; do
  log "docker compose run --rm -e MQTT_URL=$url k6 run p2p.js"
  dc run --rm -e MQTT_URL="$url" -e BROKER="$broker" -e QOS=1 -e SCALE=0.05 -e DURATION=5s -e P99_MS="${E2E_P99_MS:-60000}" \
    k6 run p2p.js \
    >"$work/k6-transport.log" 2>&1 || { k6_tail "$work/k6-transport.log"; die "p2p over $url failed"; }
  grep -q "PASSED" "$work/k6-transport.log" || die "p2p over $url did not pass"
done

# The README's line for our k6 outside Docker, typed as it stands: the
# scenario's own defaults (2,000 publishers, 100 subscribers, 1 minute), the
# metrics through Telegraf's listener, the result where scripts/report.sh
# looks. The ports are the stack's (the defaults 1883 and 8186 unless the
# caller moved them, as the test does): MQTT_URL, the README's parameter,
# points k6 at a moved broker. Where this host has no k6 build (GitHub's
# compose job builds none), the k6 container's run above stands for it.
native_run=""
# Its p99 bound is the scenario's 100 ms: a parallel test run (tests/lanes.py)
# gives it the host alone.
quiet=()
[[ -z "${MQTTBENCH_QUIET_LOCKS:-}" ]] || quiet=(python3 "$ROOT/tests/host_lock.py" "$MQTTBENCH_QUIET_LOCKS" --)
if [[ -x "$(k6_bin)" ]]; then
  log "cd k6/scenarios && MQTT_URL=mqtt://127.0.0.1:$MQTT_PORT k6 run --out influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6 fanin.js   (our k6, the scenario's defaults)"
  (cd k6/scenarios && PATH="$(dirname "$(k6_bin)"):$PATH" K6_NO_USAGE_REPORT=true MQTT_URL="mqtt://127.0.0.1:$MQTT_PORT" \
    "${quiet[@]}" k6 run --out "influxdb=http://127.0.0.1:$TELEGRAF_K6_PORT/k6" fanin.js) >"$work/k6-native.log" 2>&1 ||
    { k6_tail "$work/k6-native.log"; die "k6 run fanin.js failed"; }
  native_run=$(grep -o 'result *[^ ]*reports/raw/[^ ]*\.json' "$work/k6-native.log" | sed 's|.*/||; s|\.json$||')
  [[ -n "$native_run" && -s "reports/raw/$native_run.json" ]] || die "k6 run fanin.js left no result in reports/raw"
fi

# flux QUERY: the CSV answer of InfluxDB (the token through a header file).
flux() {
  influx_curl -fsS "http://127.0.0.1:${INFLUXDB_PORT}/api/v2/query?org=$INFLUXDB_ORG" \
    -H 'Content-Type: application/vnd.flux' -H 'Accept: application/csv' --data "$1"
}
# count MEASUREMENT [FILTER]: points of the last 10 minutes.
count() {
  flux "from(bucket:\"$INFLUXDB_BUCKET\") |> range(start:-10m) |> filter(fn:(r) => r._measurement == \"$1\" ${2:+and $2}) |> group() |> count()" |
    awk -F, 'NR==2 {print $NF}' | tr -d '\r'
}
# What must have reached InfluxDB: what|measurement|Flux condition.
expect=(
  "host CPU, Telegraf|cpu|"
  "the broker container, Telegraf's docker input|docker_container_cpu|r.container_name =~ /-$broker-[0-9]+\$/"
  "the node_exporter scrape|prometheus|r.source == \"node_exporter\""
  "k6 metrics of this run|mqtt_publishes|r.run_id == \"$run_id\""
)
[[ -z "$native_run" ]] || expect+=("k6 metrics of the run outside Docker|mqtt_publishes|r.run_id == \"$native_run\"")
# The broker's own series, where its image serves them (compose_metrics).
! $compose_metrics || expect+=("the broker's metrics|$metrics_measurement|$metrics_filter")
sleep 12 # two Telegraf flushes
for e in "${expect[@]}"; do
  IFS='|' read -r what m f <<<"$e"
  n=$(count "$m" "$f")
  ((${n:-0} > 0)) || die "no $what in InfluxDB (measurement $m${f:+, $f})"
  log "InfluxDB has $what: $n points"
done

# The broker's CPU is its container's alone (not Telegraf's, named after it).
containers=$(flux "from(bucket:\"$INFLUXDB_BUCKET\") |> range(start:-10m) |> filter(fn:(r) => r._measurement == \"docker_container_cpu\") |> keep(columns:[\"container_name\"]) |> distinct(column:\"container_name\") |> group()" |
  tr -d '\r' | awk -F, 'NR>1 && $NF != "" {print $NF}' | sort -u | tr '\n' ' ')
[[ "$containers" =~ ^[^\ ]*-$broker-[0-9]+\ $ ]] || die "docker_container_cpu holds other containers than the broker's: $containers"

"$copy/scripts/compose.sh" smoke

# As a user's shell runs it: no INFLUX_TOKEN, and a native stack's
# .env.local beside; the running compose stack's token is the one used.
log "scripts/report.sh $run_id"
printf 'INFLUX_TOKEN=the-native-stacks-token\n' >.env.local
env -u INFLUX_TOKEN "$copy/scripts/report.sh" "$run_id"
rm .env.local
grep -q "$run_id" "reports/$run_id/report.md" || die "the report does not name its run"
grep -q "Broker process CPU: max" "reports/$run_id/report.md" || die "the report has no broker CPU from InfluxDB"

if $conformance; then
  # The broker's log since its start, its metrics endpoint and the secret its
  # auth claims name, as its broker.toml [compose] gives them; an image that
  # serves no metrics has no counters to compare (--no-metrics).
  dc --profile "$broker" logs --no-color --no-log-prefix "$broker" >"$work/broker.log"
  args=(--broker "$broker" --mqtt-url "mqtt://127.0.0.1:$MQTT_PORT" --log-file "$work/broker.log")
  [[ -z "$compose_metrics_url" ]] || args+=(--metrics-url "$compose_metrics_url")
  $compose_metrics || args+=(--no-metrics)
  if [[ -n "$compose_claims_secret" ]]; then
    secret "$compose_claims_secret" >"$work/secret"
    args+=(--secret-file "$work/secret")
  fi
  # Telegraf's $SYS subscription would count in Mosquitto's publish/messages/sent.
  dc --profile "$broker" stop "telegraf-$broker"
  log "scripts/conformance.sh ${args[*]}"
  "$copy/scripts/conformance.sh" "${args[@]}"
  dc --profile "$broker" start "telegraf-$broker"
fi

log "down, then up again: the data and the secrets stay"
dc --profile "$broker" down
dc --profile "$broker" up -d --wait
[[ "$(secret influx_token)" == "$INFLUX_TOKEN" ]] || die "a second up changed the InfluxDB token"
n=$(count mqtt_publishes "r.run_id == \"$run_id\"")
((${n:-0} > 0)) || die "the run's k6 points are gone after down and up"

dc --profile "$broker" down
left=$(docker ps -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")
[[ -z "$left" ]] || die "containers still running after down: $left"
log "compose end to end ($broker): passed in $((SECONDS - t0))s"
