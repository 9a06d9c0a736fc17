#!/usr/bin/env bash
# The production-like stack of docker-compose.secure.yml in one command: three brokers with TLS and
# SCRAM-SHA-512, topics at replication factor 3 / min.insync.replicas 2, two processors, the
# scanner. On first use it makes a CA, a certificate per broker (names kafka-1..3), the passwords
# and the API token under .state-relay/secure/ (kept, so a second `up` reuses them), then builds the
# images, starts the stack and waits until both processors and the scanner answer /readyz.
#   bash scripts/secure-stack.sh          up (then: pnpm scan --token-file .state-relay/secure/api-token --preset dormant)
#   bash scripts/secure-stack.sh down     stop it (data stays in named volumes)
#   bash scripts/secure-stack.sh purge    stop it, delete the data and the secrets
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cmd=${1:-up}
project=state-relay-secure
secure=.state-relay/secure

bash scripts/container-runtime.sh
# shellcheck disable=SC1091
source .state-relay/runtime.env
if docker compose version >/dev/null 2>&1; then compose_cmd=(docker compose); else compose_cmd=(docker-compose); fi
compose() { "${compose_cmd[@]}" -p "$project" -f "$root/docker-compose.secure.yml" "$@"; }

secret() { node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("base64url"))'; }

make_secrets() {
  [ -s "$secure/broker/ca.pem" ] && return 0
  echo "[secure] making a CA, broker certificates and passwords under $secure/"
  (
    umask 077
    mkdir -p "$secure/ca" "$secure/broker" "$secure/client"
    secret >"$secure/keystore-password"
    secret >"$secure/admin-password"
    secret >"$secure/broker/state-relay-password"
    secret >"$secure/api-token"
    local store ca=$secure/ca
    store=$(cat "$secure/keystore-password")
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$ca/ca.key" -out "$ca/ca.pem" -days 365 \
      -subj '/CN=state-relay example CA' 2>/dev/null
    for i in 1 2 3; do
      openssl req -newkey rsa:2048 -nodes -keyout "$ca/kafka-$i.key" -out "$ca/kafka-$i.csr" -subj "/CN=kafka-$i" 2>/dev/null
      printf 'subjectAltName=DNS:kafka-%s,DNS:localhost\n' "$i" >"$ca/kafka-$i.ext"
      openssl x509 -req -in "$ca/kafka-$i.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca.key" -CAcreateserial \
        -out "$ca/kafka-$i.pem" -days 365 -extfile "$ca/kafka-$i.ext" 2>/dev/null
      openssl pkcs12 -export -in "$ca/kafka-$i.pem" -inkey "$ca/kafka-$i.key" -certfile "$ca/ca.pem" \
        -name kafka-$i -out "$secure/broker/kafka-$i.p12" -passout "pass:$store"
    done
    cp "$ca/ca.pem" "$secure/broker/ca.pem"
    cp "$ca/ca.pem" "$secure/client/kafka-ca.pem"
    cp "$secure/broker/state-relay-password" "$secure/client/kafka-password"
    cp "$secure/api-token" "$secure/client/api-token"
    cat >"$secure/broker/admin.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$(cat "$secure/admin-password")";
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/secrets/ca.pem
EOF
  )
  # The containers read these as other users (the brokers' and the services' uid 10001): readable
  # by them, and nobody else gets past the 0700 directory above them.
  chmod 0700 "$secure"
  chmod 0755 "$secure/broker" "$secure/client"
  chmod 0644 "$secure"/broker/* "$secure"/client/*
}

export_env() {
  export KAFKA_ADMIN_PASSWORD KAFKA_KEYSTORE_PASSWORD STATE_RELAY_API_TOKEN
  KAFKA_ADMIN_PASSWORD=$(cat "$secure/admin-password")
  KAFKA_KEYSTORE_PASSWORD=$(cat "$secure/keystore-password")
  STATE_RELAY_API_TOKEN=$(cat "$secure/api-token")
}

case "$cmd" in
  down)
    [ -s "$secure/api-token" ] && export_env
    compose down
    echo "[secure] stopped; data kept in volumes (bash scripts/secure-stack.sh purge deletes it)"
    exit 0
    ;;
  purge)
    [ -s "$secure/api-token" ] && export_env
    compose down -v
    rm -rf "$secure"
    exit 0
    ;;
  up) ;;
  *)
    echo "usage: bash scripts/secure-stack.sh [up|down|purge]" >&2
    exit 2
    ;;
esac

bash scripts/setup.sh
bash scripts/images.sh
# shellcheck disable=SC1091
source .state-relay/images.env
export KAFKA_IMAGE NODE_BUILD_IMAGE NODE_RUNTIME_IMAGE
make_secrets
# Secrets made before the services read the API token from a mounted file (API_TOKEN_FILE,
# STATE_API_TOKEN_FILE): give them their copy.
if [ ! -s "$secure/client/api-token" ]; then
  cp "$secure/api-token" "$secure/client/api-token"
  chmod 0644 "$secure/client/api-token"
fi
export_env

echo "[secure] building images and starting three brokers, two processors and the scanner"
compose build --quiet 2>&1 | grep -v -E 'buildx|legacy builder|docs.docker.com|^\s*$' || true
compose up -d

wait_ready() { # $1 = name, $2 = url
  local i
  for i in $(seq 1 150); do
    if curl -fsS "$2" >/dev/null 2>&1; then
      echo "[secure] $1 ready"
      return 0
    fi
    [ $((i % 10)) = 0 ] && echo "[secure] still waiting for $1 ($((i * 2)) s)"
    sleep 2
  done
  echo "[secure] $1 not ready after 300 s; see: ${compose_cmd[*]} -p $project logs $1" >&2
  exit 1
}
wait_ready processor-1 "http://127.0.0.1:${PROCESSOR_PORT:-8080}/readyz"
wait_ready processor-2 "http://127.0.0.1:${PROCESSOR_2_PORT:-8082}/readyz"
wait_ready scanner "http://127.0.0.1:${SCANNER_PORT:-8081}/readyz"
echo "[secure] up: scanner http://127.0.0.1:${SCANNER_PORT:-8081} (token in $secure/api-token), processors :${PROCESSOR_PORT:-8080} and :${PROCESSOR_2_PORT:-8082}"
echo "[secure] sweep: pnpm scan --token-file $secure/api-token --preset dormant"
