#!/usr/bin/env bash
# `slsm serve --tls-port` against redis-cli --tls (Debian's redis-tools,
# built with TLS): certificates made with openssl, a client certificate
# required, then a client without one refused.
#
#   crates/server/tests/redis-cli-tls.sh SLSM_BINARY
set -euo pipefail
slsm="$(realpath "$1")"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
quiet() { "$@" >/dev/null 2>&1; }
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=slsm test CA"
issue() { # name, extensions
  quiet openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
  printf '%s\n' "$2" >"$1.ext"
  quiet openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 2 -extfile "$1.ext"
}
issue server "subjectAltName=DNS:localhost,IP:127.0.0.1"
issue client "extendedKeyUsage=clientAuth"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
tls_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$slsm" serve --db "$work/db" --bind "127.0.0.1:$port" --tls-port "$tls_port" \
  --tls-cert-file server.crt --tls-key-file server.key --tls-ca-cert-file ca.crt >server.log 2>&1 &
server=$!
up=0
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && { up=1; break; }
  sleep 0.1
done
if [ "$up" = 0 ]; then
  echo "slsm serve did not start:" >&2
  cat server.log >&2
  exit 1
fi
cli() { redis-cli --tls --cacert ca.crt -p "$tls_port" "$@"; }
[ "$(cli --cert client.crt --key client.key set greeting hello)" = OK ]
[ "$(cli --cert client.crt --key client.key get greeting)" = hello ]
[ "$(redis-cli -p "$port" get greeting)" = hello ]
if cli ping 2>/dev/null | grep -q PONG; then
  echo "a client without a certificate was served" >&2
  exit 1
fi
echo "redis-cli --tls: served with a client certificate, refused without one"
