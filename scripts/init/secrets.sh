#!/bin/sh
# Generates each secret of the compose stack that is missing or empty into
# DIR, one file per secret (the `init` service runs it on every `up`, into
# the `secrets` volume, so `down` and a second `up` keep them). POSIX sh:
# it runs inside the InfluxDB image.
set -eu
dir="${1:?usage: secrets.sh DIR}"
# Each broker names its own in its broker.toml (`secrets = ["..."]`: EMQX's
# dashboard password and node cookie, NanoMQ's HTTP password, RabbitMQ's
# password): the brokers' folders, mounted at /mqtt-bench/brokers by compose.
brokers="${MQTTBENCH_BROKERS:-$(dirname "$0")/../../brokers}"
broker_secrets=$(cat "$brokers"/*/broker.toml 2>/dev/null | sed -n 's/^secrets = \[\(.*\)\]$/\1/p' | tr -d '",')
umask 077
# Letters and digits only (base64 without / + =): EMQX reads its values as
# HOCON and bin/emqx passes the cookie unquoted in ERL_FLAGS; RabbitMQ's
# rabbitmq.conf takes the password as a bare word.
# shellcheck disable=SC2086 # the names split on spaces
for name in influx_token influxdb_admin_password grafana_admin_password $broker_secrets; do
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
