// meridian.js with Leaflet: the session's annotations as Leaflet layers, marker
// drags sent as Meridian drags (starting, dragging, ending), and the others'
// presence as the dashboard shows it: each participant's viewport in their
// colour, and who drags what. No tile server needed: the offline basemap
// (Natural Earth coastlines and countries) is drawn as vector layers.

import * as L from "/vendor/leaflet/leaflet.esm.js";
import { MeridianClient, pageToken, serverURL } from "/dashboard/meridian.js";
import { unproject, viewportCorners } from "/dashboard/map.js";
import { displayColors } from "/dashboard/colors.js";

const params = new URLSearchParams(window.location.search);
const session = params.get("session") || "demo";
const client = new MeridianClient(serverURL(), { session, name: params.get("name") || "Leaflet", role: pageToken() ? undefined : "editor" }); // with a token, the role it grants
const map = L.map("map", { worldCopyJump: true }).setView([20, 0], 2);
const config = await fetch("/dashboard/config.json").then((r) => r.json()).catch(() => ({}));
if (config.tileURL) L.tileLayer(config.tileURL, { maxZoom: 19 }).addTo(map);
else addBasemap();
document.getElementById("title").textContent = `Leaflet example · ${session}`;
document.getElementById("other").href = `/dashboard/maplibre.html${window.location.search}${window.location.hash}`;
const say = (text) => { document.getElementById("message").textContent = text; };
const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/// basemap.json: rings and lines of integers in 1/100 degree, delta-encoded.
async function addBasemap() {
  const data = await fetch("/dashboard/basemap.json").then((r) => r.json()).catch(() => null);
  if (!data) return;
  const decode = (flat) => {
    const out = [];
    for (let i = 0, lon = 0, lat = 0; i < flat.length; i += 2) { lon += flat[i]; lat += flat[i + 1]; out.push([lat / data.scale, lon / data.scale]); }
    return out;
  };
  const pane = map.createPane("basemap");
  pane.style.zIndex = 250;
  L.polygon(data.countries.map((r) => [decode(r)]), { pane, interactive: false, color: css("--map-border"), weight: 0.8,
    fillColor: css("--map-land"), fillOpacity: 1 }).addTo(map);
  L.polyline(data.coastlines.map(decode), { pane, interactive: false, color: css("--map-coast"), weight: 1.2 }).addTo(map);
}

const layers = new Map(); // annotation id -> Leaflet layer
const viewports = new Map(); // participant id -> Leaflet polygon
const dragRings = new Map(); // annotation id -> Leaflet circle marker
const latLng = (c) => [c.latitude, c.longitude];
const coordinate = (ll) => ({ latitude: ll.lat, longitude: L.Util.wrapNum(ll.lng, [-180, 180], true) });
let fitted = false;

function layerFor(a) {
  const tint = client.state.settings?.tint ?? "#007aff";
  if (a.type === "point") {
    const marker = L.marker(latLng(a.coordinate), { draggable: a.draggable && a.enabled, title: a.title ?? a.id, keyboard: true, zIndexOffset: a.zIndex * 1000 });
    if (a.title) marker.bindTooltip(a.title);
    // `held`: this page's drag of it is on (until its `ending` is answered), so the session's
    // coordinate does not move it; `refused`: the server refused this drag.
    marker.on("dragstart", () => {
      marker.held = true;
      marker.refused = false;
      say("");
      client.request("drag", { id: a.id, state: "starting" }).catch((e) => refuse(marker, a.id, e));
    });
    marker.on("drag", (e) => {
      if (!marker.refused) client.request("drag", { id: a.id, state: "dragging", coordinate: coordinate(e.target.getLatLng()) }).catch(() => {});
    });
    marker.on("dragend", (e) => {
      if (marker.refused) return;
      client.request("drag", { id: a.id, state: "ending", coordinate: coordinate(e.target.getLatLng()) })
        .then(() => { marker.held = false; sync(); }, (err) => refuse(marker, a.id, err));
    });
    return marker;
  }
  const style = { color: a.strokeColor ?? tint, opacity: a.alpha, weight: a.type === "polyline" ? a.lineWidth : 2 };
  if (a.type === "polyline") return L.polyline(a.coordinates.map(latLng), style);
  return L.polygon([a.coordinates, ...a.holes].map((ring) => ring.map(latLng)),
    { ...style, fillColor: a.fillColor ?? tint, fillOpacity: a.alpha * 0.5 });
}

/// The server refused a step of this page's drag (someone else holds the annotation): the
/// marker lets go of the pointer, goes back to the server's coordinate, and the page says why.
function refuse(marker, id, error) {
  marker.refused = true;
  marker.held = false;
  if (marker.dragging?.moved()) { marker.dragging.disable(); marker.dragging.enable(); } // ends the gesture, sends nothing
  const a = client.state.annotations.get(id);
  if (a) marker.setLatLng(latLng(a.coordinate));
  const name = a?.title ?? id;
  say(error.code === "drag_conflict" && error.holder
    ? `${error.holder.name} is dragging ${name}: your drag was refused, the marker is back where the server has it.`
    : `Your drag of ${name} was refused (${error.message}); the marker is back where the server has it.`);
}

