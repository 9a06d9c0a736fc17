#!/usr/bin/env bash
# Podman runs container healthchecks from systemd timers; without systemd (as here) a
# container's health stays "starting" forever and compose's `service_healthy` never fires.
# This loop runs the checks itself: often while a container is starting, every ~10 s once
# it has a verdict (each check spawns a process in the container; keep that cheap).
#   podman-healthchecks.sh SOCKET PIDFILE
# Started once per machine by container-runtime.sh (start_healthcheck_runner), detached and
# with no inherited descriptors. It writes PIDFILE, and exits when podman's API at SOCKET stops
# answering (five checks in a row, ~10 s): it stops with the runtime it serves.
set -u
sock=${1:?usage: podman-healthchecks.sh SOCKET PIDFILE}
pidfile=${2:?usage: podman-healthchecks.sh SOCKET PIDFILE}

# The starter serializes starts under a lock; this guards against a second runner anyway.
other=$(cat "$pidfile" 2>/dev/null || true)
if [ -n "$other" ] && [ "$other" != $$ ] && kill -0 "$other" 2>/dev/null &&
  tr '\0' ' ' <"/proc/$other/cmdline" 2>/dev/null | grep -qF podman-healthchecks.sh; then
  echo "[healthchecks] another runner is running (pid $other); exiting"
  exit 0
fi
echo $$ >"$pidfile"
cleanup() { [ "$(cat "$pidfile" 2>/dev/null)" = "$$" ] && rm -f "$pidfile"; }
trap cleanup EXIT
trap 'exit 0' TERM INT HUP
echo "[healthchecks] pid $$ runs podman's healthchecks while unix://$sock answers"

api_up() { curl -fsS -o /dev/null -m 5 --unix-socket "$sock" http://podman/_ping 2>/dev/null; }

tick=0
misses=0
while true; do
  if api_up; then
    misses=0
  else
    misses=$((misses + 1))
    if [ "$misses" -ge 5 ]; then
      echo "[healthchecks] podman's API at unix://$sock stopped answering; stopping with it"
      exit 0
    fi
  fi
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
