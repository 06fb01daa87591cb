// meridian.js with OpenLayers 2 (the global `OpenLayers` of Debian's libjs-openlayers,
// loaded by openlayers.html before this module): the session's annotations as vector
// features, a dragged marker sent as a Meridian drag (starting, dragging at most once
// an animation frame, ending), and the others' presence as the dashboard shows it:
// each participant's viewport in their colour, and who drags what. A drag the server
// refuses (someone else holds the annotation) puts the marker back where the server
// has it and says why. No tile server needed: the offline basemap (Natural Earth
// coastlines and countries) is drawn as a vector base layer.

import { MeridianClient, pageToken, serverURL } from "/dashboard/meridian.js";
import { unproject, viewportCorners } from "/dashboard/map.js";
import { displayColors } from "/dashboard/colors.js";

const OL = window.OpenLayers;
const params = new URLSearchParams(window.location.search);
const session = params.get("session") || "demo";
const client = new MeridianClient(serverURL(), { session, name: params.get("name") || "OpenLayers", role: pageToken() ? undefined : "editor" }); // with a token, the role it grants
const geographic = new OL.Projection("EPSG:4326");
const mercator = new OL.Projection("EPSG:900913");
const HALF_WORLD = 20037508.342789244;
const map = new OL.Map("map", {
  projection: mercator, displayProjection: geographic, units: "m", theme: null,
  maxExtent: new OL.Bounds(-HALF_WORLD, -HALF_WORLD, HALF_WORLD, HALF_WORLD),
  maxResolution: 156543.03392804097, numZoomLevels: 20, // zoom z: the world is 256 · 2^z pixels wide, as in SPEC §8.2
  controls: [new OL.Control.Navigation(), new OL.Control.Zoom()],
});
const config = await fetch("/dashboard/config.json").then((r) => r.json()).catch(() => ({}));
const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
if (config.tileURL) {
  // Leaflet-style `{z}/{x}/{y}` templates become OpenLayers' `${z}/${x}/${y}`.
  map.addLayer(new OL.Layer.XYZ("Tiles", config.tileURL.replace("{s}", "a").replace(/\{([xyz])\}/g, "${$1}"),
    { sphericalMercator: true, wrapDateLine: true }));
} else {
  // Canvas: SVG leaves out a polygon whose points are all far off screen (a country seen from close by).
  const basemap = new OL.Layer.Vector("Basemap", { isBaseLayer: true, renderers: ["Canvas", "SVG"] });
  map.addLayer(basemap);
  addBasemap(basemap);
}
const viewportLayer = new OL.Layer.Vector("Viewports");
const dragLayer = new OL.Layer.Vector("Drags");
const annotationLayer = new OL.Layer.Vector("Annotations", { rendererOptions: { zIndexing: true } });
map.addLayers([viewportLayer, dragLayer, annotationLayer]); // the annotations on top: they get the pointer
map.setCenter(lonLat({ latitude: 20, longitude: 0 }), 2);
document.getElementById("title").textContent = `OpenLayers example · ${session}`;
document.getElementById("other").href = `/dashboard/leaflet.html${window.location.search}${window.location.hash}`;
const say = (text) => { document.getElementById("message").textContent = text; };

function point(c) { return new OL.Geometry.Point(c.longitude, c.latitude).transform(geographic, mercator); }
function lonLat(c) { return new OL.LonLat(c.longitude, c.latitude).transform(geographic, mercator); }
const wrap = (lon) => (lon >= -180 && lon <= 180 ? lon : ((((lon + 180) % 360) + 360) % 360) - 180);
/// The coordinate of a point geometry in map units.
function coordinate(geometry) {
  const p = geometry.clone().transform(mercator, geographic);
  return { latitude: p.y, longitude: wrap(p.x) };
}

