# shellcheck shell=bash
# Shared shell helpers, sourced by every script in scripts/.
# Loads the pinned versions from .env and defines the cache and state paths.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT

# Versions and settings: .env is the single source (compose reads it too).
# Compose's rule holds here as well: a variable the environment already has
# wins over its line in .env (BROKER_CPUS=4 scripts/bench.sh, an EMQX_IMAGE
# of one's own, a version too: the caches are keyed by the value in force);
# .env supplies the rest.
load_env_file() {
  local name kv kept=()
  while IFS= read -r name; do
    if [[ -v "$name" && "${!name@a}" == *x* ]]; then kept+=("$name=${!name}"); fi  # exported: the environment's
  done < <(sed -nE 's/^[[:space:]]*(export[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)=.*/\2/p' "$1")
  set -a
  # shellcheck source=../.env
  . "$1"
  set +a
  for kv in "${kept[@]}"; do export "${kv:?}"; done
}
load_env_file "$ROOT/.env"

# Toolchains and builds are cached outside the clone, keyed by version, so
# CI and later sessions on the same machine reuse them.
CACHE="${MQTTBENCH_CACHE:-$HOME/.cache/mqtt-bench}"
# Runtime state of the native stack (data, pids, logs, generated token).
STATE="${MQTTBENCH_STATE:-$ROOT/.state}"
export CACHE STATE
# Where runs are written (raw/ the result files, <run_id>/ a run's folder):
# MQTTBENCH_RESULTS, else this checkout's reports/. The package
# (mqttbench.RESULTS), the scenarios (k6/lib/refusal.js) and compose's k6
# service read the same variable; exported only when the user set it, so a
# script of another checkout keeps its own default.
RESULTS="$(realpath -m "${MQTTBENCH_RESULTS:-$ROOT/reports}")"
[[ -z "${MQTTBENCH_RESULTS:-}" ]] || export MQTTBENCH_RESULTS="$RESULTS"
# The orchestration's Python package (mqttbench/), importable from anywhere:
# python3 -P -m mqttbench.brokers.facts, the venv's python -P -m
# mqttbench.report. -P: this checkout's package, never one of the caller's
# working directory (another checkout, a copy of this one).
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH

log()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
# die MESSAGE: the script's end; MESSAGE is also appended to $MQTTBENCH_OUTCOME
# when a caller set it (scripts/compare.sh's columns: the first line is the
# innermost script's, the cause), so that no caller reads it out of a log.
die()  {
  printf 'error: %s\n' "$*" >&2
  [[ -z "${MQTTBENCH_OUTCOME:-}" ]] || printf '%s\n' "$*" >>"$MQTTBENCH_OUTCOME"
  exit 1
}

# step NAME CMD...: run one setup step, one progress line, and name the step
# if it fails (its log is kept for the reader).
step() {
  local name="$1"; shift
  local logf="$CACHE/logs/$name.log" t0=$SECONDS
  mkdir -p "$CACHE/logs"
  printf '==> %-22s ' "$name" >&2
  if "$@" >"$logf" 2>&1; then
    printf 'ok (%ds)\n' "$((SECONDS - t0))" >&2
  else
    printf 'FAILED\n' >&2
    tail -n 25 "$logf" >&2
    die "setup step '$name' failed; full log: $logf"
  fi
}

