// A minimal web map app on Meridian: joins as an editor, draws the shared
// points, adds one per click and drags them with the pointer.

import { MeridianClient, pageToken, serverURL } from "/dashboard/meridian.js";
import { CanvasMap, unproject } from "/dashboard/map.js";

const params = new URLSearchParams(window.location.search);
const session = params.get("session") || "demo";
const client = new MeridianClient(serverURL(), { session, name: params.get("name") || "Web example", role: pageToken() ? undefined : "editor" }); // with a token, the role it grants
const canvas = document.getElementById("map");
const map = new CanvasMap(canvas);
map.setView(0.5, 0.5, 2);
document.getElementById("title").textContent = `Web map example · ${session}`;
const say = (text) => { document.getElementById("message").textContent = text; };

map.setLayers([(m, ctx) => {
  for (const a of client.state.annotations.values()) {
    if (a.type !== "point") continue;
    const p = m.toScreen(a.coordinate.latitude, a.coordinate.longitude);
    const dragged = client.state.drags.has(a.id);
    ctx.beginPath();
    ctx.arc(p.x, p.y, 9, 0, Math.PI * 2);
    ctx.fillStyle = dragged ? "#ffb84d" : client.state.settings?.tint ?? "#007aff";
    ctx.fill();
    ctx.strokeStyle = "#fff";
    ctx.lineWidth = 2;
    ctx.stroke();
  }
}]);

client.addEventListener("status", (e) => {
  document.body.dataset.status = e.detail;
  document.getElementById("status").textContent = e.detail;
});
client.addEventListener("state", () => map.invalidate());

function coordinateAt(event) {
  const rect = canvas.getBoundingClientRect();
  const x = map.view.x + (event.clientX - rect.left - rect.width / 2) / map.scale;
  const y = map.view.y + (event.clientY - rect.top - rect.height / 2) / map.scale;
  return unproject(x, y);
}

function pointAt(event) {
  const rect = canvas.getBoundingClientRect();
  for (const a of client.state.annotations.values()) {
    if (a.type !== "point" || !a.draggable) continue;
    const p = map.toScreen(a.coordinate.latitude, a.coordinate.longitude);
    if (Math.hypot(p.x - (event.clientX - rect.left), p.y - (event.clientY - rect.top)) < 12) return a;
  }
  return null;
}

// Pointer handling before the map's own panning: a press on a point drags it.
let dragging = null;
let counter = 0;
let pressedAt = null;
canvas.addEventListener("pointerdown", async (e) => {
  pressedAt = { x: e.clientX, y: e.clientY };
  const hit = pointAt(e);
  if (!hit) return;
  e.stopImmediatePropagation();
  canvas.setPointerCapture(e.pointerId);
  dragging = { id: hit.id, moved: false };
  try { await client.request("drag", { id: hit.id, state: "starting" }); } catch (error) { say(error.message); dragging = null; }
}, { capture: true });
canvas.addEventListener("pointermove", (e) => {
  if (!dragging) return;
  e.stopImmediatePropagation();
  dragging.moved = true;
  client.request("drag", { id: dragging.id, state: "dragging", coordinate: coordinateAt(e) }).catch((error) => say(error.message));
}, { capture: true });
canvas.addEventListener("pointerup", (e) => {
  if (!dragging) return;
  e.stopImmediatePropagation();
  const { id, moved } = dragging;
  dragging = null;
  client.request("drag", moved ? { id, state: "ending", coordinate: coordinateAt(e) } : { id, state: "canceling" })
    .catch((error) => say(error.message));
}, { capture: true });
canvas.addEventListener("click", async (e) => {
  if (pointAt(e) || !pressedAt || Math.hypot(e.clientX - pressedAt.x, e.clientY - pressedAt.y) > 4) return; // a pan, not a tap
  const id = `web-${Date.now().toString(36)}-${counter++}`;
  try {
    await client.request("annotation.add", { annotation: { id, type: "point", draggable: true, title: id, coordinate: coordinateAt(e) } });
    say(`added ${id}`);
  } catch (error) { say(error.message); }
});

client.connect();
