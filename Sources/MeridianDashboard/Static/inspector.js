// Inspecting an annotation: finding the one under the pointer (topmost first, as
// every client's tap propagation does), and the panel that shows its id, style,
// metadata, who selected or drags it, and its history: who moved it, and when.

import { el, clock } from "/dashboard/ui.js";
import { changeName } from "/dashboard/history.js";

function segmentDistance(p, a, b) {
  const dx = b.x - a.x, dy = b.y - a.y;
  const t = dx === 0 && dy === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

function inside(p, ring) {
  let odd = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const a = ring[i], b = ring[j];
    if ((a.y > p.y) !== (b.y > p.y) && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) odd = !odd;
  }
  return odd;
}

/// The id of the topmost annotation at `at` (canvas pixels), or null.
export function hitTest(map, state, stacking, at, scale = 1, slop = 0) {
  if (!at) return null;
  const dense = state.annotations.size > 1500;
  for (let i = stacking.length - 1; i >= 0; i--) {
    const a = stacking[i];
    if (a.type === "point") {
      const p = map.toScreen(a.coordinate.latitude, a.coordinate.longitude);
      const x = p.x + (a.centerOffset?.dx ?? 0), y = p.y + (a.centerOffset?.dy ?? 0);
      const hit = dense && !state.drags.has(a.id)
        ? Math.hypot(at.x - x, at.y - y) <= 6 + slop
        : Math.hypot(at.x - x, at.y - (y - (a.image ? 0 : 15 * scale))) <= 13 * scale + slop;
      if (hit) return a.id;
      continue;
    }
    const ring = a.coordinates.map((c) => map.toScreen(c.latitude, c.longitude));
    const width = a.type === "polyline" ? (a.lineWidth ?? 3) / 2 + 5 : 6;
    const closed = a.type === "polygon" ? [...ring, ring[0]] : ring;
    for (let k = 1; k < closed.length; k++) if (segmentDistance(at, closed[k - 1], closed[k]) <= width + slop) return a.id;
    if (a.type === "polygon" && inside(at, ring) && !(a.holes ?? []).some((h) => inside(at, h.map((c) => map.toScreen(c.latitude, c.longitude))))) {
      return a.id;
    }
  }
  return null;
}

/// What the log says happened to annotation `id`, newest first: {time, text}.
export function annotationHistory(history, id, name) {
  const out = [];
  for (let i = history.items.length - 1; i >= 0 && out.length < 30; i--) {
    const { time, event: m } = history.items[i];
    const at = (c) => `${c.latitude.toFixed(5)}, ${c.longitude.toFixed(5)}`;
    let text = null;
    if (m.type === "annotation.added" && m.annotation.id === id) text = `added${m.annotation.coordinate ? ` at ${at(m.annotation.coordinate)}` : ""}`;
    else if (m.type === "annotation.updated" && m.annotation.id === id) text = `updated${m.annotation.coordinate ? ` (now at ${at(m.annotation.coordinate)})` : ""}`;
    else if (m.type === "annotation.removed" && m.id === id) text = "removed";
    else if ((m.type === "change.undone" || m.type === "change.redone") && m.annotation === id) {
      text = `${name(m.participant)} ${m.type === "change.undone" ? "undid" : "redid"} ${changeName(m.change)} it`;
    }
    else if (m.type === "drag" && m.id === id) {
      const who = name(m.participant);
      if (m.state === "none") {
        // The drag's outcome: look back for how it ended.
        const before = history.items.slice(0, i).reverse().find((x) => x.event.type === "drag" && x.event.id === id && x.event.participant === m.participant);
        text = before?.event.state === "ending" ? `${who} moved it to ${at(m.coordinate)}` : `${who}'s drag was undone${m.reason ? ` (${m.reason.replace("_", " ")})` : ""}, back at ${at(m.coordinate)}`;
      } else if (m.state === "starting") text = `${who} started dragging it`;
      else if (m.state === "canceling") text = `${who} canceled dragging it${m.reason ? ` (${m.reason.replace("_", " ")})` : ""}`;
    } else if (m.type === "drag.refused" && m.id === id) text = `${name(m.participant)} was refused: ${m.holder ? name(m.holder) : "someone"} held it`;
    else if (m.type === "selection" && m.annotation === id) text = `${name(m.participant)} selected it`;
    if (text) out.push({ time, text });
  }
  return out;
}

/// Fills `body` with what is known of annotation `id` (`a`: its current value, or
/// null once removed, or while it is outside what the map holds: `missing` says
/// which); returns the same facts for the page's test view.
export function renderInspector(body, id, a, { state, history, name, colorOf, missing = "removed" }) {
  const facts = [];
  if (a) {
    facts.push(["Id", a.id], ["Type", a.type]);
    if (a.title) facts.push(["Title", a.title]);
    if (a.subtitle) facts.push(["Subtitle", a.subtitle]);
    if (a.kind) facts.push(["Kind", a.kind]);
    facts.push(["Stacking (zIndex)", String(a.zIndex)], ["Enabled", a.enabled === false ? "no" : "yes"]);
    if (a.type === "point") {
      facts.push(["Coordinate", `${a.coordinate.latitude.toFixed(6)}, ${a.coordinate.longitude.toFixed(6)}`],
        ["Draggable", a.draggable ? "yes" : "no"], ["Callout", a.canShowCallout ? "can show" : "no"]);
      if (a.image) facts.push(["Image", a.image]);
    } else {
      facts.push(["Vertices", String(a.coordinates.length)], ["Stroke", a.strokeColor ?? `tint (${state.settings?.tint ?? "?"})`],
        ["Alpha", String(a.alpha ?? 1)]);
      if (a.type === "polyline") facts.push(["Line width", String(a.lineWidth ?? 3)]);
      else facts.push(["Fill", a.fillColor ?? `tint (${state.settings?.tint ?? "?"})`], ["Holes", String((a.holes ?? []).length)]);
    }
  } else {
    facts.push(["Id", id], ["Status", missing]);
  }
  const selectedBy = [...state.participants.values()].filter((p) => p.selection === id);
  const draggedBy = [...(state.drags.get(id) ?? new Map())];
  facts.push(["Selected by", selectedBy.length ? selectedBy.map((p) => p.name).join(", ") : "nobody"],
    ["Dragged by", draggedBy.length ? draggedBy.map(([pid, d]) => `${name(pid)} (${d.state})`).join(", ") : "nobody"]);
  const past = annotationHistory(history, id, name);
  const metadata = a && a.metadata && Object.keys(a.metadata).length ? JSON.stringify(a.metadata, null, 2) : null;
  body.replaceChildren(
    el("dl", {}, ...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
    ...(metadata ? [el("h3", {}, "Metadata"), el("pre", {}, metadata)] : []),
    el("h3", {}, "History (newest first)"),
    past.length
      ? el("ol", {}, ...past.map((h) => el("li", {}, el("time", { dateTime: new Date(h.time).toISOString() }, clock(h.time)), ` ${h.text}`)))
      : el("p", { className: "muted" }, history.loaded ? "Nothing logged." : "Loading the event log…"),
  );
  for (const p of selectedBy) colorOf(p.id);
  return { id, facts: Object.fromEntries(facts), metadata: a?.metadata ?? null, history: past.map((h) => h.text), removed: !a && missing === "removed" };
}
