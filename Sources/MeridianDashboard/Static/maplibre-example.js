// meridian.js with MapLibre GL JS (the global `maplibregl` of its UMD build, loaded by
// maplibre.html before this module): points as draggable markers, polylines and polygons
// as GeoJSON layers, a dragged marker sent as a Meridian drag (starting, dragging at most
// once an animation frame, ending), this page's camera sent as it moves (movestart,
// move, moveend: camera.begin, camera.changing, camera.end), a clicked marker selected,
// the shared callout as a popup, and the others' presence as the dashboard shows it:
// each participant's viewport in their colour, and who drags what. A drag the server
// refuses (someone else holds the annotation) puts the marker back where the server
// has it and says why. No tile server needed: the offline basemap (Natural Earth
// coastlines and countries) is a GeoJSON source under the session; or raster tiles
// (`--dashboard-tiles`), or the server's MapLibre style (`--dashboard-style`) with the
// session's layers added over it. Names are never a text layer (the offline style has no
// glyphs): every name on the map is an HTML element.

import { MeridianClient, pageToken, serverURL } from "/dashboard/meridian.js";
import { unproject, viewportCorners } from "/dashboard/map.js";
import { displayColors } from "/dashboard/colors.js";
import { basemapGeoJSON, basemapStyle, closeRing } from "/dashboard/gl-style.js";

const params = new URLSearchParams(window.location.search);
const session = params.get("session") || "demo";
document.getElementById("title").textContent = `MapLibre GL JS example · ${session}`;
document.getElementById("other").href = `/dashboard/leaflet.html${window.location.search}${window.location.hash}`;
const say = (text) => { document.getElementById("message").textContent = text; };
const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/// The page cannot show the session: it says why and never connects.
function fail(status, text) {
  document.body.dataset.status = "error";
  document.getElementById("status").textContent = status;
  say(text);
}

if (!window.maplibregl) {
  fail("MapLibre GL JS missing", "MapLibre GL JS is missing on this server (/vendor/maplibre-gl/maplibre-gl.js did not load), "
    + "so this page cannot draw the map. `make web-deps` installs it.");
} else {
  const config = await fetch("/dashboard/config.json").then((r) => r.json()).catch(() => ({}));
  let map = null;
  try {
    map = new window.maplibregl.Map({ container: "map", style: style(config), center: [0, 20], zoom: 1 });
  } catch (error) { // no WebGL in this browser
    fail("no WebGL", `MapLibre GL JS could not start (${error.message}): it needs WebGL, which this browser does not give it.`);
  }
  if (map) run(window.maplibregl, map, config);
}

// (Functions, not constants: the module's top level calls them before it reaches them.)

/// The session's GeoJSON sources (the others' viewports, the session's shapes), empty at first.
function sessionSources() {
  return Object.fromEntries(["viewports", "annotations"].map((id) => [id, { type: "geojson", data: { type: "FeatureCollection", features: [] } }]));
}

/// The session's layers, over the basemap.
function sessionLayers() {
  return [
    { id: "viewport-fills", type: "fill", source: "viewports", paint: { "fill-color": ["get", "color"], "fill-opacity": 0.08 } },
    { id: "viewport-lines", type: "line", source: "viewports", paint: { "line-color": ["get", "color"], "line-width": 2.5 } },
    { id: "annotation-fills", type: "fill", source: "annotations", filter: ["==", ["geometry-type"], "Polygon"],
      layout: { "fill-sort-key": ["get", "zIndex"] },
      paint: { "fill-color": ["get", "fill"], "fill-opacity": ["get", "fillOpacity"] } },
    { id: "annotation-lines", type: "line", source: "annotations",
      layout: { "line-sort-key": ["get", "zIndex"], "line-join": "round", "line-cap": "round" },
      paint: { "line-color": ["get", "stroke"], "line-opacity": ["get", "alpha"], "line-width": ["get", "width"] } },
  ];
}

/// The map's style: the server's MapLibre style (`--dashboard-style`, to which the session's
/// sources and layers are added once it has loaded), or the raster tiles or the offline basemap
/// with the session's sources and layers over them.
function style(config) {
  if (config.styleURL) return config.styleURL;
  const base = basemapStyle(config.tileURL, { water: css("--map-water") || "#0d1b2a", land: css("--map-land") || "#1b2b3f",
    border: css("--map-border") || "#3b5370", coast: css("--map-coast") || "#56769a" });
  return { version: 8, sources: { ...base.sources, ...sessionSources() }, layers: [...base.layers, ...sessionLayers()] };
}

