#!/usr/bin/env bash
# A comparison in one command: the same scenario (or capacity search) on each
# broker in turn, one report with a column per broker (mqttbench/compare/;
# --help says the rest).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[[ -x "$CACHE/venv/current/bin/python" ]] || "$ROOT/scripts/setup.sh" python
exec "$CACHE/venv/current/bin/python" -P -m mqttbench.compare "$@"
