#!/usr/bin/env bash
# A comparison in one command: the same scenario (or capacity search) on each
# broker in turn, one report with a column per broker (mqttbench/compare/;
# --help says the rest).
# The venv with its libraries is made on first use (python -m mqttbench).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
exec python3 -P -m mqttbench compare "$@"
