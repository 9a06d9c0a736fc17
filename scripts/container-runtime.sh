#!/usr/bin/env bash
# Brings up a Docker-API container runtime and writes the environment clients need to
# .state-relay/runtime.env (source it). Idempotent; a second run only checks.
#
# Paths, in order:
#   1. a reachable Docker engine (DOCKER_HOST or the default socket)  -> "docker"
#   2. Debian as root: Podman serving the Docker API on a unix socket  -> "podman"
#   3. neither: stop with a message saying what is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
state="$root/.state-relay"
mkdir -p "$state"
envfile="$state/runtime.env"
sock="${STATE_RELAY_PODMAN_SOCKET:-/run/podman/podman.sock}"

say() { echo "[runtime] $*"; }

docker_ok() { timeout 10 docker ${1:+-H "$1"} info >/dev/null 2>&1; }

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

# 1. A Docker engine that answers (not the podman socket we may have started earlier).
if [ -n "${DOCKER_HOST:-}" ] && [ "${DOCKER_HOST}" != "unix://$sock" ] && command -v docker >/dev/null && docker_ok "$DOCKER_HOST"; then
  say "using the Docker engine at DOCKER_HOST=$DOCKER_HOST"
  write_env docker "$DOCKER_HOST"; exit 0
fi
if [ -S /var/run/docker.sock ] && command -v docker >/dev/null && docker_ok unix:///var/run/docker.sock; then
  say "using the Docker engine at /var/run/docker.sock"
  write_env docker unix:///var/run/docker.sock; exit 0
fi

# 2. Podman on Debian, as root.
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  say "no Docker engine answers, and Podman cannot be installed here (needs Debian/apt and root)."
  say "Start a Docker engine (or set DOCKER_HOST) and run again."
  exit 1
fi
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null || ! command -v docker-compose >/dev/null; then
  say "installing podman, runc, mmdebstrap, docker-compose from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q podman runc mmdebstrap docker-compose uidmap slirp4netns >/dev/null
fi
conf=/etc/containers/containers.conf
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
if ! docker_ok "unix://$sock"; then
  mkdir -p "$(dirname "$sock")"
  rm -f "$sock"
  say "starting podman's Docker API on unix://$sock"
  nohup setsid podman system service --time=0 "unix://$sock" >"$state/podman-service.log" 2>&1 </dev/null &
  for _ in $(seq 1 60); do docker_ok "unix://$sock" && break; sleep 0.5; done
  docker_ok "unix://$sock" || { say "podman's API did not answer; see $state/podman-service.log"; exit 1; }
fi
# Stale containers of earlier runs: a killed session leaves Testcontainers containers whose
# process is gone but which podman still lists as "Up". Remove those (and exited ones),
# never a live one: another test run may be using it.
for id in $(podman ps -aq --filter label=org.testcontainers=true 2>/dev/null || true); do
  pid=$(podman inspect --format '{{.State.Pid}}' "$id" 2>/dev/null || echo 0)
  status=$(podman inspect --format '{{.State.Status}}' "$id" 2>/dev/null || echo unknown)
  # An exited container may be one a running fault test killed on purpose and will restart:
  # leave those alone for an hour. A "running" one whose process is gone is always stale.
  if [ "$status" != running ]; then
    finished=$(podman inspect --format '{{.State.FinishedAt.Unix}}' "$id" 2>/dev/null || echo 0)
    [ $(( $(date +%s) - ${finished:-0} )) -gt 3600 ] || continue
  fi
  if [ "${pid:-0}" = 0 ] || ! kill -0 "$pid" 2>/dev/null; then
    say "removing stale container $id"
    podman rm -f -t 0 "$id" >/dev/null 2>&1 || podman rm -f -t 0 "$id" >/dev/null 2>&1 || true
  fi
done
# No systemd here to run podman's healthcheck timers: a small loop does it.
hcpid="$state/podman-healthchecks.pid"
if ! { [ -f "$hcpid" ] && kill -0 "$(cat "$hcpid")" 2>/dev/null; }; then
  nohup setsid bash "$root/scripts/podman-healthchecks.sh" >/dev/null 2>&1 </dev/null &
  echo $! >"$hcpid"
  say "started the healthcheck runner (podman has no systemd timers here)"
fi
say "using podman (Docker API at unix://$sock)"
write_env podman "unix://$sock"
