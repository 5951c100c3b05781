#!/usr/bin/env bash
# Debian packages: the native brokers' (each broker.toml's [native] debian),
# node_exporter, the MQTT clients the scripts and tests use,
# the shell linter of tests/lint.sh (SHELLCHECK_VERSION in .env), and the
# headless browser the tests open dashboards with (tests/bench/test_live_view.py).
# With SETUP_BROKER (scripts/bench.sh's plan, mqttbench/stack/native.py setup_steps): that
# broker's packages and what a run uses, not the linter or the browser.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
mapfile -t brokers_pkgs < <(python3 -P -m mqttbench.brokers.facts values native.debian ${SETUP_BROKER:+"$SETUP_BROKER"})
pkgs=("${brokers_pkgs[@]}" mosquitto-clients prometheus-node-exporter curl jq procps iproute2)
if [[ -z "${SETUP_BROKER:-}" ]]; then
  pkgs+=(shellcheck)
  # Debian's chromium, unless a Chrome is there already (GitHub's Ubuntu runners
  # have google-chrome; Ubuntu's chromium package is a snap).
  command -v chromium chromium-browser google-chrome >/dev/null || pkgs+=(chromium)
fi
mapfile -t missing < <(missing_packages "${pkgs[@]}")
((${#missing[@]} == 0)) && exit 0
apt_install "${missing[@]}"
# The packages start daemons through init scripts where they can; the native
# stack runs its own instances on its own ports, so stop the packaged ones
# and keep them from starting at boot (RabbitMQ's would hold 5672, 25672
# and epmd's 4369 on every interface). Nothing of the stack uses them.
for s in "${brokers_pkgs[@]}" prometheus-node-exporter; do
  as_root service "$s" stop >/dev/null 2>&1 || true
  if command -v systemctl >/dev/null; then as_root systemctl disable "$s" >/dev/null 2>&1 || true; fi
done
# The epmd a packaged node started outlives it (seen: 0.0.0.0:4369 after
# RabbitMQ's install); it refuses to stop while a node is still registered.
if command -v epmd >/dev/null; then as_root epmd -kill >/dev/null 2>&1 || true; fi
