#!/bin/sh
# with-secrets.sh NAME=secret ... -- COMMAND [ARG...]
# Exports each NAME with the content of /run/secrets/mqtt-bench/<secret>,
# then execs COMMAND: under compose a secret lives in that one process's
# environment only, never in the container's configuration (docker inspect)
# or in an argv. For images whose programs read secrets only from the
# environment (Telegraf, EMQX, NanoMQ). POSIX sh: busybox, dash or bash.
set -eu
dir="${MQTTBENCH_SECRETS_DIR:-/run/secrets/mqtt-bench}"
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  name="${1%%=*}" secret="${1#*=}"
  [ -s "$dir/$secret" ] || { echo "with-secrets: $dir/$secret is missing or empty (the init service writes it)" >&2; exit 1; }
  value="$(cat "$dir/$secret")"
  export "$name=$value"
  shift
done
[ "$#" -gt 1 ] || { echo "usage: with-secrets.sh NAME=secret ... -- COMMAND [ARG...]" >&2; exit 2; }
shift
exec "$@"
