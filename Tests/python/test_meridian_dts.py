"""meridian.d.ts against meridian.js: TypeScript (Debian's node-typescript, `tsc`) compiles
an app written against the declarations with --strict, and the declarations name exactly
what the module has: every export, every public method of each exported class (read from
the real module in node), and the instance properties a new instance holds. A method or
export added to the module without a declaration fails this test, and so does a declaration
of something the module does not have."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "Sources" / "MeridianDashboard" / "Static"
MODULE = STATIC / "meridian.js"
DECLARATIONS = STATIC / "meridian.d.ts"
TYPESCRIPT = Path("/usr/share/nodejs/typescript")


@pytest.fixture(autouse=True)
def typescript():
    """node and Debian's node-typescript: missing, the tests fail (they are not skipped)."""
    assert shutil.which("node") and shutil.which("tsc") and TYPESCRIPT.exists(), \
        "needs node and Debian's node-typescript (tsc): run `make test-deps`"


# An app as one is written against the module: joining, reacting to drags and refusals,
# requests with their fields, the state's maps. The `@ts-expect-error` lines must be errors:
# they fail the compile if the declarations were too loose (`any`) to catch them.
APP = """
import {
  MeridianClient, MeridianError, MeridianOverview, SUBPROTOCOL, applyEvent, emptyState, pageToken,
  serverURL, stateFromSnapshot, withToken,
  type Annotation, type Coordinate, type SessionEvent, type SessionState,
} from "./meridian.js";

const url: string = withToken(serverURL(), pageToken());
const protocol: "meridian.v1" = SUBPROTOCOL;
const client = new MeridianClient(url, { session: "demo", name: "Web", role: "editor" });
const markers = new Map<string, Coordinate>();

client.addEventListener("status", (e) => { const status: string = e.detail; document.title = status; });
client.addEventListener("state", () => {
  const s: SessionState = client.state;
  for (const a of s.annotations.values()) if (a.type === "point") markers.set(a.id, a.coordinate);
  for (const [id, group] of s.drags) for (const [participant, d] of group) console.log(id, participant, d.state, d.coordinate.latitude);
});
client.addEventListener("event", (e) => {
  const m = e.detail;
  if (m.type === "drag" && m.state === "dragging") markers.set(m.id, m.coordinate);
  if (m.type === "drag.refused") console.log(m.holder);
});
client.addEventListener("welcome", (e) => { if (!e.detail.resumed) console.log(e.detail.snapshot?.annotations.length); });
client.connect();

async function drag(id: string, to: Coordinate): Promise<void> {
  try {
    await client.request("drag", { id, state: "starting" });
    await client.request("drag", { id, state: "dragging", coordinate: to });
    const ack = await client.request("drag", { id, state: "ending", coordinate: to });
    const seq: number = ack.seq;
    console.log(seq);
  } catch (e) {
    if (e instanceof MeridianError && e.code === "drag_conflict") console.log(`${e.holder?.name} holds ${id}`);
  }
}

async function edit(): Promise<void> {
  await client.request("annotation.add", { annotation: { id: "a", type: "point", coordinate: { latitude: 1, longitude: 2 }, draggable: true } });
  await client.requestIfUnchanged("annotation.update", { id: "a", changes: { title: "Quay", subtitle: null } });
  await client.request("camera.end", { camera: { center: { latitude: 0, longitude: 0 }, zoom: 3 }, viewport: { width: 390, height: 844 } });
  await client.request("ping");
  await client.undo();
  const revision: number | undefined = client.revisionOf("a");
  console.log(revision, client.status, client.socket?.readyState, client.join.session);
  client.join.interest = { mode: "viewport", margin: 0.5 };
}

const replay: SessionState = emptyState();
const events: SessionEvent[] = [];
for (const m of events) applyEvent(replay, m);
const again = stateFromSnapshot({ seq: 1, settings: { styleURL: "", tint: "#007aff", dragPolicy: "exclusive", leaseTimeoutMs: 10000,
  constraints: { policy: "clamp" } }, annotations: [], participants: [], sharedCamera: null, cameraLease: null, callout: null,
  calloutBy: null, drags: [] }, { session: "demo" });
const first: Annotation | undefined = again.annotations.get("a");
const overview = new MeridianOverview(url);
overview.addEventListener("overview", (e) => { for (const s of e.detail.sessions) console.log(s.session, s.participants); });
overview.connect();
client.close();
console.log(protocol, drag, edit, first);

// @ts-expect-error an unknown request type
client.request("annotation.move", { id: "a" });
// @ts-expect-error a drag without its annotation id
client.request("drag", { state: "starting" });
// @ts-expect-error a drag state a client never sends
client.request("drag", { id: "a", state: "none" });
// @ts-expect-error the state is a mirror of typed maps
const wrong: number = client.state.annotations;
// @ts-expect-error status is one of the connection's states
client.addEventListener("status", (e) => { const n: number = e.detail; console.log(n); });
// @ts-expect-error a session is needed to join
new MeridianClient(url, { name: "Web" });
// @ts-expect-error not a method of the module
client.send("ping");
console.log(wrong);
"""

