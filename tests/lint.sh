#!/usr/bin/env bash
# The linters, at pinned versions (scripts/setup.sh installs them):
#   shell   shellcheck on every shell script (Debian's package, SHELLCHECK_VERSION),
#   python  ruff check and ruff format --check (requirements.txt, ruff.toml),
#   go      gofmt, go vet and staticcheck on the k6 extension (STATICCHECK_VERSION).
# Every linter runs even when one fails, so that one run names every finding.
# Usage: tests/lint.sh [shell|python|go ...]   (default: all three)
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

# Shell scripts: *.sh and any file whose first line is a sh/bash shebang,
# tracked or new (not ignored), so that a script without a suffix is not missed.
shell_scripts() {
  local f first
  while IFS= read -r -d '' f; do
    [[ -f "$f" ]] || continue # deleted from the work tree
    if [[ "$f" == *.sh ]]; then
      printf '%s\0' "$f"
      continue
    fi
    IFS= read -r first <"$f" || true
    [[ "$first" =~ ^#!.*[/[:space:]](ba)?sh([[:space:]]|$) ]] && printf '%s\0' "$f"
  done < <(git -C "$ROOT" ls-files -z --cached --others --exclude-standard)
}

lint_shell() {
  local scripts=()
  mapfile -d '' -t scripts < <(shell_scripts)
  ((${#scripts[@]})) || die "no shell scripts found: tests/lint.sh lists them with git, in a clone"
  local version
  version="$(shellcheck --version | sed -n 's/^version: //p')"
  echo "shellcheck $version"
  # Another version may find more or less: say so rather than fail.
  [[ "$version" == "$SHELLCHECK_VERSION" ]] || warn "shellcheck $version runs, $SHELLCHECK_VERSION is pinned (.env)"
  # SCRIPTDIR: the `# shellcheck source=` directives are relative to each script.
  shellcheck --external-sources --source-path=SCRIPTDIR "${scripts[@]}"
}

lint_python() {
  local ruff="$CACHE/venv/current/bin/ruff"
  [[ -x "$ruff" ]] || die "$ruff is missing: run scripts/setup.sh python"
  "$ruff" --version
  # Its cache beside the other builds, not in the checkout.
  export RUFF_CACHE_DIR="$CACHE/ruff"
  local rc=0
  "$ruff" check || rc=1
  "$ruff" format --check || rc=1
  return "$rc"
}

lint_go() {
  local staticcheck
  staticcheck="$(python3 -P -m mqttbench.settings bin staticcheck)"
  [[ -x "$staticcheck" ]] || die "$staticcheck is missing: run scripts/setup.sh staticcheck"
  go version
  "$staticcheck" -version
  cd "$ROOT/k6/extension" || return 1
  local rc=0 unformatted
  unformatted="$(gofmt -l .)"
  if [[ -n "$unformatted" ]]; then
    echo "gofmt: not formatted (run gofmt -w on them):" "$unformatted"
    rc=1
  fi
  go vet ./... || rc=1
  "$staticcheck" ./... || rc=1
  return "$rc"
}

cd "$ROOT"
targets=("$@")
((${#targets[@]})) || targets=(shell python go)
failed=()
for t in "${targets[@]}"; do
  case "$t" in
    shell|python|go) ;;
    *) die "unknown linter group '$t' (known: shell python go)" ;;
  esac
  log "lint: $t"
  # In a subshell (lint_go changes directory). `set -e` does not apply on the
  # left of `||`, so each lint_ function returns its own status.
  ("lint_$t") || failed+=("$t")
done
((${#failed[@]} == 0)) || die "lint findings in: ${failed[*]} (see above)"
log "lint: clean (${targets[*]})"
