# Stand-in for NODE_EXPORTER_IMAGE: Debian's node_exporter (the one the
# native stack runs), at the official image's entrypoint path; compose.yaml
# gives the flags.
FROM mqtt-bench-test/debian:bookworm
RUN ln -s /usr/bin/prometheus-node-exporter /bin/node_exporter
ENTRYPOINT ["/bin/node_exporter"]
