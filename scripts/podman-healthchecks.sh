#!/usr/bin/env bash
# Podman runs container healthchecks from systemd timers; without systemd (as here) a
# container's health stays "starting" forever and compose's `service_healthy` never fires.
# This loop runs the due checks itself. Started (once) by container-runtime.sh.
set -u
interval=${STATE_RELAY_HEALTHCHECK_INTERVAL:-3}
while true; do
  for id in $(podman ps -q --filter health=starting 2>/dev/null) $(podman ps -q --filter health=healthy 2>/dev/null) $(podman ps -q --filter health=unhealthy 2>/dev/null); do
    timeout 20 podman healthcheck run "$id" >/dev/null 2>&1 &
  done
  wait
  sleep "$interval"
done
