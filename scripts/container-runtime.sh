#!/usr/bin/env bash
# Brings up a Docker-API container runtime and writes the environment clients need to
# .state-relay/runtime.env (source it). Idempotent; a second run only checks.
#   bash scripts/container-runtime.sh          bring it up (or check it)
#   bash scripts/container-runtime.sh stop     stop the healthcheck runner, and podman's API
#                                              service if this script started it
#
# Paths, in order:
#   1. a reachable Docker engine (DOCKER_HOST or the default socket)  -> "docker"
#   2. Debian as root: Podman serving the Docker API on a unix socket  -> "podman"
#   3. neither: stop with a message saying what is missing.
#
# What it leaves running (podman path) is per machine, not per checkout: podman's API service
# and one healthcheck runner, with pid files in $STATE_RELAY_RUN_DIR (default
# /run/state-relay). Both start through run_detached, so they hold no descriptor of the
# shell that started them. Sourcing this file defines the functions without running anything.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="$root/.state-relay"
envfile="$state/runtime.env"
sock="${STATE_RELAY_PODMAN_SOCKET:-/run/podman/podman.sock}"
rundir="${STATE_RELAY_RUN_DIR:-/run/state-relay}"
runner_pidfile="$rundir/podman-healthchecks.pid"
service_pidfile="$rundir/podman-service.pid"

say() { echo "[runtime] $*"; }

docker_ok() { timeout 10 docker ${1:+-H "$1"} info >/dev/null 2>&1; }

# Starts "$@" in a new session, stdin from /dev/null, stdout and stderr appended to $1, and
# every other descriptor closed first: a daemon otherwise keeps its caller's descriptors (a
# lock, the write end of a pipe someone reads to EOF, a socket) open for its whole life. Bash
# marks its own descriptors close-on-exec; the caller's are not, so they are closed here, in
# the subshell, listed from /proc/self/fd. Prints the pid.
run_detached() { # $1 = log file, then the command
  local log=$1
  shift
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    cd /
    exec setsid "$@" </dev/null >>"$log" 2>&1
  ) &
  echo $!
}