function syncAnnotations() {
  const { annotations } = client.state;
  for (const [id, layer] of layers) {
    if (!annotations.has(id)) { layer.remove(); layers.delete(id); }
  }
  for (const a of [...annotations.values()].sort((x, y) => x.zIndex - y.zIndex)) {
    let layer = layers.get(a.id);
    if (layer && layer.annotation !== a) { layer.remove(); layers.delete(a.id); layer = null; } // replaced by an update
    if (!layer) {
      layer = layerFor(a);
      layer.annotation = a;
      layer.addTo(map);
      layers.set(a.id, layer);
    } else if (a.type === "point" && !layer.held) {
      layer.setLatLng(latLng(a.coordinate)); // someone else's drag
    }
  }
}

/// The others' viewports (their camera and viewport size) and their drags, in their colours.
function syncPresence() {
  const { participants, drags } = client.state;
  const others = [...participants.values()].filter((p) => p.id !== client.state.participant);
  const colors = displayColors(others, [css("--map-water") || "#0d1b2a", css("--map-land") || "#1b2b3f"]);
  for (const [pid, polygon] of viewports) {
    const p = participants.get(pid);
    if (!p || !p.camera || !p.viewport) { polygon.remove(); viewports.delete(pid); }
  }
  for (const p of others) {
    if (!p.camera || !p.viewport) continue;
    const corners = viewportCorners(p.camera, p.viewport).map((c) => unproject(c.x, c.y)).map(latLng);
    const color = colors.get(p.id);
    let polygon = viewports.get(p.id);
    if (!polygon) {
      polygon = L.polygon(corners, { interactive: false, weight: 2.5, fillOpacity: 0.08 }).bindTooltip(p.name, { permanent: true, direction: "top" });
      polygon.addTo(map);
      viewports.set(p.id, polygon);
    } else polygon.setLatLngs(corners);
    polygon.setStyle({ color, fillColor: color });
    polygon.participant = { name: p.name, color };
  }
  for (const [id, ring] of dragRings) {
    if (!drags.has(id)) { ring.remove(); dragRings.delete(id); }
  }
  for (const [id, group] of drags) {
    const a = client.state.annotations.get(id);
    if (!a?.coordinate) continue;
    const [pid, d] = [...group.entries()].pop();
    const color = colors.get(pid) ?? "#e8590c";
    const text = `${d.state} · ${participants.get(pid)?.name ?? pid}`;
    let ring = dragRings.get(id);
    if (!ring) {
      ring = L.circleMarker(latLng(a.coordinate), { interactive: false, radius: 22, weight: 4, fill: false })
        .bindTooltip(text, { permanent: true, direction: "right", offset: [20, -20] });
      ring.addTo(map);
      dragRings.set(id, ring);
    }
    ring.setLatLng(latLng(a.coordinate));
    ring.setStyle({ color, dashArray: d.state === "starting" ? "4 4" : null });
    ring.setTooltipContent(text);
    ring.drag = { participant: pid, state: d.state, color };
  }
}

function sync() {
  syncAnnotations();
  syncPresence();
  if (!fitted && layers.size) {
    fitted = true;
    map.fitBounds(L.featureGroup([...layers.values()]).getBounds().pad(0.3), { maxZoom: 14 });
  }
}

client.addEventListener("status", (e) => {
  document.body.dataset.status = e.detail;
  document.getElementById("status").textContent = e.detail;
});
client.addEventListener("state", sync);
window.leafletExample = {
  get markers() {
    return Object.fromEntries([...layers].filter(([, l]) => l.getLatLng).map(([id, l]) => [id, { latitude: l.getLatLng().lat, longitude: l.getLatLng().lng }]));
  },
  get layerCount() { return layers.size; },
  get viewports() {
    return Object.fromEntries([...viewports].map(([pid, p]) => [pid, { ...p.participant, tooltip: p.getTooltip().getContent(),
      corners: p.getLatLngs()[0].map((ll) => ({ latitude: ll.lat, longitude: ll.lng })) }]));
  },
  get drags() {
    return Object.fromEntries([...dragRings].map(([id, r]) => [id, { ...r.drag, label: r.getTooltip().getContent() }]));
  },
  get message() { return document.getElementById("message").textContent; },
  /// The centre of a marker's icon on the screen (CSS pixels of the viewport), or null.
  screen(id) {
    const icon = layers.get(id)?.getElement?.();
    if (!icon) return null;
    const r = icon.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  },
};
client.connect();
