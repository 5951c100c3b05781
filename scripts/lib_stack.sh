# shellcheck shell=bash
# The stacks as the shell reaches them, sourced by scripts/lib.sh: docker
# compose on this project, and the secrets: the native stack's file
# (git-ignored, generated on first use by mqttbench/stack/secrets.py), the
# compose stack's volume, and InfluxDB's token, which never reaches a
# command's argv.

# compose ARGS...: docker compose on this project, with our pinned build where
# scripts/setup.sh made it (mqttbench/settings.py), else the installed plugin.
compose() {
  local dc=(docker compose) built
  built=$(python3 -P -m mqttbench.settings bin compose)
  [[ -x "$built" ]] && dc=("$built")
  "${dc[@]}" --project-directory "$ROOT" "$@"
}

# secrets_file: the native stack's secrets file, .env.local (git-ignored),
# or MQTTBENCH_SECRETS: the tests' stacks keep their own there, so that they
# never rewrite or read the token of a stack the user runs from this clone.
secrets_file() { echo "${MQTTBENCH_SECRETS:-$ROOT/.env.local}"; }

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