# True when $1 names a pid file whose process is alive and runs a command containing $2 (so a
# recycled pid is not taken for ours).
pid_alive() { # $1 = pid file, $2 = part of the command line
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# One runner per machine: starts are serialized by a lock in $rundir, and a live runner (pid
# file + liveness check) is reused. The runner writes its own pid file and exits when podman's
# API at $sock stops answering, so it stops with the runtime it serves.
start_healthcheck_runner() {
  mkdir -p "$rundir"
  local lock
  exec {lock}>"$rundir/podman-healthchecks.lock"
  flock -w 30 "$lock" || { say "could not take $rundir/podman-healthchecks.lock"; exec {lock}>&-; return 1; }
  if pid_alive "$runner_pidfile" podman-healthchecks.sh; then
    say "healthcheck runner already running (pid $(cat "$runner_pidfile"))"
  else
    rm -f "$runner_pidfile"
    run_detached "$rundir/podman-healthchecks.log" \
      bash "$root/scripts/podman-healthchecks.sh" "$sock" "$runner_pidfile" >/dev/null
    local i
    for i in $(seq 1 50); do
      pid_alive "$runner_pidfile" podman-healthchecks.sh && break
      sleep 0.1
    done
    if pid_alive "$runner_pidfile" podman-healthchecks.sh; then
      say "started the healthcheck runner, pid $(cat "$runner_pidfile") (podman has no systemd timers here)"
    else
      say "the healthcheck runner did not start; see $rundir/podman-healthchecks.log"
      exec {lock}>&-
      return 1
    fi
  fi
  exec {lock}>&-
}

stop_healthcheck_runner() {
  if pid_alive "$runner_pidfile" podman-healthchecks.sh; then
    local pid
    pid=$(cat "$runner_pidfile")
    kill "$pid"
    say "stopped the healthcheck runner (pid $pid)"
  fi
  rm -f "$runner_pidfile"
}

start_podman_service() {
  mkdir -p "$(dirname "$sock")" "$rundir"
  rm -f "$sock"
  say "starting podman's Docker API on unix://$sock"
  local pid
  pid=$(run_detached "$rundir/podman-service.log" podman system service --time=0 "unix://$sock")
  echo "$pid" >"$service_pidfile"
  for _ in $(seq 1 60); do docker_ok "unix://$sock" && break; sleep 0.5; done
  docker_ok "unix://$sock" || { say "podman's API did not answer; see $rundir/podman-service.log"; exit 1; }
}

write_env() { # $1 = path, $2 = DOCKER_HOST
  {
    echo "export STATE_RELAY_RUNTIME=$1"
    echo "export DOCKER_HOST=$2"
    if [ "$1" = podman ]; then
      # The reaper image cannot be pulled here; tests stop their own containers.
      echo "export TESTCONTAINERS_RYUK_DISABLED=true"
      # Keep host-to-container traffic on loopback (published ports serve it).
      echo "export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1"
    fi
  } >"$envfile"
}

stop_runtime() {
  stop_healthcheck_runner
  if pid_alive "$service_pidfile" "podman system service"; then
    local pid
    pid=$(cat "$service_pidfile")
    kill "$pid"
    say "stopped podman's API service (pid $pid); containers keep running"
  fi
  rm -f "$service_pidfile"
}

# A Testcontainers container left by a run that is gone: "running" with no process (a killed
# session), or exited over an hour ago. An exited container may be one a running fault test
# killed on purpose and will restart: those are left alone for an hour.
stale_container() {
  local state status pid finished
  state=$(podman inspect --format '{{.State.Status}} {{.State.Pid}} {{.State.FinishedAt.Unix}}' "$1" 2>/dev/null) || return 1
  read -r status pid finished <<<"$state"
  if [ "$status" != running ]; then
    [ $(( $(date +%s) - ${finished:-0} )) -gt 3600 ]
    return
  fi
  [ "${pid:-0}" = 0 ] || ! kill -0 "$pid" 2>/dev/null
}

main() {
  mkdir -p "$state"
  case "${1:-up}" in
    up) ;;
    stop) stop_runtime; return 0 ;;
    *) echo "usage: bash scripts/container-runtime.sh [up|stop]" >&2; return 2 ;;
  esac

  # 1. A Docker engine that answers (not the podman socket we may have started earlier).
  if [ -n "${DOCKER_HOST:-}" ] && [ "${DOCKER_HOST}" != "unix://$sock" ] && command -v docker >/dev/null && docker_ok "$DOCKER_HOST"; then
    say "using the Docker engine at DOCKER_HOST=$DOCKER_HOST"
    write_env docker "$DOCKER_HOST"; return 0
  fi
  if [ -S /var/run/docker.sock ] && command -v docker >/dev/null && docker_ok unix:///var/run/docker.sock; then
    say "using the Docker engine at /var/run/docker.sock"
    write_env docker unix:///var/run/docker.sock; return 0
  fi

  # 2. Podman on Debian, as root.
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    say "no Docker engine answers, and Podman cannot be installed here (needs Debian/apt and root)."
    say "Start a Docker engine (or set DOCKER_HOST) and run again."
    return 1
  fi
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null || ! command -v docker-compose >/dev/null; then
    say "installing podman, runc, mmdebstrap, docker-compose from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q podman runc mmdebstrap docker-compose uidmap slirp4netns >/dev/null
  fi
  local conf=/etc/containers/containers.conf
  if ! grep -q 'runtime = "runc"' "$conf" 2>/dev/null; then
    # crun fails here: no CAP_SYS_RESOURCE for podman's default ulimits, and it refuses the
    # hybrid cgroup layout. runc with no default ulimits works.
    mkdir -p /etc/containers
    cat >"$conf" <<'CONF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
CONF
    say "wrote $conf (runc, no default ulimits)"
  fi
  docker_ok "unix://$sock" || start_podman_service
  # Stale containers of earlier runs: a killed session leaves Testcontainers containers whose
  # process is gone but which podman still lists as "Up". Remove those (and exited ones),
  # never a live one: another test run may be using it.
  local id
  for id in $(podman ps -aq --filter label=org.testcontainers=true 2>/dev/null || true); do
    # Judged twice, 2 s apart, each from one inspect: a container that a running fault test
    # restarts has no process for a moment, and reading its pid, then its status, in two calls
    # can see it stopped, then running. (A campaign's broker vanished mid-restart while another
    # checkout's run started this bootstrap.)
    stale_container "$id" || continue
    local first; first=$(podman inspect --format '{{.State.StartedAt}}' "$id" 2>/dev/null || echo gone)
    sleep 2
    stale_container "$id" || continue
    [ "$(podman inspect --format '{{.State.StartedAt}}' "$id" 2>/dev/null || echo gone)" = "$first" ] || continue
    say "removing stale container $id"
    podman rm -f -t 0 "$id" >/dev/null 2>&1 || podman rm -f -t 0 "$id" >/dev/null 2>&1 || true
  done
  # No systemd here to run podman's healthcheck timers: a small loop does it.
  start_healthcheck_runner
  say "using podman (Docker API at unix://$sock)"
  write_env podman "unix://$sock"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
