#!/usr/bin/env bash
# The Swift client library must not carry the server. Fails when
#   1. a target of the MeridianClient product's dependency graph is a server target, or
#   2. its targets do not build alone, with every import declared as a target dependency, or
#   3. an object file of that graph defines or references a server type (WebSocketServer, …).
# Usage: Tools/check-client-deps.sh (SWIFT= to use another swift).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
PRODUCT=MeridianClient
# Targets that hold the server; a client never needs them.
SERVER_TARGETS="MeridianTransport MeridianServer MeridianStorage MeridianAuth MeridianDashboard MeridianTesting"
# Types only the server transport defines (matched in mangled symbol names).
SERVER_SYMBOLS='WebSocketServer|TransportHandler|HTTPResponder|Admissions|SharedFrameLedger|ConnectionQueue'

mkdir -p .build
"$SWIFT" package describe --type json > .build/check-client-deps.json
bin=$("$SWIFT" build --show-bin-path)
# Line 1: the product's targets; then one line per Swift module of its graph: the module and
# the object file of each of its current sources (stale objects of deleted files are skipped).
graph=$(python3 - "$PRODUCT" "$SERVER_TARGETS" "$bin" <<'PY'
import json, os, sys
product, forbidden, bin = sys.argv[1], set(sys.argv[2].split()), sys.argv[3]
package = json.load(open(".build/check-client-deps.json"))
targets = {t["name"]: t for t in package["targets"]}
roots = next(p["targets"] for p in package["products"] if p["name"] == product)
seen, todo = set(), list(roots)
while todo:
    name = todo.pop()
    if name in seen or name not in targets:
        continue
    seen.add(name)
    todo.extend(targets[name].get("target_dependencies", []))
bad = sorted(seen & forbidden)
if bad:
    sys.exit(f"{product} depends on server targets: {', '.join(bad)}")
print(" ".join(roots))
for name in sorted(seen):
    target = targets[name]
    if target["module_type"] == "SwiftTarget":
        objects = [f"{bin}/{name}.build/{os.path.basename(s)}.o" for s in target["sources"]]
        print(name, " ".join(objects))
PY
)
roots=$(echo "$graph" | sed -n 1p)
echo "$PRODUCT is built from: $(echo "$graph" | sed 1d | cut -d' ' -f1 | tr '\n' ' ')"

# A library product cannot be built by name (it is "automatic"): build its root targets.
for target in $roots; do
    "$SWIFT" build --target "$target" --explicit-target-dependency-import-check error
done

found=0
while read -r module objects; do
    for object in $objects; do
        [ -f "$object" ] || { echo "missing $object" >&2; exit 1; }
    done
    if hits=$(nm $objects | grep -E "$SERVER_SYMBOLS"); then
        echo "$module holds server symbols:" >&2
        echo "$hits" | head -5 >&2
        found=1
    fi
done <<< "$(echo "$graph" | sed 1d)"
[ "$found" = 0 ] || exit 1
echo "$PRODUCT holds nothing of the server"