/// basemap.json: rings and lines of integers in 1/100 degree, delta-encoded.
async function addBasemap(layer) {
  const data = await fetch("/dashboard/basemap.json").then((r) => r.json()).catch(() => null);
  if (!data) return;
  const decode = (flat) => {
    const out = [];
    for (let i = 0, lon = 0, lat = 0; i < flat.length; i += 2) {
      lon += flat[i]; lat += flat[i + 1];
      out.push(point({ latitude: Math.max(-85, Math.min(85, lat / data.scale)), longitude: lon / data.scale }));
    }
    return out;
  };
  const countries = new OL.Geometry.MultiPolygon(data.countries.map((r) => new OL.Geometry.Polygon([new OL.Geometry.LinearRing(decode(r))])));
  const coasts = new OL.Geometry.MultiLineString(data.coastlines.map((l) => new OL.Geometry.LineString(decode(l))));
  layer.addFeatures([
    new OL.Feature.Vector(countries, null, { fillColor: css("--map-land"), fillOpacity: 1, strokeColor: css("--map-border"), strokeWidth: 0.8 }),
    new OL.Feature.Vector(coasts, null, { strokeColor: css("--map-coast"), strokeWidth: 1.2, fill: false }),
  ]);
}

const features = new Map(); // annotation id -> OpenLayers feature
const viewports = new Map(); // participant id -> polygon feature
const rings = new Map(); // annotation id -> ring feature around what someone else drags
let fitted = false;

function geometryFor(a) {
  if (a.type === "point") return point(a.coordinate);
  if (a.type === "polyline") return new OL.Geometry.LineString(a.coordinates.map(point));
  return new OL.Geometry.Polygon([a.coordinates, ...a.holes].map((ring) => new OL.Geometry.LinearRing(ring.map(point))));
}

function styleFor(a) {
  const tint = client.state.settings?.tint ?? "#007aff";
  if (a.type === "point") {
    return { externalGraphic: "/vendor/openlayers/img/marker.png", graphicWidth: 21, graphicHeight: 25, graphicXOffset: -10.5,
      graphicYOffset: -25, graphicZIndex: a.zIndex, graphicTitle: a.title ?? a.id, cursor: draggable(a) ? "move" : "default" };
  }
  const stroke = { strokeColor: a.strokeColor ?? tint, strokeOpacity: a.alpha, graphicZIndex: a.zIndex };
  if (a.type === "polyline") return { ...stroke, strokeWidth: a.lineWidth, fill: false };
  return { ...stroke, strokeWidth: 2, fillColor: a.fillColor ?? tint, fillOpacity: a.alpha * 0.5 };
}

const draggable = (a) => a.type === "point" && a.draggable && a.enabled;

/// Puts a point feature at a coordinate (when it is not there yet).
function place(feature, c) {
  const target = point(c), g = feature.geometry;
  if (g.x === target.x && g.y === target.y) return;
  g.x = target.x; g.y = target.y;
  g.clearBounds();
  annotationLayer.drawFeature(feature);
}

// --- This page's drags -------------------------------------------------------------------------

/// The drag in progress here: {id, feature, started, moved, pending, frame, refused, released}.
let gesture = null;

function send(g, state, c) {
  return client.request("drag", { id: g.id, state, ...(c ? { coordinate: c } : {}) });
}

/// The server refused a step of this page's drag: the marker goes back to the server's
/// coordinate (and stays there while the pointer is still down) and the page says why.
function refuse(g, error) {
  g.refused = true;
  cancelAnimationFrame(g.frame);
  const a = client.state.annotations.get(g.id);
  if (a && features.get(g.id) === g.feature) place(g.feature, a.coordinate);
  const name = a?.title ?? g.id;
  say(error.code === "drag_conflict" && error.holder
    ? `${error.holder.name} is dragging ${name}: your drag was refused, the marker is back where the server has it.`
    : `Your drag of ${name} was refused (${error.message}); the marker is back where the server has it.`);
  if (g.released && gesture === g) gesture = null;
}

/// Sends the newest position of the pointer once an animation frame, not once a mousemove.
function flush(g) {
  g.frame = 0;
  if (g.refused || !g.pending) return;
  const c = g.pending;
  g.pending = null;
  g.moved = true;
  send(g, "dragging", c).catch(() => {}); // refused only after `starting` was: that refusal is shown
}

