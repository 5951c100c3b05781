# shellcheck shell=bash
# What the setup steps share beyond scripts/lib.sh (which this sources):
# where the pinned builds go, a step's progress line, root, Debian's
# packages, writable Go module copies.
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# Paths of the pinned builds (mqttbench/settings.py, keyed by version).
influxd_bin()  { python3 -P -m mqttbench.settings bin influxd; }
telegraf_bin() { python3 -P -m mqttbench.settings bin telegraf; }
compose_bin()  { python3 -P -m mqttbench.settings bin compose; }
staticcheck_bin() { python3 -P -m mqttbench.settings bin staticcheck; }
toxiproxy_bin() { python3 -P -m mqttbench.settings bin toxiproxy; }

# step NAME CMD...: run one setup step, one progress line, and name the step
# if it fails (its log is kept for the reader).
step() {
  local name="$1"; shift
  local logf="$CACHE/logs/$name.log" t0=$SECONDS
  mkdir -p "$CACHE/logs"
  printf '==> %-22s ' "$name" >&2
  if "$@" >"$logf" 2>&1; then
    printf 'ok (%ds)\n' "$((SECONDS - t0))" >&2
  else
    printf 'FAILED\n' >&2
    tail -n 25 "$logf" >&2
    die "setup step '$name' failed; full log: $logf"
  fi
}

# as_root CMD...: runs CMD as root, through sudo when this is not root.
as_root() {
  if [[ $(id -u) == 0 ]]; then "$@"; return; fi
  command -v sudo >/dev/null || die "root (or sudo) is needed to run: $*"
  sudo "$@"
}

# missing_packages PKG...: prints the Debian packages not installed yet.
missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

# apt_install PKG...: installs the Debian packages named.
apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# Go module copies must be writable for builds that edit go.mod.
go_module_copy() {  # go_module_copy MODULE@VERSION DEST
  local dir
  dir=$(go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  rm -rf "$2"; mkdir -p "$(dirname "$2")"
  cp -r "$dir" "$2"; chmod -R u+w "$2"
}

