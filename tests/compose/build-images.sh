#!/usr/bin/env bash
# Builds the stand-in images of the compose end-to-end test on the local
# Docker engine, from a Debian base made with debootstrap and the project's
# own native builds (scripts/setup.sh). Named mqtt-bench-test/*, never with
# an upstream image's name. The base's root file system is cached in
# $CACHE/images, keyed by its package list; a second run takes seconds.
set -euo pipefail
# shellcheck source=../../scripts/setup/lib.sh
. "$(dirname "$0")/../../scripts/setup/lib.sh"

here="$ROOT/tests/compose"
# What the stand-ins run that the project does not build: sh, bash, curl and
# wget for the init service and the healthchecks, python3 for Grafana's
# stand-in, Mosquitto and node_exporter as the native stack runs them,
# openssl for init-tls (the k6 image's, as k6/Dockerfile installs it).
pkgs=(bash ca-certificates curl wget python3 mosquitto mosquitto-clients prometheus-node-exporter openssl)
key=$(printf '%s\n' bookworm "${pkgs[@]}" | sha256sum | cut -c1-10)
base=mqtt-bench-test/debian:bookworm
rootfs="$CACHE/images/debian-bookworm-$key.tar"

if [[ ! -s "$rootfs" ]]; then
  command -v debootstrap >/dev/null || die "debootstrap is missing: scripts/setup.sh docker installs it"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  log "debootstrap: Debian bookworm with ${pkgs[*]} (about a minute)"
  include=$(IFS=,; echo "${pkgs[*]}")
  debootstrap --variant=minbase --include="$include" bookworm "$work/rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" \
    >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  # Smaller images: no apt lists or caches in the base.
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  mkdir -p "$(dirname "$rootfs")"
  tar -C "$work/rootfs" -cf "$rootfs.tmp" .
  mv "$rootfs.tmp" "$rootfs"
fi
if [[ "$(docker image inspect -f '{{index .Config.Labels "mqtt-bench.key"}}' "$base" 2>/dev/null)" != "$key" ]]; then
  log "importing $base"
  docker import --change "LABEL mqtt-bench.key=$key" --change 'CMD ["/bin/bash"]' "$rootfs" "$base" >/dev/null
fi

# build NAME FILE...: the Dockerfile images/NAME.Dockerfile with FILE... as its context.
build() {
  local name="$1" ctx
  shift
  ctx=$(mktemp -d)
  (($#)) && cp -r "$@" "$ctx/"
  # The classic builder: nothing but files are added, so BuildKit (which
  # Debian's docker.io lacks) buys nothing.
  if ! out=$(DOCKER_BUILDKIT=0 docker build -q -t "mqtt-bench-test/$name:test" -f "$here/images/$name.Dockerfile" "$ctx" 2>&1); then
    rm -rf "$ctx"
    printf '%s\n' "$out" >&2
    die "building the $name stand-in failed"
  fi
  rm -rf "$ctx"
  log "built mqtt-bench-test/$name:test"
}
for bin in "$(influxd_bin)" "$(telegraf_bin)" "$(k6_bin)" "$(toxiproxy_bin)"; do
  [[ -x "$bin" ]] || die "$bin is missing: run scripts/setup.sh first"
done
build influxdb "$(influxd_bin)" "$here/images/influx-ping.sh"
build telegraf "$(telegraf_bin)"
build node-exporter
build mosquitto
build grafana "$here/images/grafana_stand_in.py"
build k6 "$(k6_bin)" "$ROOT/k6/lib" "$ROOT/k6/scenarios"
build toxiproxy "$(toxiproxy_bin)" "$(dirname "$(toxiproxy_bin)")/toxiproxy-cli"
