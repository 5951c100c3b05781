#!/usr/bin/env bash
# staticcheck, the Go linter tests/lint.sh runs on the extension, from the
# Go module proxy at the version pinned in .env (STATICCHECK_VERSION).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out="$(staticcheck_bin)"
[[ -x "$out" ]] && exit 0
mkdir -p "$(dirname "$out")"
GOBIN="$(dirname "$out")" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
