#!/bin/sh
# Creates the Secrets of a Renature deployment, once, with fresh random values:
#   infra/k8s/create-secrets.sh [-n NAMESPACE]      (extra arguments go to kubectl)
# renature-redis-auth holds one password per ACL user of infra/redis/users.acl (64 hex digits
# from openssl rand -hex 32); renature-signing-key the Ed25519 key with which the rules service
# seals game records (signing.pem, docs/security.md). No Secret is committed and none is in the
# manifests that `kubectl apply -f infra/k8s/` applies, so applying them again cannot wipe a
# password or the key; and `kubectl create` refuses a Secret that exists, so running this again
# changes nothing: each Secret that exists is left as it is and the others are created. To
# rotate the signing key, delete renature-signing-key, run this again and restart the rules
# service (docs/security.md, "Signed records"). The values go through a private temporary file,
# never a command line (ps would show them).
set -eu
here=$(dirname "$0")
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
secret() {  # NAME, then kubectl's arguments: create the Secret unless it exists
  if ! kubectl create secret generic "$@" 2> "$tmp/error"; then
    if grep -q AlreadyExists "$tmp/error"; then
      echo "$1 exists: left as it is" >&2
    else
      cat "$tmp/error" >&2
      exit 1
    fi
  fi
}
for name in $(grep -o '@[A-Z_]*_PASSWORD@' "$here/../redis/users.acl" | sort -u | tr -d @); do
  printf '%s=%s\n' "$name" "$(openssl rand -hex 32)" >> "$tmp/redis-auth.env"
done
openssl genpkey -algorithm ed25519 -out "$tmp/signing.pem"
secret renature-redis-auth --from-env-file="$tmp/redis-auth.env" "$@"
secret renature-signing-key --from-file=signing.pem="$tmp/signing.pem" "$@"
