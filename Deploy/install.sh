#!/bin/sh
# Installs a built meridian binary, its example config and docs under PREFIX.
# Used by the container build and for hosts run with systemd:
#   Deploy/install.sh PREFIX [BINARY]   (BINARY defaults to .build/release/meridian)
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 PREFIX [BINARY]" >&2
    exit 2
fi
prefix=$1
here=$(cd "$(dirname "$0")" && pwd)
binary=${2:-"$here/../.build/release/meridian"}
if [ ! -x "$binary" ]; then
    echo "$0: no executable at $binary (build with: swift build -c release --product meridian)" >&2
    exit 1
fi
install -d "$prefix/bin" "$prefix/etc/meridian" "$prefix/share/doc/meridian" "$prefix/lib/systemd/system"
install -m 0755 "$binary" "$prefix/bin/meridian"
# Keep an existing config: it is the operator's.
if [ ! -e "$prefix/etc/meridian/meridian.json" ]; then
    install -m 0644 "$here/meridian.json" "$prefix/etc/meridian/meridian.json"
fi
# The HS256 secret tokens are signed with (keep it; the identity service signs with it too).
if [ ! -e "$prefix/etc/meridian/jwt-secret" ]; then
    (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n' > "$prefix/etc/meridian/jwt-secret")
fi
install -m 0644 "$here/meridian.service" "$prefix/lib/systemd/system/meridian.service"
install -m 0644 "$here/../README.md" "$prefix/share/doc/meridian/README.md"
install -m 0644 "$here/../Protocol/SPEC.md" "$here/../Protocol/openapi.yaml" "$prefix/share/doc/meridian/"
echo "installed meridian in $prefix"
