#!/usr/bin/env bash
# The one test command: sets up everything a fresh machine lacks (pnpm, dependencies, the
# container runtime, images, chromium, promtool), then runs every test — unit, integration,
# end-to-end — and ends with "N passed, M failed".
#   bash scripts/test.sh            every test
#   bash scripts/test.sh unit       unit tests only (no containers)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
what=${1:-all}
start=$(date +%s)

bash scripts/setup.sh
# The browser test drives Debian's chromium; unit tests need no browser.
if [ "$what" != unit ]; then bash scripts/browser.sh; fi

# The format check, lint, the dependency rules, the compose files and deploy/ count as one check
# each in the totals below.
checks_failed=0
if [ "$what" != unit ]; then
  echo "[test] prettier --check"
  pnpm exec prettier --check . --log-level warn || { echo "[test] format check failed (pnpm format fixes it)"; checks_failed=$((checks_failed + 1)); }
  echo "[test] eslint"
  pnpm exec eslint . || { echo "[test] lint failed"; checks_failed=$((checks_failed + 1)); }
  echo "[test] dependency rules (dependency-cruiser)"
  pnpm run -s lint:deps || { echo "[test] dependency rules failed (.dependency-cruiser.cjs says why)"; checks_failed=$((checks_failed + 1)); }
  # Both compose files resolve (anchors, merges, interpolation) with the variables their scripts set.
  echo "[test] compose files (docker-compose config)"
  bash scripts/container-runtime.sh >/dev/null
  compose_ok=true
  STATE_RELAY_API_TOKEN=compose-check-token-0123456789 docker-compose -f docker-compose.yml config -q || compose_ok=false
  STATE_RELAY_API_TOKEN=compose-check-token-0123456789 KAFKA_ADMIN_PASSWORD=x KAFKA_KEYSTORE_PASSWORD=y \
    docker-compose -f docker-compose.secure.yml config -q || compose_ok=false
  $compose_ok || { echo "[test] a compose file does not resolve"; checks_failed=$((checks_failed + 1)); }
  # The alert rules parse and pass their unit tests; the dashboard's queries parse. Installs
  # promtool (Debian's prometheus package) when missing: scripts/promtool.sh.
  echo "[test] alert rules and dashboard queries (promtool)"
  bash scripts/check-deploy.sh || { echo "[test] deploy/ check failed (promtool says where)"; checks_failed=$((checks_failed + 1)); }
fi

results="$root/.state-relay/jest-results.json"
mkdir -p "$root/.state-relay"
rm -f "$results"
status=0
if [ "$what" = unit ]; then
  pnpm exec jest --selectProjects unit --json --outputFile="$results" || status=$?
else
  # One broker for the whole run (jest globalSetup); files run one at a time on 2 cores.
  bash scripts/with-runtime.sh pnpm exec jest --runInBand --json --outputFile="$results" || status=$?
fi

node -e '
const fs = require("fs");
const file = process.argv[1];
if (!fs.existsSync(file)) { console.log("0 passed, 1 failed (jest wrote no results)"); process.exit(1); }
const r = JSON.parse(fs.readFileSync(file, "utf8"));
const failedSuites = r.testResults.filter((t) => t.status === "failed" && t.assertionResults.length === 0).length;
const checks = Number(process.argv[2]);
console.log(`\n${r.numPassedTests} passed, ${r.numFailedTests + failedSuites + checks} failed`);
' "$results" "$checks_failed"
echo "(tests took $(( $(date +%s) - start )) s)" >&2
[ "$checks_failed" -gt 0 ] && [ "$status" -eq 0 ] && status=1
exit $status
