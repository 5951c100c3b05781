# Stand-in for the k6 service's image: k6/Dockerfile's final stage on the
# test's Debian base, with the k6 the project built (its build stage needs
# a Go image that cannot be pulled here).
FROM mqtt-bench-test/debian:bookworm
RUN groupadd -r k6 && useradd -r -g k6 -d /k6 k6 && mkdir -p /results && chown k6 /results
COPY k6 /usr/local/bin/k6
COPY lib /k6/lib
COPY scenarios /k6/scenarios
USER k6
WORKDIR /k6
ENTRYPOINT ["k6"]
CMD ["version"]