# Prints what the module has (imported in node) and what the declarations declare (read with
# the TypeScript compiler API) as JSON.
INSPECT = r"""
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [modulePath, declarationsPath, typescriptPath] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const ts = require(typescriptPath);

const builtins = [Object.prototype, EventTarget.prototype, Error.prototype, Function.prototype];
const mod = await import(pathToFileURL(modulePath).href);
const runtime = { exports: {}, classes: {}, assigned: [] };
for (const m of readFileSync(modulePath, "utf8").matchAll(/this\.([A-Za-z$][\w$]*)\s*=(?!=)/g)) runtime.assigned.push(m[1]);
for (const [name, value] of Object.entries(mod)) {
  const isClass = typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value));
  runtime.exports[name] = isClass ? "class" : typeof value === "function" ? "function" : "value";
  if (!isClass) continue;
  const own = [], all = [];
  for (let p = value.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const key of Object.getOwnPropertyNames(p)) {
      if (key === "constructor" || typeof Object.getOwnPropertyDescriptor(p, key).value !== "function") continue;
      all.push(key);
      if (!builtins.includes(p) && !key.startsWith("_")) own.push(key);
    }
  }
  const statics = Object.getOwnPropertyNames(value).filter((k) => !["length", "name", "prototype"].includes(k) && !k.startsWith("_"));
  let properties = null, error = null;
  try {
    // Every class of the module takes a URL and an options object (MeridianError reads what it needs from either).
    properties = Object.getOwnPropertyNames(new value("ws://127.0.0.1:9/", { session: "s", code: "c", message: "m" }))
      .filter((k) => !k.startsWith("_"));
  } catch (e) { error = String(e); }
  runtime.classes[name] = { methods: own, allMethods: all, statics, properties, error };
}

const program = ts.createProgram([declarationsPath], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts"] });
const checker = program.getTypeChecker();
const file = program.getSourceFile(declarationsPath);
const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
const declared = { exports: {}, classes: {}, diagnostics };
const F = ts.SymbolFlags;
for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(file))) {
  const f = symbol.flags;
  const kind = f & F.Class ? "class" : f & F.Function ? "function" : f & F.Variable ? "value" : "type";
  declared.exports[symbol.name] = kind;
  if (kind !== "class") continue;
  const members = [];
  for (const p of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
    const decls = p.declarations ?? [];
    const flags = decls.length ? ts.getCombinedModifierFlags(decls[0]) : 0;
    members.push({ name: p.name, method: Boolean(p.flags & F.Method), here: decls.some((d) => d.getSourceFile() === file),
      visibility: flags & ts.ModifierFlags.Private ? "private" : flags & ts.ModifierFlags.Protected ? "protected" : "public" });
  }
  const statics = checker.getPropertiesOfType(checker.getTypeOfSymbolAtLocation(symbol, file))
    .map((p) => p.name).filter((n) => n !== "prototype");
  declared.classes[symbol.name] = { members, statics };
}
console.log(JSON.stringify({ runtime, declared }));
"""


