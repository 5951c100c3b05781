# Stand-in for GRAFANA_IMAGE, which cannot be built or pulled here: not
# Grafana, but a check of what Grafana would be given (grafana_stand_in.py)
# behind the two endpoints the stack's checks use, /api/health and
# /api/search. The dashboards themselves are proven by running their
# queries against InfluxDB (tests/test_compose_and_dashboards.py) and
# against Grafana's own source (tests/test_grafana_upstream.py).
FROM mqtt-bench-test/debian:bookworm
COPY grafana_stand_in.py /usr/local/bin/grafana_stand_in.py
RUN mkdir -p /var/lib/grafana
ENTRYPOINT ["python3", "/usr/local/bin/grafana_stand_in.py"]
