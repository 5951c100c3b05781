#!/usr/bin/env bash
# Builds the docker compose CLI plugin, used to validate compose.yaml even
# where no Docker engine runs. `go install` refuses the module (it has
# exclude directives), so it is built from a writable copy.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out="$(compose_bin)"
if [[ ! -x "$out" ]]; then
  work="$CACHE/src/compose-$DOCKER_COMPOSE_VERSION"
  go_module_copy "github.com/docker/compose/v2@$DOCKER_COMPOSE_VERSION" "$work"
  cd "$work"
  mkdir -p "$(dirname "$out")"
  CGO_ENABLED=0 go build -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$DOCKER_COMPOSE_VERSION" \
    -o "$out.tmp" ./cmd
  mv "$out.tmp" "$out"
fi
# Install as a CLI plugin (so `docker compose` works) when we may.
plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
mkdir -p "$plugins"
ln -sf "$out" "$plugins/docker-compose"
