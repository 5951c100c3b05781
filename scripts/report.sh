#!/usr/bin/env bash
# The report command: see mqttbench/report/__main__.py (or --help).
# The venv with its libraries is made on first use (python -m mqttbench).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
exec python3 -P -m mqttbench report "$@"
