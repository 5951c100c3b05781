#!/usr/bin/env bash
# The Docker engine from Debian (docker.io) and debootstrap, for the compose
# end-to-end test's locally built images (tests/compose/). Not a default
# setup step: `scripts/setup.sh docker`, which scripts/test.sh runs. Where
# a Docker engine already answers, nothing is installed.
set -euo pipefail
if docker info >/dev/null 2>&1 && command -v debootstrap >/dev/null; then exit 0; fi
pkgs=(debootstrap debian-archive-keyring)
command -v dockerd >/dev/null || pkgs+=(docker.io)
sudo=()
if [[ $(id -u) != 0 ]]; then
  command -v sudo >/dev/null || { echo "root (or sudo) is needed to install: ${pkgs[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}"