function run(maplibregl, map, config) {
  const client = new MeridianClient(serverURL(), { session, name: params.get("name") || "MapLibre", role: pageToken() ? undefined : "editor" }); // with a token, the role it grants
  const lngLat = (c) => [c.longitude, c.latitude];
  const wrap = (lon) => (lon >= -180 && lon < 180 ? lon : ((((lon + 180) % 360) + 360) % 360) - 180);
  /// Where a marker is, as a coordinate the server takes.
  const coordinate = (marker) => { const ll = marker.getLngLat(); return { latitude: ll.lat, longitude: wrap(ll.lng) }; };

  // --- GeoJSON sources: their data is kept here, and given to the map once its style has loaded.
  const sourceData = {};
  const setData = (id, data) => {
    sourceData[id] = data;
    map.getSource(id)?.setData(data);
  };
  map.on("style.load", () => {
    // A style of the server's own lacks the session's sources and layers.
    for (const [id, source] of Object.entries(sessionSources())) if (!map.getSource(id)) map.addSource(id, source);
    for (const layer of sessionLayers()) if (!map.getLayer(layer.id)) map.addLayer(layer);
    for (const [id, data] of Object.entries(sourceData)) map.getSource(id)?.setData(data);
  });

  /// The offline basemap (basemap.json), once fetched.
  async function addBasemap() {
    const data = await fetch("/dashboard/basemap.json").then((r) => r.json()).catch(() => null);
    if (data) setData("basemap", basemapGeoJSON(data));
  }
  if (!config.tileURL && !config.styleURL) addBasemap();

  const markers = new Map(); // point id -> maplibregl.Marker (with .annotation)
  const shapes = new Map(); // polyline or polygon id -> its annotation, as drawn
  const viewports = new Map(); // participant id -> {name, color, corners, label: Marker}
  const rings = new Map(); // annotation id -> Marker: the ring around what someone else drags
  let fitted = false;

  const myRole = () => client.state.participants.get(client.state.participant)?.role;
  const canDrag = (a) => a.type === "point" && a.draggable && a.enabled && (myRole() === "editor" || myRole() === "owner");

  // --- This page's drags ---------------------------------------------------------------------

  /// The drag in progress here: {id, marker, moved, pending, frame, refused, released}.
  let gesture = null;

  function send(g, state, c) {
    return client.request("drag", { id: g.id, state, ...(c ? { coordinate: c } : {}) });
  }

  /// Puts a marker at the server's coordinate of its annotation.
  function placeAtServer(marker, id) {
    const a = client.state.annotations.get(id);
    if (a?.coordinate) marker.setLngLat(lngLat(a.coordinate));
    return a;
  }

  /// The server refused a step of this page's drag: the marker goes back to the server's
  /// coordinate (and stays there while the pointer is still down) and the page says why.
  function refuse(g, error) {
    if (g.refused) return;
    g.refused = true;
    cancelAnimationFrame(g.frame);
    const a = markers.get(g.id) === g.marker ? placeAtServer(g.marker, g.id) : client.state.annotations.get(g.id);
    const name = a?.title ?? g.id;
    say(error.code === "drag_conflict" && error.holder
      ? `${error.holder.name} is dragging ${name}: your drag was refused, the marker is back where the server has it.`
      : `Your drag of ${name} was refused (${error.message}); the marker is back where the server has it.`);
    if (g.released && gesture === g) { gesture = null; sync(); }
  }

  /// Sends the newest position of the marker once an animation frame, not once a mousemove.
  function flush(g) {
    g.frame = 0;
    if (g.refused || !g.pending) return;
    const c = g.pending;
    g.pending = null;
    g.moved = true;
    send(g, "dragging", c).catch(() => {}); // refused only after `starting` was: that refusal is shown
  }

  function markerFor(a) {
    // MapLibre's default pin, its tip at the coordinate (its element's centre 14 px above it).
    const marker = new maplibregl.Marker({ color: client.state.settings?.tint ?? "#007aff", draggable: canDrag(a) });
    const element = marker.getElement();
    element.classList.add("meridian-point");
    element.classList.toggle("draggable", canDrag(a));
    element.title = a.title ?? a.id;
    element.setAttribute("aria-label", a.title ?? a.id);
    const select = () => client.request("select", { id: marker.annotation.id })
      .catch((error) => say(`Could not select ${marker.annotation.title ?? marker.annotation.id}: ${error.message}`));
    element.tabIndex = 0;
    element.addEventListener("click", (e) => { e.stopPropagation(); select(); });
    element.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(); } });
    marker.on("dragstart", () => {
      gesture = { id: a.id, marker, moved: false, pending: null, frame: 0, refused: false, released: false };
      say("");
      const g = gesture;
      send(g, "starting").catch((e) => refuse(g, e));
    });
    marker.on("drag", () => {
      const g = gesture;
      if (!g || g.marker !== marker) return;
      if (g.refused) { placeAtServer(marker, g.id); return; } // held by someone else: it stays where the server has it
      g.pending = coordinate(marker);
      if (!g.frame) g.frame = requestAnimationFrame(() => flush(g));
    });
    marker.on("dragend", () => {
      const g = gesture;
      if (!g || g.marker !== marker) return;
      g.released = true;
      cancelAnimationFrame(g.frame);
      if (g.refused) { gesture = null; sync(); return; }
      const last = coordinate(marker);
      if (!g.moved || g.pending) send(g, "dragging", last).catch(() => {}); // a drag ends only after a move
      g.pending = null;
      send(g, "ending", last).then(() => {
        if (gesture === g) { gesture = null; sync(); }
      }, (e) => refuse(g, e));
    });
    marker.annotation = a;
    return marker.setLngLat(lngLat(a.coordinate)).addTo(map);
  }

  function shapeFeature(a) {
    const tint = client.state.settings?.tint ?? "#007aff";
    const ring = (coordinates) => coordinates.map(lngLat);
    const common = { id: a.id, zIndex: a.zIndex, alpha: a.alpha, stroke: a.strokeColor ?? tint };
    if (a.type === "polyline") {
      return { type: "Feature", properties: { ...common, width: a.lineWidth }, geometry: { type: "LineString", coordinates: ring(a.coordinates) } };
    }
    return { type: "Feature", properties: { ...common, width: 2, fill: a.fillColor ?? tint, fillOpacity: a.alpha * 0.5 },
      geometry: { type: "Polygon", coordinates: [a.coordinates, ...a.holes].map((r) => closeRing(ring(r))) } };
  }

  // --- The session, drawn ----------------------------------------------------------------------

  function syncAnnotations() {
    const { annotations } = client.state;
    for (const [id, marker] of markers) {
      if (annotations.get(id)?.type !== "point") {
        marker.remove();
        markers.delete(id);
        if (gesture?.marker === marker) { cancelAnimationFrame(gesture.frame); gesture = null; } // removed under the pointer
      }
    }
    let reshaped = false;
    for (const id of shapes.keys()) {
      if (!annotations.has(id)) { shapes.delete(id); reshaped = true; }
    }
    for (const a of [...annotations.values()].sort((x, y) => x.zIndex - y.zIndex)) {
      if (a.type !== "point") {
        if (shapes.get(a.id) !== a) { shapes.set(a.id, a); reshaped = true; }
        continue;
      }
      let marker = markers.get(a.id);
      const mine = gesture && !gesture.refused && gesture.marker === marker;
      if (marker && marker.annotation !== a && !mine) { marker.remove(); marker = null; } // replaced by an update
      if (!marker) {
        marker = markerFor(a);
        markers.set(a.id, marker);
      }
      marker.annotation = a;
      if (marker.isDraggable() !== canDrag(a)) {
        marker.setDraggable(canDrag(a));
        marker.getElement().classList.toggle("draggable", canDrag(a));
      }
      if (!mine) marker.setLngLat(lngLat(a.coordinate)); // where the server has it, someone's drag included
    }
    if (reshaped) setData("annotations", { type: "FeatureCollection", features: [...shapes.values()].map(shapeFeature) });
  }

  /// An HTML label on the map (the style has no glyphs for text layers).
  function label(className, options = {}) {
    const element = document.createElement("div");
    element.className = className;
    return new maplibregl.Marker({ element, ...options });
  }

  /// The others' viewports (their camera and viewport size) and their drags, in their colours.
  function syncPresence() {
    const { participants, drags } = client.state;
    const others = [...participants.values()].filter((p) => p.id !== client.state.participant);
    const colors = displayColors(others, [css("--map-water") || "#0d1b2a", css("--map-land") || "#1b2b3f"]);
    let moved = false;
    for (const [pid, v] of viewports) {
      const p = participants.get(pid);
      if (!p || !p.camera || !p.viewport) { v.label.remove(); viewports.delete(pid); moved = true; }
    }
    for (const p of others) {
      if (!p.camera || !p.viewport) continue;
      const corners = viewportCorners(p.camera, p.viewport).map((c) => unproject(c.x, c.y));
      const color = colors.get(p.id);
      let v = viewports.get(p.id);
      if (v && JSON.stringify([v.name, v.color, v.corners]) === JSON.stringify([p.name, color, corners])) continue;
      if (!v) {
        v = { label: label("meridian-name", { anchor: "bottom", offset: [0, -4] }).setLngLat([0, 0]).addTo(map) };
        viewports.set(p.id, v);
      }
      Object.assign(v, { name: p.name, color, corners });
      // The name above the middle of the viewport's top edge.
      const element = v.label.getElement();
      element.textContent = p.name;
      element.style.color = color;
      v.label.setLngLat([(corners[0].longitude + corners[1].longitude) / 2, (corners[0].latitude + corners[1].latitude) / 2]);
      moved = true;
    }
    if (moved) {
      setData("viewports", { type: "FeatureCollection", features: [...viewports].map(([pid, v]) => ({ type: "Feature",
        properties: { participant: pid, color: v.color }, geometry: { type: "Polygon", coordinates: [closeRing(v.corners.map(lngLat))] } })) });
    }
    for (const [id, ring] of rings) {
      const group = drags.get(id);
      if (!group || [...group.keys()].pop() === client.state.participant) { ring.remove(); rings.delete(id); }
    }
    for (const [id, group] of drags) {
      const a = client.state.annotations.get(id);
      if (!a?.coordinate) continue;
      const [pid, d] = [...group.entries()].pop();
      if (pid === client.state.participant) continue; // this page's own drag: the marker under the pointer says it all
      const color = colors.get(pid) ?? "#e8590c";
      const text = `${d.state} · ${participants.get(pid)?.name ?? pid}`;
      let ring = rings.get(id);
      if (!ring) {
        ring = label("meridian-drag", { anchor: "center", offset: [0, -21] }); // around the pin's head
        ring.getElement().append(document.createElement("span"));
        ring.setLngLat(lngLat(a.coordinate)).addTo(map);
        rings.set(id, ring);
      }
      const element = ring.getElement();
      element.style.borderColor = color;
      element.classList.toggle("starting", d.state === "starting");
      element.firstChild.textContent = text;
      element.firstChild.style.color = color;
      ring.setLngLat(lngLat(a.coordinate));
      ring.drag = { participant: pid, state: d.state, color, label: text };
    }
  }

  // --- Selection and callouts -------------------------------------------------------------------

  /// A popup's offsets by its anchor: above a pin's head, or below its foot, moved by `offset`.
  function popupOffset(offset = { dx: 0, dy: 0 }, pin = true) {
    const up = pin ? 36 : 0, side = pin ? 14 : 0, { dx, dy } = offset;
    return { center: [dx, dy], top: [dx, dy], bottom: [dx, dy - up], left: [dx + side, dy - up / 2], right: [dx - side, dy - up / 2],
      "top-left": [dx, dy], "top-right": [dx, dy], "bottom-left": [dx, dy - up], "bottom-right": [dx, dy - up] };
  }

  /// Where the shared callout points: its coordinate, its annotation's live coordinate, or its
  /// participant's location; null when that is not known here.
  function calloutAnchor(callout) {
    const { anchor } = callout;
    if (anchor.coordinate) return { at: anchor.coordinate, offset: popupOffset(undefined, false) };
    if (anchor.annotation) {
      const a = client.state.annotations.get(anchor.annotation);
      return a?.coordinate ? { at: a.coordinate, offset: popupOffset(a.calloutOffset) } : null;
    }
    const location = client.state.participants.get(anchor.participant)?.location;
    return location ? { at: location.coordinate, offset: popupOffset(undefined, false) } : null;
  }

  function popup(className, offset, lines, onClick) {
    const content = document.createElement("div");
    for (const [tag, text, color] of lines) {
      if (!text) continue;
      const line = content.appendChild(document.createElement(tag));
      line.textContent = text;
      if (color) line.style.color = color;
    }
    if (onClick) content.addEventListener("click", onClick);
    return new maplibregl.Popup({ className, offset, closeButton: false, closeOnClick: false, focusAfterOpen: false })
      .setDOMContent(content);
  }

  let shared = null; // {key, popup}: the session's callout
  let own = null; // {key, popup}: the callout of this participant's selection
  function syncCallouts() {
    const { callout, calloutBy, participants, annotations } = client.state;
    const anchor = callout && calloutAnchor(callout);
    const sharedKey = anchor && JSON.stringify([callout, calloutBy, anchor.offset]);
    if (shared && shared.key !== sharedKey) { shared.popup.remove(); shared = null; }
    if (anchor && !shared) {
      const by = participants.get(calloutBy)?.name;
      const p = popup("meridian-callout shared", anchor.offset, [["strong", callout.title, callout.titleColor],
        ["span", callout.detail, callout.detailColor], ["small", by && `shown by ${by}`]],
      () => client.request("callout.tap", { part: "body" }).catch((error) => say(error.message)));
      if (callout.backgroundColor) p.on("open", () => { p.getElement().querySelector(".maplibregl-popup-content").style.background = callout.backgroundColor; });
      shared = { key: sharedKey, popup: p.setLngLat(lngLat(anchor.at)).addTo(map), callout };
    }
    if (shared) shared.popup.setLngLat(lngLat(anchor.at));

    const selection = participants.get(client.state.participant)?.selection ?? null;
    for (const [id, marker] of markers) marker.getElement().classList.toggle("selected", id === selection);
    const a = selection && annotations.get(selection);
    const shows = a && a.type === "point" && a.canShowCallout && a.title;
    const ownKey = shows && JSON.stringify([a.id, a.title, a.subtitle, a.calloutOffset]);
    if (own && own.key !== ownKey) { own.popup.remove(); own = null; }
    if (shows && !own) {
      own = { key: ownKey, popup: popup("meridian-callout own", popupOffset(a.calloutOffset), [["strong", a.title], ["span", a.subtitle]])
        .setLngLat(lngLat(a.coordinate)).addTo(map) };
    }
    if (own) own.popup.setLngLat(markers.get(a.id)?.getLngLat() ?? lngLat(a.coordinate)); // with the marker, this page's drag included
  }

  map.on("click", (e) => { // a click on the map itself, not on a marker: nothing selected
    if (e.originalEvent.target !== map.getCanvas()) return;
    if (client.state.participants.get(client.state.participant)?.selection) client.request("deselect").catch((error) => say(error.message));
  });

  // --- This page's camera ----------------------------------------------------------------------

  /// The camera as Meridian has it: 256-point tiles, so one zoom level above MapLibre's (SPEC §8.2).
  function camera() {
    const c = map.getCenter().wrap();
    return { center: { latitude: c.lat, longitude: c.lng }, zoom: map.getZoom() + 1, pitch: map.getPitch(),
      bearing: ((map.getBearing() % 360) + 360) % 360 };
  }
  function viewport() {
    const element = map.getContainer();
    return { width: Math.max(1, Math.round(element.clientWidth)), height: Math.max(1, Math.round(element.clientHeight)) };
  }
  const report = (type, fields) => (client.status === "live" ? client.request(type, fields) : Promise.reject(new Error("not live")));
  let cameraFrame = 0;
  let adopting = false; // the move that takes the camera the server applied: not adopted again
  let reported = false; // this connection's camera was sent

  /// The server applied another camera (normalised, or held by the session's constraints): take it.
  function adopt(ack) {
    const c = ack?.camera;
    if (!c || map.isMoving()) return;
    const now = camera();
    const same = Math.abs(now.center.latitude - c.center.latitude) < 1e-9 && Math.abs(now.center.longitude - c.center.longitude) < 1e-9
      && Math.abs(now.zoom - c.zoom) < 1e-9 && Math.abs(now.pitch - c.pitch) < 1e-9 && Math.abs(now.bearing - c.bearing) < 1e-9;
    if (same) return;
    adopting = true;
    map.jumpTo({ center: lngLat(c.center), zoom: c.zoom - 1, pitch: c.pitch, bearing: c.bearing });
  }

  map.on("movestart", () => { report("camera.begin", { viewport: viewport() }).catch(() => {}); });
  map.on("move", () => {
    if (cameraFrame) return;
    cameraFrame = requestAnimationFrame(() => { cameraFrame = 0; report("camera.changing", { camera: camera() }).catch(() => {}); });
  });
  map.on("moveend", () => {
    cancelAnimationFrame(cameraFrame);
    cameraFrame = 0;
    const taken = adopting;
    adopting = false;
    if (client.status === "live") reported = true;
    report("camera.end", { camera: camera(), viewport: viewport() }).then((ack) => { if (!taken) adopt(ack); }, () => {});
  });
  map.on("resize", () => { report("camera.end", { camera: camera(), viewport: viewport() }).catch(() => {}); });

  function sync() {
    syncAnnotations();
    syncPresence();
    syncCallouts();
    if (!fitted && markers.size + shapes.size) {
      fitted = true;
      const points = [...markers.values()].map((m) => m.getLngLat().toArray())
        .concat([...shapes.values()].flatMap((a) => a.coordinates.map(lngLat)));
      const bounds = points.reduce((b, p) => b.extend(p), new maplibregl.LngLatBounds(points[0], points[0]));
      const size = viewport();
      const padding = { top: size.height * 0.15, bottom: size.height * 0.15, left: size.width * 0.15, right: size.width * 0.15 };
      if (bounds.getWest() === bounds.getEast() && bounds.getSouth() === bounds.getNorth()) map.jumpTo({ center: points[0], zoom: 13 });
      else map.fitBounds(bounds, { padding, maxZoom: 13, animate: false }); // at once; 13 here is Meridian's (and Leaflet's) 14
    }
  }

  client.addEventListener("status", (e) => {
    document.body.dataset.status = e.detail;
    document.getElementById("status").textContent = e.detail;
    if (e.detail !== "live") return;
    // Others see this page's viewport from now on: sent once the session is drawn (and fitted).
    reported = false;
    queueMicrotask(() => {
      if (reported) return;
      reported = true;
      report("camera.begin", { viewport: viewport() })
        .then(() => report("camera.end", { camera: camera(), viewport: viewport() })).then(adopt, () => {});
    });
  });
  client.addEventListener("state", sync);

  /// Read-only view of what the map shows, for tests and the console.
  window.maplibreExample = {
    map,
    /// Point annotations where their markers are on the map.
    get markers() {
      return Object.fromEntries([...markers].map(([id, m]) => [id, { latitude: m.getLngLat().lat, longitude: m.getLngLat().lng }]));
    },
    /// Annotations drawn: markers and the features of the annotations' GeoJSON source.
    get layerCount() { return markers.size + (sourceData.annotations?.features.length ?? 0); },
    get viewports() {
      return Object.fromEntries([...viewports].map(([pid, v]) => [pid, { name: v.name, color: v.color,
        tooltip: v.label.getElement().textContent, corners: v.corners }]));
    },
    get drags() {
      return Object.fromEntries([...rings].map(([id, r]) => [id, { ...r.drag, label: r.getElement().textContent }]));
    },
    get message() { return document.getElementById("message").textContent; },
    /// This page's selection (an annotation id) and the callouts on the map: {title, latitude, longitude} or null.
    get selection() { return client.state.participants.get(client.state.participant)?.selection ?? null; },
    get callout() { return shared && { title: shared.callout.title, ...where(shared.popup) }; },
    get ownCallout() { return own && { title: own.popup.getElement()?.querySelector("strong")?.textContent, ...where(own.popup) }; },
    /// The camera this page has, as Meridian writes it.
    get camera() { return camera(); },
    /// The centre of a marker's element on the screen (CSS pixels of the viewport), or null.
    screen(id) {
      const element = markers.get(id)?.getElement();
      if (!element?.isConnected) return null;
      const r = element.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    },
  };
  const where = (p) => { const ll = p.getLngLat(); return { latitude: ll.lat, longitude: ll.lng }; };
  client.connect();
}
