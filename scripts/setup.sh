#!/usr/bin/env bash
# Installs what the workspace needs on a fresh machine: pnpm (with npm, not corepack) at the
# version package.json pins, then the dependencies from the lockfile, then a TypeScript build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
want=$(node -p "require('./package.json').packageManager.split('@')[1]")
if [ "$(pnpm --version 2>/dev/null || true)" != "$want" ]; then
  echo "[setup] installing pnpm@$want with npm"
  npm install -g "pnpm@$want" >/dev/null
fi
echo "[setup] pnpm install"
pnpm install --frozen-lockfile --reporter=silent
echo "[setup] typescript build"
pnpm exec tsc -b tsconfig.json
# pnpm links a workspace package's bin only when its file exists at install time; the scanner's
# (state-relay -> dist/cli/main.js) exists only after the build, so a first setup links it now.
if [ ! -e node_modules/.bin/state-relay ]; then
  echo "[setup] linking the state-relay bin"
  pnpm install --frozen-lockfile --offline --reporter=silent
fi
