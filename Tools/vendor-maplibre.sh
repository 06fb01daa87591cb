#!/bin/sh
# Installs MapLibre GL JS (maplibre-gl.js, maplibre-gl.css and its licence) in DIR, taken unchanged
# from a pinned PyPI package that carries the release, checked against its SHA-256. Does nothing when
# DIR already holds that release.
#   Tools/vendor-maplibre.sh [DIR]   (default /usr/local/share/javascript/maplibre-gl)
set -eu
DIR=${1:-/usr/local/share/javascript/maplibre-gl}
RELEASE=v5.3.0
WHEEL=maplibre-0.3.6-py3-none-any.whl
SHA256=eeafab617d4a1b71c0c174c71405f67c4b4e494fe1b27968d4d2359bc160e277
PYTHON=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")/.." && pwd)

if [ -f "$DIR/maplibre-gl.js" ] && head -c 300 "$DIR/maplibre-gl.js" | grep -q "$RELEASE/LICENSE"; then
    exit 0
fi
echo "installing MapLibre GL JS $RELEASE (PyPI maplibre 0.3.6) in $DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" maplibre==0.3.6
echo "$SHA256  $tmp/$WHEEL" | sha256sum -c --quiet -
mkdir -p "$DIR"
"$PYTHON" - "$tmp/$WHEEL" "$DIR" <<'PY'
import sys, zipfile
wheel, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("maplibre-gl.js", "maplibre-gl.css"):
        with open(f"{target}/{name}", "wb") as out:
            out.write(z.read(f"maplibre/srcjs/{name}"))
PY
cp "$HERE/Deploy/third-party/maplibre-gl-js-LICENSE.txt" "$DIR/LICENSE.txt"
