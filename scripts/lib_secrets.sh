# shellcheck shell=bash
# The secrets of the stacks, sourced by scripts/lib.sh: the native stack's
# file (git-ignored, generated on first use), the compose stack's volume, and
# InfluxDB's token, which never reaches a command's argv.

# secrets_file: the native stack's secrets file, .env.local (git-ignored),
# or MQTTBENCH_SECRETS: the tests' stacks keep their own there, so that they
# never rewrite or read the token of a stack the user runs from this clone.
secrets_file() { echo "${MQTTBENCH_SECRETS:-$ROOT/.env.local}"; }

# ensure_secrets generates the native stack's secrets on first use into
# secrets_file: InfluxDB's token, which Telegraf and the reports
# read too, and its admin password. (The compose stack generates its own, in
# its secrets volume: scripts/init/secrets.sh.) An entry that is there but
# empty (INFLUX_TOKEN=) is filled in, keeping every other line: an empty
# token or password would otherwise be used as is.
# Values pass through files and builtins only, never a command's argv.
ensure_secrets() {
  local f name value line v
  f=$(secrets_file)
  mkdir -p "$(dirname "$f")"
  touch "$f"
  chmod 600 "$f"
  local names=(INFLUX_TOKEN INFLUXDB_ADMIN_PASSWORD)
  local -A have=() empty=()  # name -> its first non-empty value; names with an empty entry
  while IFS= read -r line || [[ -n "$line" ]]; do
    [[ "$line" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
    name="${BASH_REMATCH[1]}" v="${BASH_REMATCH[2]}"
    [[ "$v" == '""' || "$v" == "''" ]] && v=""
    [[ -n "$v" ]] || empty[$name]=1
    [[ -n "${have[$name]:-}" ]] || have[$name]="$v"
  done <"$f"
  local -A fill=()  # names present but empty -> their new value
  for name in "${names[@]}"; do
    value="${have[$name]:-}"
    [[ -n "$value" ]] || value=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
    if [[ -z "${have[$name]+x}" ]]; then
      printf '%s=%s\n' "$name" "$value" >>"$f"
    elif [[ -n "${empty[$name]:-}" ]]; then
      fill[$name]="$value"
    fi
  done
  if ((${#fill[@]})); then
    local tmp="$f.tmp.$$"
    (umask 077; : >"$tmp")
    while IFS= read -r line || [[ -n "$line" ]]; do
      name="${line%%=*}"
      # Every empty entry of the name: sourcing the file, the last one counts.
      [[ "$line" =~ ^[A-Za-z_][A-Za-z0-9_]*=(\"\"|\'\')?$ && -n "${fill[$name]+x}" ]] && line="$name=${fill[$name]}"
      printf '%s\n' "$line"
    done <"$f" >"$tmp"
    mv "$tmp" "$f"
  fi
  set -a
  # shellcheck source=/dev/null # generated secrets, not in the repo
  . "$f"
  set +a
}

# compose_secret NAME: prints a secret the compose stack's init service
# generated (in the `secrets` volume): influx_token, grafana_admin_password,
# influxdb_admin_password and each broker.toml's `secrets`.
compose_secret() {
  compose run --rm --no-deps -T --entrypoint cat init "/run/secrets/mqtt-bench/$1"
}

# influx_curl ARGS...: curl with INFLUX_TOKEN's Authorization header read from
# a file descriptor (-H @file), so the token never appears in argv (ps, /proc).
influx_curl() {
  curl -H @<(printf 'Authorization: Token %s\n' "${INFLUX_TOKEN:?INFLUX_TOKEN is not set: scripts/stack.sh up writes it to .env.local}") "$@"
}

# load_influx_token: INFLUX_TOKEN for what reads InfluxDB (reports, the
# capacity search): the caller's; else, while the compose stack's InfluxDB
# runs, its generated one; else the native stack's (secrets_file).
load_influx_token() {
  local f
  f=$(secrets_file)
  if [[ -z "${INFLUX_TOKEN:-}" ]] && command -v docker >/dev/null && [[ -n "$(compose ps -q influxdb 2>/dev/null)" ]]; then
    if INFLUX_TOKEN=$(compose_secret influx_token 2>/dev/null); then export INFLUX_TOKEN; else unset INFLUX_TOKEN; fi
  fi
  if [[ -z "${INFLUX_TOKEN:-}" && -f "$f" ]]; then
    set -a
    # shellcheck source=/dev/null # generated secrets, not in the repo
    . "$f"
    set +a
  fi
}
