# shellcheck shell=bash
# The shell's environment, sourced by every script: .env, the cache and state paths.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT

# Versions and settings: .env is the single source (compose and mqttbench/settings.py
# read it too), by compose's rule: a variable the environment already has wins over its
# line (BROKER_CPUS=4 scripts/bench.sh, a version: the caches are keyed by the value in force).
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
# CI and later sessions on the same machine reuse them; the native stack's
# runtime state (data, pids, logs, generated TLS files) is the clone's.
CACHE="${MQTTBENCH_CACHE:-$HOME/.cache/mqtt-bench}"
STATE="${MQTTBENCH_STATE:-$ROOT/.state}"
export CACHE STATE
# The orchestration's package (mqttbench/), importable from anywhere; -P in
# every `python3 -P -m mqttbench...`: this checkout's, never one of the
# caller's working directory.
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

# The brokers: each folder of brokers/ with a broker.toml, the one place
# that describes a broker (a new folder is a new broker everywhere).
brokers() {
  local f
  for f in "$ROOT"/brokers/*/broker.toml; do [[ -f "$f" ]] && basename "$(dirname "$f")"; done
  return 0
}

# This checkout's k6 build, keyed by the extension's sources (mqttbench/k6/command.py).
k6_bin() { python3 -P -m mqttbench.k6 bin; }

# The stacks as the shell reaches them: compose, the secrets, InfluxDB's token.
# shellcheck source=lib_stack.sh
. "$ROOT/scripts/lib_stack.sh"
