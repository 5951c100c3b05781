#!/usr/bin/env bash
# The report command: see scripts/report/__main__.py (or --help).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[[ -x "$CACHE/venv/current/bin/python" ]] || "$ROOT/scripts/setup.sh" python
# The InfluxDB token of the native stack or compose, when there is one.
# shellcheck source=/dev/null # generated secrets, not in the repo
[[ -f "$ROOT/.env.local" ]] && { set -a; . "$ROOT/.env.local"; set +a; }
# From the caller's directory, so that relative paths in arguments work.
PYTHONPATH="$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}" exec "$CACHE/venv/current/bin/python" -m report "$@"
