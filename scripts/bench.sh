#!/usr/bin/env bash
# The main job: start the stack, wait until healthy, run a scenario, write
# the report (mqttbench/bench/). Uses compose when a Docker engine with the
# images is there, otherwise the native stack (building what is missing).
# Usage: scripts/bench.sh [--broker mosquitto] [--scenario p2p] [--native|--compose]
#                        [--instances N] [--impair PROFILE] [k6 options...]
# (--help: every option.)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
exec python3 -P -m mqttbench.bench "$@"