const dragControl = new OL.Control.DragFeature(annotationLayer, {
  geometryTypes: ["OpenLayers.Geometry.Point"],
  featureCallbacks: {
    over(feature) { // only draggable points can be taken
      if (feature.annotation && draggable(feature.annotation)) return OL.Control.DragFeature.prototype.overFeature.call(this, feature);
      return false;
    },
  },
  onStart(feature) {
    gesture = { id: feature.annotation.id, feature, started: false, moved: false, pending: null, frame: 0, refused: false, released: false };
  },
  onDrag(feature) {
    const g = gesture;
    if (!g || g.feature !== feature) return;
    if (g.refused) { // held by someone else: the marker stays at the server's coordinate
      const a = client.state.annotations.get(g.id);
      if (a) place(feature, a.coordinate);
      return;
    }
    if (!g.started) {
      g.started = true;
      say("");
      send(g, "starting").catch((e) => refuse(g, e));
    }
    g.pending = coordinate(feature.geometry);
    if (!g.frame) g.frame = requestAnimationFrame(() => flush(g));
  },
  onComplete(feature) {
    const g = gesture;
    if (!g || g.feature !== feature) return;
    g.released = true;
    cancelAnimationFrame(g.frame);
    if (g.refused || !g.started) { gesture = null; sync(); return; }
    const last = coordinate(feature.geometry);
    if (!g.moved || g.pending) send(g, "dragging", last).catch(() => {}); // a drag ends only after a move
    g.pending = null;
    send(g, "ending", last).then(() => {
      if (gesture === g) { gesture = null; sync(); }
    }, (e) => refuse(g, e));
  },
});
map.addControl(dragControl);
dragControl.activate();

// --- The session, drawn --------------------------------------------------------------------------

function syncAnnotations() {
  const { annotations } = client.state;
  for (const [id, feature] of features) {
    if (!annotations.has(id)) { annotationLayer.destroyFeatures([feature]); features.delete(id); }
  }
  const added = [];
  for (const a of annotations.values()) {
    let feature = features.get(a.id);
    if (!feature) {
      feature = new OL.Feature.Vector(geometryFor(a), { id: a.id }, styleFor(a));
      feature.annotation = a;
      features.set(a.id, feature);
      added.push(feature);
      continue;
    }
    if (feature.annotation !== a) { // replaced by an update
      annotationLayer.eraseFeatures([feature]);
      if (a.type !== "point") feature.geometry = geometryFor(a);
      feature.style = styleFor(a);
      feature.annotation = a;
      annotationLayer.drawFeature(feature);
    }
    const mine = gesture && !gesture.refused && gesture.feature === feature;
    if (a.type === "point" && !mine) place(feature, a.coordinate); // where the server has it, someone's drag included
  }
  if (added.length) annotationLayer.addFeatures(added);
}

