#!/bin/sh
# Renders infra/redis/users.acl with the passwords from the environment and starts Redis.
#   render-acl.sh TEMPLATE OUTPUT -- redis-server ARGS...
# Every @..._PASSWORD@ placeholder of TEMPLATE (user rules: RULES_PASSWORD) is replaced by
# the environment variable of that name, which must be hex (openssl rand -hex 32): a missing
# or non-hex password stops the start, so Redis never runs with a placeholder or an empty
# password. OUTPUT should live on a tmpfs (an emptyDir with medium Memory).
set -eu
template=$1
output=$2
shift 2
[ "${1:-}" = "--" ] && shift
umask 077
# Redis reads no comments or blank lines in an ACL file: they stay in the template only.
sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$template" > "$output.tmp"
for name in $(grep -o '@[A-Z_]*_PASSWORD@' "$template" | sort -u | tr -d @); do
  value=$(printenv "$name" || true)
  case "$value" in
    "" | *[!0-9a-f]*) echo "render-acl: $name must be set to a hex password" >&2; exit 1 ;;
  esac
  sed -i "s/@$name@/$value/g" "$output.tmp"
done
mv "$output.tmp" "$output"
exec "$@"
