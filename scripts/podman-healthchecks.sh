#!/usr/bin/env bash
# Podman runs container healthchecks from systemd timers; without systemd (as here) a
# container's health stays "starting" forever and compose's `service_healthy` never fires.
# This loop runs the checks itself: often while a container is starting, every ~10 s once
# it has a verdict (each check spawns a process in the container; keep that cheap).
# Started (once) by container-runtime.sh.
set -u
tick=0
while true; do
  ids=$(podman ps -q --filter health=starting 2>/dev/null)
  if [ $((tick % 5)) = 0 ]; then
    ids="$ids $(podman ps -q --filter health=healthy 2>/dev/null) $(podman ps -q --filter health=unhealthy 2>/dev/null)"
  fi
  for id in $ids; do
    timeout 20 podman healthcheck run "$id" >/dev/null 2>&1 &
  done
  wait
  tick=$((tick + 1))
  sleep 2
done
