#!/usr/bin/env bash
# Installs Debian's chromium for the browser test (services/scanner/test/status-page.itest.ts),
# which drives /usr/bin/chromium with playwright-core. Skipped when it is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "[browser] /usr/bin/chromium is missing and there is no apt-get: install chromium by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "[browser] installing chromium with apt-get"
$sudo apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium >/dev/null
