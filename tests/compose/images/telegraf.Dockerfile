# Stand-in for TELEGRAF_IMAGE: the project's own Telegraf build (the
# version TELEGRAF_VERSION pins, with the plugins scripts/lib.sh lists) and
# wget for the healthcheck. compose.yaml starts telegraf itself.
FROM mqtt-bench-test/debian:bookworm
COPY telegraf /usr/bin/telegraf
RUN mkdir -p /etc/telegraf /var/lib/telegraf/buffer
CMD ["telegraf"]
