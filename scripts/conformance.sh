#!/usr/bin/env bash
# The broker conformance suite against a running broker (mqttbench/conformance.py;
# --help says the rest).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[[ -x "$CACHE/venv/current/bin/python" ]] || "$ROOT/scripts/setup.sh" python
exec python3 -P -m mqttbench.conformance "$@"
