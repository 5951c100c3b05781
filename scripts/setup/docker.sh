#!/usr/bin/env bash
# The Docker engine from Debian (docker.io) and debootstrap, for the compose
# end-to-end test's locally built images (tests/compose/). Not a default
# setup step: `scripts/setup.sh docker`, which scripts/test.sh runs. Where
# a Docker engine already answers, nothing is installed.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
if docker info >/dev/null 2>&1 && command -v debootstrap >/dev/null; then exit 0; fi
pkgs=(debootstrap debian-archive-keyring)
command -v dockerd >/dev/null || pkgs+=(docker.io)
mapfile -t missing < <(missing_packages "${pkgs[@]}")
((${#missing[@]} == 0)) || apt_install "${missing[@]}"
