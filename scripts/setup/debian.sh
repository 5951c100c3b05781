#!/usr/bin/env bash
# Debian packages: the native broker, node_exporter, the clients tests use, and
# the shell linter of scripts/lint.sh (SHELLCHECK_VERSION in .env).
set -euo pipefail
pkgs=(mosquitto mosquitto-clients prometheus-node-exporter curl jq procps iproute2 shellcheck)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
sudo=()
if [[ $(id -u) != 0 ]]; then
  command -v sudo >/dev/null || { echo "root (or sudo) is needed to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
# The packages start daemons through init scripts where they can; the native
# stack runs its own instances on its own ports, so stop the packaged ones.
for s in mosquitto prometheus-node-exporter; do
  "${sudo[@]}" service "$s" stop >/dev/null 2>&1 || true
done
