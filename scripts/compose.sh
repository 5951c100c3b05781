#!/usr/bin/env bash
# Helpers around compose.yaml.
#   scripts/compose.sh secret NAME  print a secret the stack generated on its
#                                 first `up` (influx_token, grafana_admin_password, ...)
#   scripts/compose.sh check      validate compose.yaml for every broker profile (one per
#                                 folder of brokers/; no Docker engine needed)
#   scripts/compose.sh smoke      after a run on a started stack: data reached
#                                 InfluxDB and Grafana serves the dashboards
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

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

case "${1:-}" in
  secret)
    [[ "${2:-}" =~ ^[a-z_]+$ ]] || die "usage: scripts/compose.sh secret NAME (influx_token, grafana_admin_password, ...)"
    compose_secret "$2"
    ;;
  check)
    # A broker's profile is its folder's name: one that starts no service of
    # that name is a broker compose.yaml does not know yet.
    mapfile -t profiles < <(brokers)
    for profile in "${profiles[@]}" k6; do
      compose --profile "$profile" config -q || die "compose.yaml is invalid for profile $profile"
      [[ "$profile" == k6 ]] || compose_profile "$profile" || exit 1
      log "compose config ok: profile $profile"
    done
    ;;
  smoke)
    INFLUX_TOKEN=$(compose_secret influx_token)
    GRAFANA_ADMIN_PASSWORD=$(compose_secret grafana_admin_password)
    # Secrets reach curl in header files, never in argv (lib.sh: influx_curl).
    n=$(influx_curl -fsS "http://127.0.0.1:$INFLUXDB_PORT/api/v2/query?org=$INFLUXDB_ORG" \
          -H 'Content-Type: application/vnd.flux' -H 'Accept: application/csv' \
          --data "from(bucket:\"$INFLUXDB_BUCKET\") |> range(start:-1h) |> filter(fn:(r) => r._measurement == \"mqtt_publishes\") |> group() |> count()" |
        awk -F, 'NR==2 {print $NF}' | tr -d '\r')
    ((${n:-0} > 0)) || die "no k6 data (mqtt_publishes) in InfluxDB"
    log "InfluxDB holds $n mqtt_publishes points"
    found=$(curl -fsS -H @<(printf 'Authorization: Basic %s\n' "$(printf 'admin:%s' "$GRAFANA_ADMIN_PASSWORD" | base64 -w0)") \
              "http://127.0.0.1:${GRAFANA_PORT:-3000}/api/search?tag=mqtt-bench" |
            jq -r '.[].uid' | sort | tr '\n' ' ')
    [[ "$found" == "mqtt-bench-broker mqtt-bench-generator mqtt-bench-history mqtt-bench-host mqtt-bench-overview " ]] ||
      die "Grafana does not serve the provisioned dashboards (found: $found)"
    log "Grafana serves: $found"
    ;;
  *) echo "usage: scripts/compose.sh secret NAME|check|smoke" >&2; exit 2 ;;
esac
