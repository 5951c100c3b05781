# Stand-in for MOSQUITTO_IMAGE: Debian's Mosquitto and its clients (the
# healthcheck runs mosquitto_sub), with the official image's command and
# config path (compose.yaml mounts the config there).
FROM mqtt-bench-test/debian:bookworm
RUN mkdir -p /mosquitto/config /mosquitto/data /mosquitto/log
CMD ["/usr/sbin/mosquitto", "-c", "/mosquitto/config/mosquitto.conf"]
# The official image's VOLUMEs (brokers/mosquitto/broker.toml, [volumes]):
# without a mount there, each new container gets anonymous volumes, as the
# real one does.
VOLUME ["/mosquitto/data", "/mosquitto/log"]
