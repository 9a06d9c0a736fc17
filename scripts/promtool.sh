#!/usr/bin/env bash
# Installs promtool (Debian's prometheus package) for the alert rules' check in scripts/test.sh
# (`promtool check rules` and `promtool test rules` on deploy/prometheus/). Skipped when promtool
# is already on PATH.
set -euo pipefail
if command -v promtool >/dev/null; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "[promtool] promtool is missing and there is no apt-get: install Prometheus' promtool by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "[promtool] installing Debian's prometheus package (for promtool) with apt-get"
# Another apt-get (a test run installing chromium) may hold the lock: wait for it, not fail. The
# timeout covers dpkg's lock; an update running elsewhere holds the lists' lock, hence the retries.
wait_lock=(-o DPkg::Lock::Timeout=600)
for attempt in 1 2 3; do
  $sudo apt-get "${wait_lock[@]}" update -q >/dev/null && break
  [ "$attempt" -lt 3 ] || exit 1
  sleep 10
done
# Where an init system runs, the package also starts a Prometheus server; promtool is all we use.
DEBIAN_FRONTEND=noninteractive $sudo apt-get "${wait_lock[@]}" install -y -q --no-install-recommends prometheus >/dev/null
command -v promtool >/dev/null || { echo "[promtool] the prometheus package installed no promtool" >&2; exit 1; }
