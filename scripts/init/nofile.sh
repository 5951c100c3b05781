#!/usr/bin/env bash
# Run by the compose init service before any broker starts (each waits for
# init): the open files the brokers and k6 ask for (NOFILE_LIMIT) must fit
# the Docker engine's hard limit, which every container inherits, this one
# too. Above it Docker fails with "error setting rlimit type 7: operation
# not permitted"; here the variable and its fix are named instead.
set -euo pipefail
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && exit 0
if [ "${NOFILE_LIMIT:?}" -gt "$hard" ]; then
  echo "error: NOFILE_LIMIT=$NOFILE_LIMIT is above this Docker engine's open-files hard limit, $hard:" \
    "set NOFILE_LIMIT=$hard (export it, or a line in .env) and run up again" >&2
  exit 1
fi
