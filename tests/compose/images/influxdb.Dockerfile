# Stand-in for INFLUXDB_IMAGE in the compose end-to-end test: the project's
# own influxd build (the version INFLUXDB_VERSION pins), at the official
# image's paths, and an `influx` that knows only the `ping` of the
# healthcheck (the influx CLI cannot be built here). Also the image of the
# init service, which needs sh, bash and curl, as the official one has.
FROM mqtt-bench-test/debian:bookworm
COPY influxd /usr/local/bin/influxd
COPY influx-ping.sh /usr/local/bin/influx
RUN chmod 0755 /usr/local/bin/influx
RUN mkdir -p /var/lib/influxdb2 /etc/influxdb2
# The official image's data paths (default-config.yml); loopback only, as
# every test listener here.
ENV INFLUXD_BOLT_PATH=/var/lib/influxdb2/influxd.bolt \
    INFLUXD_ENGINE_PATH=/var/lib/influxdb2/engine \
    INFLUXD_SQLITE_PATH=/var/lib/influxdb2/influxd.sqlite \
    INFLUXD_HTTP_BIND_ADDRESS=127.0.0.1:8086
ENTRYPOINT []
CMD ["influxd"]