# The brokers: each folder of brokers/ with a broker.toml, the one place
# that describes a broker (a new folder is a new broker everywhere).
brokers() {
  local f
  for f in "$ROOT"/brokers/*/broker.toml; do [[ -f "$f" ]] && basename "$(dirname "$f")"; done
  return 0
}
# is_broker NAME: NAME is one of brokers (a folder name, never a path).
is_broker() { [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ && -f "$ROOT/brokers/$1/broker.toml" ]]; }
# broker_fact NAME KEY: one value of brokers/NAME/broker.toml (KEY dotted:
# image, metrics.telegraf); fails when it is not there.
broker_fact() { python3 -P -m mqttbench.brokers.facts get "$1" "$2"; }

# compose_profile NAME: compose.yaml has the broker's profile, named as its
# folder, with a service of that name; else fails saying what to add.
compose_profile() {
  local services
  # Read whole: grep -q stopping early would fail a pipeline on SIGPIPE.
  services=$(compose --profile "$1" config --services) || return 1
  grep -qx "$1" <<<"$services" && return 0
  printf 'error: brokers/%s has no service %s in the profile %s of compose.yaml: add its services there (or run it natively: --native)\n' \
    "$1" "$1" "$1" >&2
  return 1
}

# Paths of the built binaries (keyed by version).
influxd_bin()  { echo "$CACHE/influxd/$INFLUXDB_VERSION/influxd"; }
telegraf_bin() { echo "$CACHE/telegraf/$TELEGRAF_VERSION-$(telegraf_key)/telegraf"; }
compose_bin()  { echo "$CACHE/compose/$DOCKER_COMPOSE_VERSION/docker-compose"; }
# k6 is rebuilt whenever the extension source changes: its key is the
# sources' (mqttbench/k6/command.py, which builds every k6 command line).
k6_bin()       { python3 -P -m mqttbench.k6 bin; }
staticcheck_bin() { echo "$CACHE/staticcheck/$STATICCHECK_VERSION/staticcheck"; }
toxiproxy_bin() { echo "$CACHE/toxiproxy/$TOXIPROXY_VERSION/toxiproxy-server"; }

# The telegraf build tags decide the binary, so they are part of its key
# (telegraf/plugins.txt, one per line: mqttbench/settings.py reads it too).
# shellcheck disable=SC2034 # read by scripts/setup/telegraf.sh
mapfile -t TELEGRAF_PLUGINS <"$ROOT/telegraf/plugins.txt"
telegraf_key() { sha256sum <"$ROOT/telegraf/plugins.txt" | cut -c1-10; }

# Ports of the native stack: every one can be overridden.
: "${INFLUXDB_PORT:=8086}"
: "${TELEGRAF_K6_PORT:=8186}"        # InfluxDB v1 listener for `k6 --out influxdb=`
: "${NODE_EXPORTER_PORT:=9100}"
: "${MQTT_PORT:=1883}"
: "${MQTTS_PORT:=8883}"   # mqtts:// (TLS)
: "${MTLS_PORT:=8884}"    # mqtts:// with a client certificate (mutual TLS)
: "${WS_PORT:=8083}"      # ws:// (MQTT over WebSocket)
: "${INFLUXDB_ORG:=mqtt-bench}"
: "${INFLUXDB_BUCKET:=mqtt-bench}"
: "${INFLUXDB_RETENTION:=30d}"
export INFLUXDB_PORT TELEGRAF_K6_PORT NODE_EXPORTER_PORT MQTT_PORT MQTTS_PORT MTLS_PORT WS_PORT INFLUXDB_ORG INFLUXDB_BUCKET INFLUXDB_RETENTION

# as_root CMD...: runs CMD as root, through sudo when this is not root.
as_root() {
  if [[ $(id -u) == 0 ]]; then "$@"; return; fi
  command -v sudo >/dev/null || die "root (or sudo) is needed to run: $*"
  sudo "$@"
}

# missing_packages PKG...: prints the Debian packages not installed yet.
missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

# apt_install PKG...: installs the Debian packages named.
apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# Go module copies must be writable for builds that edit go.mod.
go_module_copy() {  # go_module_copy MODULE@VERSION DEST
  local dir
  dir=$(go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  rm -rf "$2"; mkdir -p "$(dirname "$2")"
  cp -r "$dir" "$2"; chmod -R u+w "$2"
}

# compose ARGS...: docker compose on this project, with our pinned build where
# scripts/setup.sh made it, else the installed plugin.
compose() {
  local dc=(docker compose)
  [[ -x "$(compose_bin)" ]] && dc=("$(compose_bin)")
  "${dc[@]}" --project-directory "$ROOT" "$@"
}

# port_holder PORT: who listens on PORT and the one command that frees it,
# as one phrase (mqttbench/stack/ports.py); fails when nothing listens.
port_holder() { python3 -P -m mqttbench.stack.ports holder "$1"; }

# The stacks' secrets and InfluxDB's token as the shell reads them
# (secrets_file, compose_secret, influx_curl, load_influx_token).
# shellcheck source=lib_secrets.sh
. "$ROOT/scripts/lib_secrets.sh"
