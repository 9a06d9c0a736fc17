#!/usr/bin/env bash
# The README's main command. On a fresh machine it sets everything up (pnpm, dependencies,
# container runtime, images), builds and starts the stack (Kafka, processor, scanner), seeds
# demo accounts through the events topic, runs the canonical dormant-accounts sweep with a
# progress bar and prints the outcome counts.
#   bash scripts/demo.sh            up + seed + sweep
#   bash scripts/demo.sh down       stop the stack (data stays in named volumes)
#   bash scripts/demo.sh purge      stop it and delete the data
#   ACCOUNTS=50000 bash scripts/demo.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cmd=${1:-up}
accounts=${ACCOUNTS:-20000}
project=state-relay

bash scripts/container-runtime.sh
# shellcheck disable=SC1091
source .state-relay/runtime.env
compose() { docker-compose -p "$project" -f "$root/docker-compose.yml" "$@"; }
token_file=.state-relay/api-token
[ -f "$token_file" ] || node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("base64url"))' >"$token_file"
export STATE_RELAY_API_TOKEN
STATE_RELAY_API_TOKEN=$(cat "$token_file")

case "$cmd" in
  down) compose down; echo "stopped; data kept in volumes (bash scripts/demo.sh purge deletes it)"; exit 0 ;;
  purge) compose down -v; exit 0 ;;
  up) ;;
  *) echo "usage: bash scripts/demo.sh [up|down|purge]" >&2; exit 2 ;;
esac

bash scripts/setup.sh
bash scripts/images.sh
# shellcheck disable=SC1091
source .state-relay/images.env
export KAFKA_IMAGE NODE_BUILD_IMAGE NODE_RUNTIME_IMAGE

echo "[demo] building images and starting the stack (first build takes a few minutes)"
compose build --quiet 2>&1 | grep -v -E 'buildx|legacy builder|docs.docker.com|^\s*$' || true
compose up -d

wait_ready() { # $1 = name, $2 = url
  printf '[demo] waiting for %s' "$1"
  for _ in $(seq 1 180); do
    if curl -fsS "$2" >/dev/null 2>&1; then echo " ready"; return 0; fi
    printf '.'; sleep 2
  done
  echo " not ready; see: docker-compose -p $project logs $1" >&2
  exit 1
}
wait_ready processor http://127.0.0.1:8080/readyz
wait_ready scanner http://127.0.0.1:8081/readyz

echo "[demo] seeding $accounts accounts through the events topic (and waiting until the processor applied them)"
KAFKA_BROKERS=127.0.0.1:39092 EVENTS_TOPIC=accounts-events APP_ID=state-relay node services/processor/dist/seed.js "$accounts" 5

echo "[demo] the canonical sweep: active accounts idle for more than 30 days become dormant"
node services/scanner/dist/cli.js --url http://127.0.0.1:8081 --token "$STATE_RELAY_API_TOKEN" --preset dormant

cat <<TXT

[demo] where to look next
  scanner API       http://127.0.0.1:8081/scans          (Authorization: Bearer \$(cat .state-relay/api-token))
  OpenAPI           http://127.0.0.1:8081/openapi.json
  scanner metrics   http://127.0.0.1:8081/metrics
  processor state   http://127.0.0.1:8080/state/acct-000001
  processor metrics http://127.0.0.1:8080/metrics
  another sweep     pnpm scan --token \$(cat .state-relay/api-token) --preset dormant --dry-run
  stop              bash scripts/demo.sh down      (data survives; start again with bash scripts/demo.sh)
TXT
