#!/bin/sh
# Generates each secret of the compose stack that is missing or empty into
# DIR, one file per secret (the `init` service runs it on every `up`, into
# the `secrets` volume, so `down` and a second `up` keep them). POSIX sh:
# it runs inside the InfluxDB image.
set -eu
dir="${1:?usage: secrets.sh DIR}"
umask 077
for name in influx_token influxdb_admin_password grafana_admin_password \
  emqx_dashboard_password emqx_node_cookie nanomq_http_password rabbitmq_password; do
  [ -s "$dir/$name" ] && continue
  head -c 24 /dev/urandom | base64 | tr -d '/+=\n' >"$dir/$name.tmp"
  mv "$dir/$name.tmp" "$dir/$name"
  echo "generated secret $name"
done
# Each service reads its secrets as its own user (InfluxDB and EMQX 1000,
# Grafana 472, ...); the volume is mounted, read-only, only into this
# project's containers, and lies under Docker's root-only data directory.
# Files only: tls/, init-tls's directory in the same volume, stays traversable.
find "$dir" -maxdepth 1 -type f -exec chmod 0444 {} +
