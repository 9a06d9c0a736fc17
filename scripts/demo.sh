#!/usr/bin/env bash
# The README's main command. On a fresh machine it sets everything up (pnpm, dependencies,
# container runtime, images), builds and starts the stack (Kafka, processor, scanner), seeds
# demo accounts through the events topic (only into an empty stack: a stack seeded before keeps
# its accounts), runs the canonical dormant-accounts sweep with a progress bar and prints the
# outcome counts.
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
# Compose v2 (`docker compose`) where the runtime has it, the v1 binary (Debian's) otherwise.
if docker compose version >/dev/null 2>&1; then compose_cmd=(docker compose); else compose_cmd=(docker-compose); fi
compose() { "${compose_cmd[@]}" -p "$project" -f "$root/docker-compose.yml" "$@"; }
# One token for the scanner's API and the processor's GET /state. It stays in files (mode 600)
# and the environment, never on a command line: api-token for the CLI (--token-file), and
# auth-header for curl (-H @file).
token_file=.state-relay/api-token
header_file=.state-relay/auth-header
(
  umask 077
  [ -s "$token_file" ] || node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("base64url"))' >"$token_file"
  printf 'Authorization: Bearer %s\n' "$(cat "$token_file")" >"$header_file"
)
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

# On a terminal the dots grow on one line; without one (a pipe, a CI log) each wait is a line of
# its own: a line every 10 s while waiting, then the outcome.
wait_ready() { # $1 = name, $2 = url
  local tty=false i
  [ -t 1 ] && tty=true
  printf '[demo] waiting for %s' "$1"
  $tty || echo
  for i in $(seq 1 180); do
    if curl -fsS "$2" >/dev/null 2>&1; then
      if $tty; then echo " ready"; else echo "[demo] $1 ready"; fi
      return 0
    fi
    if $tty; then printf '.'; elif [ $((i % 5)) = 0 ]; then echo "[demo] still waiting for $1 ($((i * 2)) s)"; fi
    sleep 2
  done
  $tty && echo
  echo "[demo] $1 not ready after 360 s; see: ${compose_cmd[*]} -p $project logs $1" >&2
  exit 1
}
wait_ready processor http://127.0.0.1:8080/readyz
wait_ready scanner http://127.0.0.1:8081/readyz

# Seeding again would append another $accounts x 5 events for the same accounts; --if-empty
# seeds only when the events topic has never been written (its end offsets are all 0) and
# otherwise says so and keeps what is there.
echo "[demo] seeding $accounts accounts through the events topic if the stack is empty (and waiting until the processor applied them)"
KAFKA_BROKERS=127.0.0.1:39092 EVENTS_TOPIC=accounts-events APP_ID=state-relay node tools/demo-seed/dist/seed.js --if-empty "$accounts" 5

echo "[demo] the canonical sweep: active accounts idle for more than 30 days become dormant"
# The token reaches the CLI through STATE_RELAY_API_TOKEN (exported above), not its arguments.
node services/scanner/dist/cli/main.js --url http://127.0.0.1:8081 --preset dormant

cat <<TXT

[demo] where to look next
  status page       http://127.0.0.1:8081/              (paste the token from .state-relay/api-token once)
  scanner API       curl -s -H @.state-relay/auth-header http://127.0.0.1:8081/scans
  OpenAPI           http://127.0.0.1:8081/openapi.json
  scanner metrics   http://127.0.0.1:8081/metrics
  processor state   curl -s -H @.state-relay/auth-header http://127.0.0.1:8080/state/acct-000001
  processor metrics http://127.0.0.1:8080/metrics
  another sweep     pnpm scan --token-file .state-relay/api-token --preset dormant --dry-run
  stop              bash scripts/demo.sh down      (data survives; start again with bash scripts/demo.sh)
TXT
