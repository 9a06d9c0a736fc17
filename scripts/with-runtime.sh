#!/usr/bin/env bash
# Runs a command with the container runtime up and the image names exported:
#   bash scripts/with-runtime.sh pnpm exec jest --selectProjects integration
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/container-runtime.sh" >&2
bash "$root/scripts/images.sh" >&2
# shellcheck disable=SC1091
source "$root/.state-relay/runtime.env"
# shellcheck disable=SC1091
source "$root/.state-relay/images.env"
export KAFKAJS_NO_PARTITIONER_WARNING=1
exec "$@"
