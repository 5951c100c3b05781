#!/usr/bin/env bash
# Builds influxd (API only, no UI assets) from the Go module proxy and crates.io
# (the Flux engine is Rust). Each workaround below carries its reason.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out="$(influxd_bin)"
[[ -x "$out" ]] && exit 0
work="$CACHE/src/influxdb-$INFLUXDB_VERSION"
bin="$CACHE/src/bin"
go_module_copy "github.com/influxdata/influxdb/v2@v$INFLUXDB_VERSION" "$work"
cd "$work"
# InfluxData's pkg-config wrapper rejects the `toolchain` directive.
go mod edit -toolchain=none
mkdir -p "$bin"
go build -o "$bin/pkg-config" github.com/influxdata/pkg-config
# flux-core denies warnings and newer rustc adds lints; RUSTFLAGS does not
# reach its build-dependency compile, a rustc wrapper does.
cat >"$bin/rustc-cap-lints" <<'W'
#!/bin/sh
exec "$@" --cap-lints warn
W
chmod +x "$bin/rustc-cap-lints"
export PKG_CONFIG="$bin/pkg-config" RUSTUP_TOOLCHAIN=stable RUSTC_WRAPPER="$bin/rustc-cap-lints"
"$PKG_CONFIG" --cflags -- flux >/dev/null
mkdir -p "$(dirname "$out")"
go build -tags sqlite_foreign_keys,sqlite_json -ldflags "-s -w -X main.version=$INFLUXDB_VERSION" -o "$out.tmp" ./cmd/influxd
mv "$out.tmp" "$out"