/// The others' viewports (their camera and viewport size) and their drags, in their colours.
function syncPresence() {
  const { participants, drags } = client.state;
  const others = [...participants.values()].filter((p) => p.id !== client.state.participant);
  const colors = displayColors(others, [css("--map-water") || "#0d1b2a", css("--map-land") || "#1b2b3f"]);
  for (const [pid, feature] of viewports) {
    const p = participants.get(pid);
    if (!p || !p.camera || !p.viewport) { viewportLayer.destroyFeatures([feature, feature.nameTag]); viewports.delete(pid); }
  }
  for (const p of others) {
    if (!p.camera || !p.viewport) continue;
    const corners = viewportCorners(p.camera, p.viewport).map((c) => unproject(c.x, c.y));
    const color = colors.get(p.id);
    const old = viewports.get(p.id);
    if (old && JSON.stringify(old.participant) === JSON.stringify({ name: p.name, color, corners })) continue;
    if (old) viewportLayer.destroyFeatures([old, old.nameTag]);
    const feature = new OL.Feature.Vector(new OL.Geometry.Polygon([new OL.Geometry.LinearRing(corners.map(point))]), null, {
      strokeColor: color, strokeWidth: 2.5, fillColor: color, fillOpacity: 0.08 });
    // The name above the middle of the viewport's top edge.
    const top = { latitude: (corners[0].latitude + corners[1].latitude) / 2, longitude: (corners[0].longitude + corners[1].longitude) / 2 };
    feature.nameTag = new OL.Feature.Vector(point(top), null, { pointRadius: 0, label: p.name, labelAlign: "cb", labelYOffset: 6,
      fontColor: color, fontWeight: "bold", labelOutlineColor: css("--map-water") || "#0d1b2a", labelOutlineWidth: 3 });
    feature.participant = { name: p.name, color, corners };
    viewportLayer.addFeatures([feature, feature.nameTag]);
    viewports.set(p.id, feature);
  }
  for (const [id, ring] of rings) {
    if (!drags.has(id)) { dragLayer.destroyFeatures([ring]); rings.delete(id); }
  }
  for (const [id, group] of drags) {
    const a = client.state.annotations.get(id);
    if (!a?.coordinate) continue;
    const [pid, d] = [...group.entries()].pop();
    if (pid === client.state.participant) { // this page's own drag: the marker under the pointer says it all
      const ring = rings.get(id);
      if (ring) { dragLayer.destroyFeatures([ring]); rings.delete(id); }
      continue;
    }
    const color = colors.get(pid) ?? "#e8590c";
    const label = `${d.state} · ${participants.get(pid)?.name ?? pid}`;
    let ring = rings.get(id);
    if (!ring) {
      ring = new OL.Feature.Vector(point(a.coordinate));
      dragLayer.addFeatures([ring]);
      rings.set(id, ring);
    }
    ring.style = { pointRadius: 22, fill: false, strokeColor: color, strokeWidth: 4, strokeDashstyle: d.state === "starting" ? "dash" : "solid",
      label, fontColor: color, fontWeight: "bold", labelAlign: "lb", labelXOffset: 20, labelYOffset: 20,
      labelOutlineColor: css("--map-water") || "#0d1b2a", labelOutlineWidth: 3 };
    const at = point(a.coordinate);
    ring.geometry.x = at.x; ring.geometry.y = at.y;
    ring.geometry.clearBounds();
    dragLayer.drawFeature(ring);
    ring.drag = { participant: pid, state: d.state, color, label };
  }
}

function sync() {
  syncAnnotations();
  syncPresence();
  if (!fitted && features.size) {
    fitted = true;
    const extent = annotationLayer.getDataExtent().scale(1.6);
    map.setCenter(extent.getCenterLonLat(), Math.min(map.getZoomForExtent(extent), 14)); // at once: zoomTo would animate
  }
}

client.addEventListener("status", (e) => {
  document.body.dataset.status = e.detail;
  document.getElementById("status").textContent = e.detail;
});
client.addEventListener("state", sync);

/// Read-only view of what the map shows, for tests and the console.
window.openLayersExample = {
  map,
  /// Point annotations where their features are on the map.
  get markers() {
    return Object.fromEntries([...features].filter(([, f]) => f.annotation.type === "point").map(([id, f]) => [id, coordinate(f.geometry)]));
  },
  get layerCount() { return annotationLayer.features.length; },
  get viewports() {
    return Object.fromEntries([...viewports].map(([pid, f]) => [pid, { name: f.participant.name, color: f.participant.color,
      tooltip: f.nameTag.style.label, corners: f.participant.corners }]));
  },
  get drags() {
    return Object.fromEntries([...rings].map(([id, r]) => [id, { ...r.drag }]));
  },
  get message() { return document.getElementById("message").textContent; },
  /// The centre of a marker's image on the screen (CSS pixels of the viewport), or null.
  screen(id) {
    const f = features.get(id);
    const node = f && document.getElementById(f.geometry.id);
    if (!node) return null;
    const r = node.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  },
};
client.connect();
