#!/bin/sh
# Creates the Secrets of a Renature deployment, once, with fresh random values:
#   infra/k8s/create-secrets.sh [-n NAMESPACE]      (extra arguments go to kubectl)
# renature-redis-auth holds one password per ACL user of infra/redis/users.acl (64 hex digits
# from openssl rand -hex 32); renature-signing-key the Ed25519 key with which the rules service
# seals game records (signing.pem, docs/security.md). No Secret is committed and none is in the manifests that
# `kubectl apply -f infra/k8s/` applies, so applying them again cannot wipe a password; and
# `kubectl create` refuses a Secret that exists, so running this again changes nothing (delete
# the Secret first to rotate, docs/security.md). The values go through a private temporary file,
# never a command line (ps would show them).
set -eu
here=$(dirname "$0")
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in $(grep -o '@[A-Z_]*_PASSWORD@' "$here/../redis/users.acl" | sort -u | tr -d @); do
  printf '%s=%s\n' "$name" "$(openssl rand -hex 32)" >> "$tmp/redis-auth.env"
done
openssl genpkey -algorithm ed25519 -out "$tmp/signing.pem"
kubectl create secret generic renature-redis-auth --from-env-file="$tmp/redis-auth.env" "$@"
kubectl create secret generic renature-signing-key --from-file=signing.pem="$tmp/signing.pem" "$@"
