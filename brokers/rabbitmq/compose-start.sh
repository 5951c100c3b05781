#!/bin/sh
# Under compose only: RabbitMQ admits `guest` from loopback only, so the
# benchmark's anonymous MQTT clients (another container) log in as the user
# mqtt-bench, whose password the init service generated (rabbitmq_password in
# the secrets volume). RabbitMQ reads neither from a file nor from the
# environment for the anonymous login (anonymous_login_pass, RabbitMQ 4.x):
# this writes them into a conf.d file of the container, readable by
# rabbitmq alone, then starts the image's own entrypoint. No secret in argv
# or in `docker inspect`. POSIX sh (the image's dash).
set -eu
secret=/run/secrets/mqtt-bench/rabbitmq_password
[ -s "$secret" ] || { echo "compose-start: $secret is missing or empty (the init service writes it)" >&2; exit 1; }
pass="$(cat "$secret")"
conf=/etc/rabbitmq/conf.d/90-mqtt-bench-secrets.conf
umask 077
# default_user/default_pass: the user made on the first boot of an empty data
# volume (`down -v` forgets both it and the secret).
printf 'default_user = mqtt-bench\ndefault_pass = %s\nanonymous_login_user = mqtt-bench\nanonymous_login_pass = %s\n' \
  "$pass" "$pass" >"$conf"
chown rabbitmq:rabbitmq "$conf"
exec docker-entrypoint.sh rabbitmq-server
