#!/bin/sh
# Generates the stack's TLS files that are missing into DIR: a private CA
# (ca.pem, ca.key), a server certificate for 127.0.0.1, localhost and the
# NAMEs given (the brokers' compose service names), and a client
# certificate for mutual TLS (client.pem, client.key). The compose `init`
# service runs it into the secrets volume on every `up`, scripts/stack.sh
# into $MQTTBENCH_STATE/tls: both keep what exists, so a CA that clients
# were given stays valid. RSA 2048 and SHA-256: what production brokers
# are most often given, so the handshake cost measured is the usual one.
# POSIX sh and openssl only.
# Usage: tls.sh DIR [NAME...]
set -eu
dir="${1:?usage: tls.sh DIR [NAME...]}"
shift
if [ -s "$dir/ca.pem" ] && [ -s "$dir/server.pem" ] && [ -s "$dir/client.pem" ]; then
  exit 0
fi
command -v openssl >/dev/null 2>&1 || { echo "tls.sh: openssl is missing (Debian: apt-get install openssl)" >&2; exit 1; }
mkdir -p "$dir"
chmod 0755 "$dir" # the brokers' and k6's users read the certificates in it
umask 077
tmp="$(mktemp -d "$dir/.new.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
san="IP:127.0.0.1,DNS:localhost"
for name in "$@"; do san="$san,DNS:$name"; done
days=3650
if [ -s "$dir/ca.pem" ] && [ -s "$dir/ca.key" ]; then
  # A certificate is missing, not the CA: the CA clients were given stays.
  cp "$dir/ca.pem" "$dir/ca.key" "$tmp/"
else
  openssl req -x509 -newkey rsa:2048 -sha256 -nodes -days "$days" -subj "/CN=mqtt-bench CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$tmp/ca.key" -out "$tmp/ca.pem" 2>/dev/null
fi
# issue NAME CN EXTENSIONS: a key and a certificate signed by the CA.
issue() {
  openssl req -newkey rsa:2048 -sha256 -nodes -subj "/CN=$2" -keyout "$tmp/$1.key" -out "$tmp/$1.csr" 2>/dev/null
  printf '%s\n' "$3" >"$tmp/$1.ext"
  openssl x509 -req -sha256 -days "$days" -in "$tmp/$1.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" \
    -set_serial "0x$(openssl rand -hex 8)" -extfile "$tmp/$1.ext" -out "$tmp/$1.pem" 2>/dev/null
}
issue server "mqtt-bench broker" "subjectAltName=$san
extendedKeyUsage=serverAuth
keyUsage=critical,digitalSignature,keyEncipherment"
issue client "mqtt-bench-client" "extendedKeyUsage=clientAuth
keyUsage=critical,digitalSignature,keyEncipherment"
# Each broker reads them as its own user (Mosquitto 1883, EMQX 1000, ...),
# as with the other secrets (secrets.sh): the directory holding them is
# the caller's (the secrets volume, the native stack's state directory).
# The CA's key stays its owner's: nothing reads it once the certificates exist.
for f in ca.pem server.pem server.key client.pem client.key; do chmod 0444 "$tmp/$f"; done
for f in ca.key ca.pem server.pem server.key client.pem client.key; do mv "$tmp/$f" "$dir/$f"; done
echo "generated TLS files in $dir (CA, server certificate for $san, client certificate)"
