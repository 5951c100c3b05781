#!/usr/bin/env bash
# Checks, before `kubectl apply --server-side -k deploy/k6-operator`, that the
# k6 archive fits the ConfigMap kustomization.yaml generates from it, so that
# an archive too big is named here, not refused by the API server halfway
# through an apply. See README.md ("2. Archive").
# Usage: deploy/k6-operator/check-archive.sh [ARCHIVE]
#        (default: deploy/k6-operator/archive.tar)
set -euo pipefail
# shellcheck source=../../scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

# Kubernetes refuses a ConfigMap whose data and binaryData hold more than
# 1 MiB (ValidateConfigMap, core.MaxSecretSize); the archive is its only key.
# Client-side apply (`kubectl apply -k`) would also copy the ConfigMap,
# JSON-escaped, into an annotation of at most 262,144 bytes, which a tar of
# about 150 KB fills: README.md's procedure applies server-side for that.
LIMIT=1048576

archive="${1:-$ROOT/deploy/k6-operator/archive.tar}"
shown="${archive#"$ROOT/"}"
[[ -f "$archive" ]] ||
  die "$shown does not exist: make it with bin/k6 archive -e SCALE=... -e MAX_INSTANCES=... -O $shown <scenario.js> (deploy/k6-operator/README.md, step 2)"
size=$(wc -c <"$archive")
size=$((size)) # wc pads with spaces on some systems
if ((size > LIMIT)); then
  die "$shown is $size bytes, over the $LIMIT bytes (1 MiB) a ConfigMap holds, so kubectl apply would be refused: make a smaller archive (k6 archive packs the scenario and every file it imports), or put it on a volume and name it in testrun.yaml's spec.script.volumeClaim instead of configMap"
fi
log "$shown: $size bytes, within the $LIMIT bytes (1 MiB) of a ConfigMap (apply it with kubectl apply --server-side -k)"
