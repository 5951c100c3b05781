#!/usr/bin/env bash
# Python dependencies (tests and the report), pinned in requirements.txt, in a
# venv cached outside the clone and keyed by the requirements' hash.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
req="$ROOT/requirements.txt"
venv="$CACHE/venv/$(sha256sum "$req" | cut -c1-10)"
if [[ ! -f "$venv/.complete" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$req"
  touch "$venv/.complete"
fi
ln -sfn "$venv" "$CACHE/venv/current"
