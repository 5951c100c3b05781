# Stand-in for TOXIPROXY_IMAGE: the project's own build of Toxiproxy
# (scripts/setup/toxiproxy.sh, the same version), at the official image's
# paths, entrypoint and command.
FROM mqtt-bench-test/debian:bookworm
COPY toxiproxy-server /toxiproxy
COPY toxiproxy-cli /toxiproxy-cli
ENTRYPOINT ["/toxiproxy"]
CMD ["-host=0.0.0.0"]