def inspect(tmp_path, module_text=None, declarations_text=None):
    """(runtime, declared) for a copy of the module (as .mjs: node imports it as an ES module)
    and of the declarations, optionally with other text."""
    module = tmp_path / "meridian.mjs"
    module.write_text(module_text if module_text is not None else MODULE.read_text())
    declarations = tmp_path / "meridian.d.ts"
    declarations.write_text(declarations_text if declarations_text is not None else DECLARATIONS.read_text())
    script = tmp_path / "inspect.mjs"
    script.write_text(INSPECT)
    done = subprocess.run(["node", str(script), str(module), str(declarations), str(TYPESCRIPT)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    return result["runtime"], result["declared"]


def differences(runtime, declared):
    """Everything in which the declarations and the module disagree, one line each."""
    found = [f"declarations do not compile: {d}" for d in declared["diagnostics"]]
    values = {name: kind for name, kind in declared["exports"].items() if kind != "type"}
    for name, kind in runtime["exports"].items():
        if name not in values:
            found.append(f"export {name} ({kind}) is not declared")
        elif values[name] != kind:
            found.append(f"export {name} is a {kind} but declared as a {values[name]}")
    found += [f"declared export {name} is not in the module" for name in values if name not in runtime["exports"]]
    for name, cls in runtime["classes"].items():
        d = declared["classes"].get(name)
        if d is None:
            continue  # reported above
        public_methods = {m["name"] for m in d["members"] if m["method"] and m["visibility"] == "public"}
        members = {m["name"]: m for m in d["members"]}
        found += [f"{name}.{m}() is not declared" for m in cls["methods"] if m not in public_methods]
        found += [f"declared method {name}.{m['name']}() is not in the module" for m in d["members"]
                  if m["method"] and m["here"] and m["name"] not in cls["allMethods"]]
        found += [f"static {name}.{s} is not declared" for s in cls["statics"] if s not in d["statics"]]
        found += [f"declared static {name}.{s} is not in the module" for s in d["statics"] if s not in cls["statics"]]
        if cls["error"]:
            found.append(f"new {name}(…) failed: {cls['error']}")
            continue
        found += [f"property {name}.{p} is not declared" for p in cls["properties"]
                  if p not in members or members[p]["method"]]
        found += [f"declared property {name}.{m['name']} is not in the module" for m in d["members"]
                  if not m["method"] and m["here"] and m["name"] not in cls["properties"] and m["name"] not in runtime["assigned"]]
    return found


def test_an_app_written_against_the_declarations_compiles_with_strict(tmp_path):
    shutil.copy(DECLARATIONS, tmp_path / "meridian.d.ts")
    (tmp_path / "app.ts").write_text(APP)
    done = subprocess.run(["tsc", "--strict", "--noEmit", "--target", "es2022", "--module", "es2022",
                           "--moduleResolution", "node", "--lib", "es2022,dom", "app.ts"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_declarations_name_exactly_what_the_module_has(tmp_path):
    runtime, declared = inspect(tmp_path)
    # The inspection saw the module's API (a sanity check of the inspection itself).
    assert runtime["exports"]["MeridianClient"] == "class" and runtime["exports"]["applyEvent"] == "function"
    assert {"connect", "close", "request", "revisionOf", "requestIfUnchanged", "undo", "redo"} <= set(runtime["classes"]["MeridianClient"]["methods"])
    assert {"state", "join", "status"} <= set(runtime["classes"]["MeridianClient"]["properties"])
    assert differences(runtime, declared) == []


def test_a_method_or_export_added_without_a_declaration_is_found(tmp_path):
    source = MODULE.read_text()
    marker = "  undo() { return this.request(\"undo\"); }"
    assert marker in source
    changed = source.replace(marker, marker + "\n  resend() { return null; }") + "\nexport function describe() {}\n"
    runtime, declared = inspect(tmp_path, module_text=changed)
    assert differences(runtime, declared) == ["export describe (function) is not declared",
                                              "MeridianClient.resend() is not declared"]


def test_a_declaration_the_module_does_not_have_is_found(tmp_path):
    text = DECLARATIONS.read_text()
    marker = "  redo(): Promise<Ack>;"
    assert marker in text
    changed = re.sub(re.escape(marker), marker + "\n  replay(): void;\n  paused: boolean;", text) \
        + "\nexport declare function describe(): string;\n"
    runtime, declared = inspect(tmp_path, declarations_text=changed)
    assert differences(runtime, declared) == ["declared export describe is not in the module",
                                              "declared method MeridianClient.replay() is not in the module",
                                              "declared property MeridianClient.paused is not in the module"]
