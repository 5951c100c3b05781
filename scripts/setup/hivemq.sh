#!/usr/bin/env bash
# HiveMQ CE for the native stack: com.hivemq:hivemq-community-edition-embedded
# at HIVEMQ_VERSION (.env) and its dependencies, resolved by Maven from Maven
# Central into the cache, and the project's launcher (brokers/hivemq/launcher:
# the embedded broker with the project's config and a Prometheus endpoint for
# its metrics), built against them. Output: $CACHE/hivemq/$HIVEMQ_VERSION/lib,
# the classpath brokers/hivemq/broker.toml [native] runs; rebuilt when the
# launcher's source changes (its hash is the stamp beside lib).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

src="$ROOT/brokers/hivemq/launcher"
out="$CACHE/hivemq/$HIVEMQ_VERSION"
key=$( (cd "$src" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-10)
[[ -f "$out/launcher.key" && "$(cat "$out/launcher.key")" == "$key" && -f "$out/lib/hivemq-launcher.jar" ]] && exit 0

# A JDK (javac) and Maven: Debian 12's packages, Java 17 (the release the pom compiles for).
pkgs=()
command -v javac >/dev/null || pkgs+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || pkgs+=(maven)
((${#pkgs[@]} == 0)) || apt_install "${pkgs[@]}"

# Built in a copy, so that Maven's target/ never lands in the clone; the
# local repository is the cache's, so a second build downloads nothing.
tmp="$CACHE/hivemq/.build"
rm -rf "$tmp" && mkdir -p "$tmp"
cp -r "$src/." "$tmp/src"
mvn -B -q -f "$tmp/src/pom.xml" -Dmaven.repo.local="$CACHE/maven" -Dhivemq.version="$HIVEMQ_VERSION" \
  package dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib"
cp "$tmp/src/target/hivemq-launcher.jar" "$tmp/lib/"
echo "$key" >"$tmp/launcher.key"
rm -rf "$tmp/src" "$out"
mv "$tmp" "$out"
