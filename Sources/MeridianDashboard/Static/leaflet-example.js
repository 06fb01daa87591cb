// meridian.js with Leaflet: the session's annotations as Leaflet layers, marker
// drags sent as Meridian drags (starting, dragging, ending).

import * as L from "/vendor/leaflet/leaflet.esm.js";
import { MeridianClient, pageToken, serverURL } from "/dashboard/meridian.js";

const params = new URLSearchParams(window.location.search);
const session = params.get("session") || "demo";
const client = new MeridianClient(serverURL(), { session, name: params.get("name") || "Leaflet", role: pageToken() ? undefined : "editor" }); // with a token, the role it grants
const map = L.map("map", { worldCopyJump: true }).setView([20, 0], 2);
const config = await fetch("/dashboard/config.json").then((r) => r.json()).catch(() => ({}));
if (config.tileURL) L.tileLayer(config.tileURL, { maxZoom: 19 }).addTo(map);
document.getElementById("title").textContent = `Leaflet example · ${session}`;
const say = (text) => { document.getElementById("message").textContent = text; };

const layers = new Map(); // annotation id -> Leaflet layer
const latLng = (c) => [c.latitude, c.longitude];
const coordinate = (ll) => ({ latitude: ll.lat, longitude: L.Util.wrapNum(ll.lng, [-180, 180], true) });
let fitted = false;

function layerFor(a) {
  const tint = client.state.settings?.tint ?? "#007aff";
  if (a.type === "point") {
    const marker = L.marker(latLng(a.coordinate), { draggable: a.draggable && a.enabled, title: a.title ?? a.id, keyboard: true, zIndexOffset: a.zIndex * 1000 });
    if (a.title) marker.bindTooltip(a.title);
    marker.on("dragstart", () => client.request("drag", { id: a.id, state: "starting" }).catch((e) => say(e.message)));
    marker.on("drag", (e) => client.request("drag", { id: a.id, state: "dragging", coordinate: coordinate(e.target.getLatLng()) }).catch(() => {}));
    marker.on("dragend", (e) => client.request("drag", { id: a.id, state: "ending", coordinate: coordinate(e.target.getLatLng()) }).catch((err) => say(err.message)));
    return marker;
  }
  const style = { color: a.strokeColor ?? tint, opacity: a.alpha, weight: a.type === "polyline" ? a.lineWidth : 2 };
  if (a.type === "polyline") return L.polyline(a.coordinates.map(latLng), style);
  return L.polygon([a.coordinates, ...a.holes].map((ring) => ring.map(latLng)),
    { ...style, fillColor: a.fillColor ?? tint, fillOpacity: a.alpha * 0.5 });
}

function sync() {
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
    } else if (a.type === "point" && !layer.dragging?.moved()) {
      layer.setLatLng(latLng(a.coordinate)); // someone else's drag
    }
  }
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
};
client.connect();
