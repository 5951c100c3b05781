#!/usr/bin/env bash
# First-run setup of InfluxDB 2 through its HTTP API: the one initialisation
# path of both stacks. The native stack (scripts/stack.sh) runs it on the
# host; compose runs it in its `init` service, inside the InfluxDB image,
# which has bash and curl but no jq. It is idempotent: an InfluxDB that is
# already set up is only checked against the token.
#
# Environment: INFLUX_URL (default http://127.0.0.1:8086), INFLUXDB_ORG,
# INFLUXDB_BUCKET, INFLUXDB_RETENTION (30d, 12h, 0 = infinite), and the
# files holding the token and the admin password: INFLUX_TOKEN_FILE,
# INFLUXDB_ADMIN_PASSWORD_FILE. Secrets reach curl through a header file
# and standard input, never through argv.
set -euo pipefail

url="${INFLUX_URL:-http://127.0.0.1:8086}"
org="${INFLUXDB_ORG:-mqtt-bench}" bucket="${INFLUXDB_BUCKET:-mqtt-bench}"
retention="${INFLUXDB_RETENTION:-30d}"

die() { printf 'influxdb init: %s\n' "$*" >&2; exit 1; }

# read_secret NAME: the content of the file that $NAME names (a file or a
# pipe from the native stack's process substitution: read once).
read_secret() {
  local file="${!1:-}" value
  [[ -n "$file" ]] || die "$1 is not set (the file holding that secret)"
  [[ -r "$file" ]] || die "$1 names $file, which cannot be read"
  value=$(tr -d '\r\n' <"$file")
  [[ -n "$value" ]] || die "$1 names $file, which is empty"
  printf '%s' "$value"
}

# Names go into JSON and URLs unescaped, so they are held to a safe set.
for v in org bucket; do
  [[ "${!v}" =~ ^[A-Za-z0-9._-]+$ ]] || die "INFLUXDB_${v^^} must be letters, digits, '.', '_' or '-', got '${!v}'"
done
case "$retention" in
  0|infinite) secs=0 ;;
  *)
    [[ "$retention" =~ ^([0-9]+)([smhdw])$ ]] ||
      die "INFLUXDB_RETENTION must look like 30d, 12h or 0 (infinite), got '$retention'"
    n="${BASH_REMATCH[1]}"
    case "${BASH_REMATCH[2]}" in
      s) secs=$n ;; m) secs=$((n * 60)) ;; h) secs=$((n * 3600)) ;; d) secs=$((n * 86400)) ;; w) secs=$((n * 604800)) ;;
    esac
    ;;
esac

token=$(read_secret INFLUX_TOKEN_FILE)
api() { curl -fsS --max-time 10 -H @<(printf 'Authorization: Token %s\n' "$token") "$@"; }
json_escape() { local s="${1//\\/\\\\}"; printf '%s' "${s//\"/\\\"}"; }

allowed=$(curl -fsS --max-time 10 "$url/api/v2/setup") || die "InfluxDB at $url does not answer"
if [[ "$allowed" =~ \"allowed\":\ *true ]]; then
  password=$(read_secret INFLUXDB_ADMIN_PASSWORD_FILE)
  printf '{"username":"admin","password":"%s","org":"%s","bucket":"%s","token":"%s","retentionPeriodSeconds":%s}' \
    "$(json_escape "$password")" "$org" "$bucket" "$(json_escape "$token")" "$secs" |
    curl -fsS --max-time 30 -o /dev/null -X POST -H 'Content-Type: application/json' --data @- "$url/api/v2/setup" ||
    die "first-run setup failed (see InfluxDB's log)"
  echo "InfluxDB set up: org $org, bucket $bucket (retention $retention)"
fi
b=$(api "$url/api/v2/buckets?name=$bucket" | tr -d ' \t\n') ||
  die "InfluxDB at $url was set up with another token than the one in $INFLUX_TOKEN_FILE"

# InfluxQL (and Grafana's InfluxQL panels) read the bucket as database/autogen.
# InfluxDB 2.7 maps every bucket so itself (a "virtual" mapping); one is
# made here only where none exists.
# The bucket's own "id" is the first after "buckets" (its links hold paths,
# not ids); "orgID" appears once.
bucket_id=$(grep -o '"buckets":\[.*' <<<"$b" | grep -o '"id":"[0-9a-f]*"' | head -n 1 | cut -d'"' -f4 || true)
org_id=$(grep -o '"orgID":"[0-9a-f]*"' <<<"$b" | head -n 1 | cut -d'"' -f4 || true)
[[ -n "$bucket_id" && -n "$org_id" ]] || die "bucket $bucket does not exist in InfluxDB at $url"
mapped=$(api "$url/api/v2/dbrps?orgID=$org_id&bucketID=$bucket_id" | tr -d ' \t\n') || die "listing DBRP mappings failed"
if [[ "$mapped" != *'"bucketID":"'"$bucket_id"'"'* ]]; then
  printf '{"bucketID":"%s","orgID":"%s","database":"%s","retention_policy":"autogen","default":true}' \
    "$bucket_id" "$org_id" "$bucket" |
    api -o /dev/null -X POST -H 'Content-Type: application/json' --data @- "$url/api/v2/dbrps" ||
    die "the DBRP mapping of bucket $bucket failed"
  echo "InfluxDB: bucket $bucket mapped to database $bucket/autogen for InfluxQL"
fi
