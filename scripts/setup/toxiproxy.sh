#!/usr/bin/env bash
# Toxiproxy (github.com/Shopify/toxiproxy/v2), the TCP proxy whose toxics
# impair the generator-to-broker path (scripts/bench.sh --impair): server
# and CLI from the Go module proxy at TOXIPROXY_VERSION (.env).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out="$(toxiproxy_bin)"
dir="$(dirname "$out")"
[[ -x "$out" && -x "$dir/toxiproxy-cli" ]] && exit 0
tmp="$dir/.build"
rm -rf "$tmp" && mkdir -p "$tmp"
# The module's commands are named server and cli: installed apart, renamed.
GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath \
  -ldflags "-s -w -X github.com/Shopify/toxiproxy/v2.Version=$TOXIPROXY_VERSION" \
  "github.com/Shopify/toxiproxy/v2/cmd/server@v$TOXIPROXY_VERSION" "github.com/Shopify/toxiproxy/v2/cmd/cli@v$TOXIPROXY_VERSION"
mv "$tmp/cli" "$dir/toxiproxy-cli"
mv "$tmp/server" "$out"
rmdir "$tmp"
