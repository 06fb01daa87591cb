// One session watched live as a hidden viewer (it never changes shared state):
// the map with its basemap and legend, participants, drags, the shared camera,
// an inspector for annotations, the event feed with wall-clock times and
// filters, and replay of the session's history from its event log. A large
// session is watched by viewport: clusters at low zooms, the annotations in
// view at high zooms (interest.js).

import { MeridianClient, pageToken } from "/dashboard/meridian.js";
import { GLBasemap } from "/dashboard/gl-basemap.js";
import { CanvasMap, project, unproject, viewportBounds, viewportCorners } from "/dashboard/map.js";
import { Sparkline } from "/dashboard/charts.js";
import { displayColors } from "/dashboard/colors.js";
import { Labels } from "/dashboard/labels.js";
import { createLayers } from "/dashboard/layers.js";
import { SessionHistory, describeEvent, describeParts, eventGroup, eventParticipants } from "/dashboard/history.js";
import { hitTest, renderInspector } from "/dashboard/inspector.js";
import { CLUSTER_BELOW, MapInterest } from "/dashboard/interest.js";
import { clusterAt, clusterCell, worldTotal } from "/dashboard/clusters.js";
import { $, el, setStatus, clock, reducedMotion, VirtualList, collapsible, nextFrame, setText, assign } from "/dashboard/ui.js";

const FEED_LIMIT = 5000;
/// Below this zoom the offline basemap (Natural Earth 1:110m) still says something.
const BASEMAP_DETAIL = 8;

/// `maplibre`: {library, error}: MapLibre GL JS, which draws the basemap under the canvas, or why not.
export function showSession(url, sessionID, config, basemap, maplibre = { library: null, error: "not loaded" }) {
  document.body.dataset.view = "session";
  $("session").hidden = false;
  $("title").textContent = sessionID;
  document.title = `${sessionID} · Meridian`;

  const client = new MeridianClient(url, { session: sessionID, name: "Dashboard", role: "viewer", hidden: true });
  const live = client.state;
  const history = new SessionHistory(sessionID);
  const refusals = []; // {id, participant, holder, at}
  const outcomes = []; // ended drags shown for a while: {id, participant, state, reason, coordinate, at}
  const rate = new Sparkline($("rate-chart"), { unit: "/s" });
  const latency = new Sparkline($("latency-chart"), { color: "#e8930c", unit: " ms" });
  const deliveries = new Sparkline($("server-chart"), { color: "#2f9e6e", unit: "/s" });
  const serverRates = { messagesPerSecond: null, deliveriesPerSecond: null, peakDeliveriesPerSecond: 0 };
  // The server's last minute of this session's rates (GET /api/sessions/{id}/rates): the chart
  // starts full, then the overview adds a value a second.
  const rateHistory = {
    loaded: false,
    async fetch() {
      if (this.loaded) return;
      try {
        const headers = pageToken() ? { Authorization: `Bearer ${pageToken()}` } : {};
        const response = await fetch(`/api/sessions/${encodeURIComponent(sessionID)}/rates`, { headers });
        if (!response.ok) return;
        const body = await response.json();
        if (this.loaded) return;
        this.loaded = true;
        deliveries.values = [...body.deliveriesPerSecond, ...deliveries.values].slice(-deliveries.capacity);
        deliveries.draw();
        serverRates.peakDeliveriesPerSecond = Math.max(serverRates.peakDeliveriesPerSecond, ...body.deliveriesPerSecond);
        publish();
      } catch { /* the chart fills as the overview comes */ }
    },
  };
  // renderMs: from what first shows the session (its snapshot, its first clusters, or the whole
  // session once asked for) arriving to drawn; clustersDrawMs: from a `clusters` message arriving
  // to the end of the map frame that drew it.
  const timing = { snapshotAt: 0, renderMs: null, awaitClusters: false, welcomes: 0, resumes: 0,
    clustersAt: null, clustersDrawMs: null, clusterDraws: 0 };
  const replay = { active: false, playing: false, speed: 1, result: null, timer: null, refetch: null };
  let eventsThisSecond = 0;
  let followShared = false;
  let autoFit = true; // keep everything in view until the user pans or zooms ("Follow all")
  let fitQueued = false;
  let fitted = false; // the first fit is done: the map draws from then on
  let lastFit = 0;
  let pointerAt = -Infinity; // the pointer last moved over the map: fits wait for it to rest
  let inspected = null;
  let hovered = null;
  // When the connection was lost (Date.now()), until the page has fresh state again: what it
  // shows of the live state (drags, selections, viewports, the shared camera) is as of then.
  let staleSince = null;
  const stale = () => staleSince !== null && !replay.active;
  let colors = new Map();
  let colorsFor = null;
  let peopleFilter = "";
  let sessionAnnotations = null; // the session's annotation count, from the server overview
  let inspectOnArrival = null; // a one-annotation cluster's id, inspected once it comes one by one
  let lastClusterZoom = null; // {at, time}: the second click of a double click zooms no further
  const removed = new Set(); // ids of annotations seen removed, for the inspector
  const shapeExtents = new Map(); // id -> [southWest, northEast] of shapes seen, for fitting while clustered

  const shown = () => (replay.active && replay.result ? replay.result.state : live);
  const name = (pid) => shown().participants.get(pid)?.name ?? live.participants.get(pid)?.name ?? history.names.get(pid) ?? pid;
  // The root font size in CSS pixels, read once per task: a frame's layers and lists ask for it often.
  let remCache = null;
  const rem = () => {
    if (remCache === null) {
      remCache = parseFloat(getComputedStyle(document.documentElement).fontSize);
      queueMicrotask(() => { remCache = null; });
    }
    return remCache;
  };
  const px = (size) => `${Math.round(size * (rem() / 16))}px`;
  const isRefused = (id) => refusals.some((r) => r.id === id && performance.now() - r.at < 2000);

  // The theme's colours, read from the page's CSS at most every 100 ms (layers ask often).
  let themeCache = null;
  let themeAt = -Infinity;
  function theme() {
    if (themeCache && performance.now() - themeAt < 100) return themeCache;
    const style = getComputedStyle(document.documentElement);
    const get = (n, f) => style.getPropertyValue(n).trim() || f;
    themeCache = { labelBg: get("--label-bg", "#0b1320d9"), labelText: get("--label-text", "#e8eef7"), tint: get("--tint-fallback", "#4dabf7"),
      panel: get("--panel", "#111c2e"), muted: get("--muted", "#a3b3c9"), line: get("--line", "#2c3f5c"),
      dark: !window.matchMedia("(prefers-color-scheme: light)").matches };
    themeAt = performance.now();
    return themeCache;
  }

  /// Display colours: readable on this theme's map and distinct from each other. Checked once
  /// per task for the state shown (a frame asks for them many times).
  let checkedState = null, checkedMap = null;
  function colorOf(pid) {
    const state = shown();
    const mapColors = map.lastColors ?? map.colors; // this frame's, when drawing
    if (state !== checkedState || mapColors !== checkedMap || colorsFor === null) {
      const key = `${mapColors.water}|${mapColors.land}|${[...state.participants.values()].map((p) => `${p.id}${p.color}`).join(",")}`;
      if (key !== colorsFor) {
        colors = displayColors([...state.participants.values()], [mapColors.water, mapColors.land]);
        colorsFor = key;
      }
      if (checkedState === null) queueMicrotask(() => { checkedState = null; });
      checkedState = state;
      checkedMap = mapColors;
    }
    return colors.get(pid) ?? "#9aa5b1";
  }

  const matchesFilter = (p) => !peopleFilter || `${p.name} ${p.role}`.toLowerCase().includes(peopleFilter);
  let annotationFilter = "";
  const annotationMatches = (a) => !annotationFilter || `${a.id} ${a.title ?? ""} ${a.kind ?? ""}`.toLowerCase().includes(annotationFilter);

  const labels = new Labels();
  // The page's controls over the map (toolbar, readouts, notices, the basemap's attribution), in
  // the map's CSS pixels: labels keep clear of them. Measured again only when one of them changes
  // size, shows or hides (reading them every frame would lay the page out every frame).
  let overlayBoxes = null;
  const overlayObserver = new ResizeObserver(() => { overlayBoxes = null; map.invalidate(); });
  const overlayElements = () => [...document.querySelectorAll(".map-area > :not(canvas):not(.gl-basemap):not(#hover), .map-area .maplibregl-ctrl")];
  function overlays() {
    if (overlayBoxes) return overlayBoxes;
    const origin = $("map").getBoundingClientRect();
    overlayBoxes = overlayElements().map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0)
      .map((r) => ({ x: r.left - origin.left, y: r.top - origin.top, w: r.width, h: r.height }));
    return overlayBoxes;
  }
  const clustersShown = () => (replay.active ? null : live.clusters?.clusters ?? null);
  // The legend's switches: which layers the map draws (the viewports' fill is off by default).
  const layerShown = { viewports: true, viewportFill: false, locations: true, selections: true, labels: true, sharedCamera: true, callout: true };
  const layers = createLayers({
    state: shown, clusters: clustersShown, name, colorOf, refused: isRefused, matches: matchesFilter, annotationMatches, inspected: () => inspected,
    hovered: () => hovered, shown: (layer) => layerShown[layer] !== false, stale,
    labels, px, markerScale: () => parseFloat(px(16)) / 16, overlays, theme, reducedMotion,
  });
  const title = (id, state = shown()) => state.annotations.get(id)?.title || id;

  let mapInterest = null; // what the map asks the server for, once the map exists
  const map = new CanvasMap($("map"), {
    tileURL: config.tileURL,
    basemap,
    onUserMove: () => setAutoFit(false),
    onResize: () => { overlayBoxes = null; if (autoFit && !followShared && live.settings) fitView(); mapInterest?.update(); },
    onView: () => mapInterest?.update(),
    onCursor: (c, at) => {
      if (at) pointerAt = performance.now();
      $("cursor").textContent = c ? formatCoordinate(c) : "—";
      hoverAt(at);
    },
    onTap: (at) => {
      const second = lastClusterZoom && performance.now() - lastClusterZoom.time < 500 && Math.hypot(at.x - lastClusterZoom.at.x, at.y - lastClusterZoom.at.y) < 10;
      if (second) return; // a double click on a cluster zooms in once
      const cluster = clusterAt(layers.output.clusters, at);
      if (cluster) { zoomIntoCluster(cluster, at); return; }
      const hit = hitTest(map, shown(), layers.stacking(shown()), at, parseFloat(px(16)) / 16);
      inspect(hit, { reveal: true });
    },
  });
  // MapLibre GL JS draws the basemap, tiles or style under the canvas; without WebGL, the canvas does.
  let basemapError = maplibre.error;
  if (maplibre.library) {
    try {
      map.underlay = new GLBasemap(maplibre.library, $("map"), { tileURL: config.tileURL, styleURL: config.styleURL,
        basemap: basemap?.data, colors: map.colors });
    } catch (error) {
      basemapError = `MapLibre GL JS could not start (${error.message}): the canvas draws the basemap`;
    }
  }
  if (basemapError) console.warn(`basemap: ${basemapError}`);
  for (const element of overlayElements()) overlayObserver.observe(element);
  // The scale bar follows every frame (the view changes without the panels); the last layer notes when clusters were drawn.
  map.setLayers([...layers.layers, () => renderScale(), () => clustersDrawn(), () => framed(), () => rendered()]);
  // Nothing is drawn before the first fit: the first frame shows the session, not the world.
  map.held = true;
  // A request answered may end the map's settling: then it is fitted.
  mapInterest = new MapInterest(client, map, { onChange: () => { refresh(); if (live.settings) queueFit(); } });
  window.matchMedia("(prefers-color-scheme: light)").addEventListener("change", () => { colorsFor = null; themeCache = null; refresh(); });

  function formatCoordinate(c) {
    const lat = `${Math.abs(c.latitude).toFixed(4)}° ${c.latitude >= 0 ? "N" : "S"}`;
    const lon = `${Math.abs(c.longitude).toFixed(4)}° ${c.longitude >= 0 ? "E" : "W"}`;
    return `${lat}, ${lon}`;
  }

  function hoverAt(at) {
    const box = $("hover");
    const cluster = clusterAt(layers.output.clusters, at);
    const hit = at && !cluster ? hitTest(map, shown(), layers.stacking(shown()), at, parseFloat(px(16)) / 16) : null;
    hovered = hit;
    $("map").style.cursor = hit || cluster ? "pointer" : "grab";
    if (!hit && !cluster) { box.hidden = true; return; }
    if (cluster) {
      box.textContent = cluster.count > 1 ? `${cluster.count.toLocaleString("en")} annotations — click to zoom in` : `${cluster.annotation} — click to zoom in`;
    } else {
      const a = shown().annotations.get(hit);
      box.textContent = `${a.title ? `${a.title} · ` : ""}${a.id} (${a.type}) — click to inspect`;
    }
    box.style.left = `${at.x + 14}px`;
    box.style.top = `${at.y + 14}px`;
    box.hidden = false;
  }

  // MARK: clusters

  /// Zooms to where the cluster splits, centred on it; one annotation (or several at one
  /// place) to where annotations come one by one, inspecting a single one once it is there.
  function zoomIntoCluster(cluster, at = null) {
    stopFollowing();
    const p = project(cluster.coordinate.latitude, cluster.coordinate.longitude);
    map.setView(p.x, p.y, Math.max(map.view.zoom, cluster.splitZoom ?? CLUSTER_BELOW));
    inspectOnArrival = cluster.count === 1 ? cluster.annotation : null;
    if (at) lastClusterZoom = { at, time: performance.now() };
  }

  /// After each frame: the first frame's view (for tests: it is the fitted one), and at
  /// harbour zooms without raster tiles, a note that the offline basemap has no detail there.
  function framed() {
    if (!map.firstFrame) map.firstFrame = { view: { ...map.view }, at: performance.now(), annotations: layers.output.drawn.length };
    const note = $("basemap-note");
    const bare = !config.tileURL && !config.styleURL && map.view.zoom >= BASEMAP_DETAIL && client.status !== "no-session";
    if (note.hidden === bare) note.hidden = !bare;
  }

  /// After each frame: the time from the newest clusters' arrival to their first drawing.
  function clustersDrawn() {
    if (timing.clustersAt === null || !clustersShown()) return;
    timing.clustersDrawMs = performance.now() - timing.clustersAt;
    timing.clustersAt = null;
    timing.clusterDraws += 1;
  }

  // MARK: scale bar

  function renderScale() {
    const mpp = map.metresPerPixel;
    if (!Number.isFinite(mpp) || mpp <= 0) return;
    const target = mpp * 120;
    const magnitude = 10 ** Math.floor(Math.log10(target));
    const nice = [5, 2, 1].map((f) => f * magnitude).find((v) => v <= target) ?? magnitude;
    const width = `${Math.round(nice / mpp)}px`;
    if ($("scale-bar").style.width !== width) $("scale-bar").style.width = width;
    setText($("scale-text"), nice >= 1000 ? `${nice / 1000} km` : `${nice} m`);
  }

  // MARK: panels

  // Rows in scrollers of their own, only those in view in the page: thousands of rows cost a
  // screenful. The participant and annotation lists are one Tab stop each (arrow keys move in them).
  const rowHeight = (rems) => () => Math.round(rems * rem());
  const peopleList = new VirtualList($("people"), {
    rowHeight: rowHeight(2.6), maxRows: 12, key: (p) => p.id, roving: true,
    render: (p) => {
      const facts = personFacts(p);
      const button = el("button", { type: "button", title: "Zoom the map to this participant's view" },
        el("span", { className: "swatch", style: { background: colorOf(p.id) }, ariaHidden: "true" }),
        el("strong", {}, p.name), el("span", { className: "meta" }, facts.join(" · ")));
      button.addEventListener("click", () => zoomToParticipant(p.id));
      return el("li", { dataset: { participant: p.id }, title: `${p.name}: ${facts.join(" · ")}` }, button);
    },
  });

  /// What a participant's row says of them.
  function personFacts(p, state = shown()) {
    const facts = [p.role];
    if (state.cameraLease === p.id) facts.push("holds shared camera");
    if (p.selection) facts.push(`selected ${title(p.selection, state)}`);
    if (p.following) facts.push(`follows ${p.following === "shared" ? "shared camera" : name(p.following)}`);
    if (p.mapLoad) facts.push(`map ${p.mapLoad.state}`);
    if (p.location) facts.push(p.location.authorization === "reduced" ? "location (coarse)" : "location");
    if (p.camera) facts.push(`zoom ${p.camera.zoom.toFixed(1)}`);
    return facts;
  }

  // The rows are drawn anew only when what they say changes (cameras move many times a second).
  let peopleKey = null;
  function renderPeople() {
    const state = shown();
    const people = [...state.participants.values()];
    const matching = people.filter(matchesFilter);
    const key = matching.map((p) => `${p.id}\t${p.name}\t${colorOf(p.id)}\t${personFacts(p, state).join(" · ")}`).join("\n");
    setText($("people-count"), matching.length === people.length ? `(${people.length})` : `(${matching.length} of ${people.length})`);
    if (key === peopleKey) return;
    peopleKey = key;
    peopleList.update(matching);
  }

  /// Where a participant is, as Follow all keeps them in view: the centre of their camera and
  /// their location, not all their view shows.
  function whereIs(p) {
    return [p.camera?.center, p.location?.coordinate].filter(Boolean);
  }

  /// The map stops following: neither Follow all nor the shared camera moves it any more.
  function stopFollowing() {
    followShared = false;
    $("follow-shared").setAttribute("aria-pressed", "false");
    setAutoFit(false);
  }

  /// A participant filter that matches some of the participants brings them into view when one
  /// of them is out of it: one participant's view as a click on their row does, several people
  /// by where they are (as Follow all fits them), so one zoomed out to a continent does not
  /// shrink the others to a dot.
  function revealMatchingPeople() {
    const people = [...shown().participants.values()];
    const matching = people.filter(matchesFilter);
    if (!peopleFilter || !matching.length || matching.length === people.length || !map.width) return;
    const where = matching.flatMap(whereIs);
    const inView = where.every((c) => {
      const s = map.toScreen(c.latitude, c.longitude);
      return s.x >= 0 && s.x <= map.width && s.y >= 0 && s.y <= map.height;
    });
    if (!where.length || inView) return;
    if (matching.length === 1) { zoomToParticipant(matching[0].id); return; }
    stopFollowing();
    map.fit(where, 0.9);
  }

  function zoomToParticipant(pid) {
    const p = shown().participants.get(pid);
    if (!p) return;
    stopFollowing();
    if (p.camera && p.viewport) map.fit(viewportCorners(p.camera, p.viewport).map((c) => unproject(c.x, c.y)), 0.9);
    else if (p.camera) { const c = project(p.camera.center.latitude, p.camera.center.longitude); map.setView(c.x, c.y, p.camera.zoom); }
    else if (p.location) { const c = project(p.location.coordinate.latitude, p.location.coordinate.longitude); map.setView(c.x, c.y, 15); }
    zoomedTo = pid;
    publish();
  }
  let zoomedTo = null;

  function renderDrags() {
    const now = performance.now();
    const state = shown();
    // Lost connection: the states are those of the moment it was lost, and said to be. The note
    // follows that moment (a second disconnect before a redraw moves it).
    if ($("session").dataset.stale !== String(stale())) {
      $("session").dataset.stale = String(stale());
      $("drags").dataset.stale = String(stale());
    }
    const note = $("drags-stale");
    if (note.hidden !== !stale()) note.hidden = !stale();
    setText(note, stale() ? `As of the disconnect at ${clock(staleSince)}: not current until reconnected.` : "");
    // The rows as data first: what each says, and apart from it where (that changes with every
    // frame of a drag). The elements are built only when that changes.
    const rows = [];
    const where = (c) => `${c.latitude.toFixed(5)}, ${c.longitude.toFixed(5)}`;
    for (const [id, group] of state.drags) {
      for (const [pid, d] of group) {
        rows.push({ kind: "drag", id, pid, state: d.state, title: title(id, state), name: name(pid), color: colorOf(pid), where: where(d.coordinate) });
      }
    }
    if (!replay.active) {
      for (const o of outcomes) {
        if (now - o.at > 6000) continue;
        const what = o.state === "ending" ? "committed" : `restored${o.reason ? ` (${o.reason.replace("_", " ")})` : ""}`;
        rows.push({ kind: "outcome", id: o.id, pid: o.participant, state: o.state, title: title(o.id, state), name: name(o.participant),
          what, where: where(o.coordinate) });
      }
      // The same refused attempt (who, what, held by whom) repeated: one row with a count.
      const refused = new Map();
      for (const r of refusals) {
        if (now - r.at > 6000) continue;
        const key = `${r.id}|${r.participant}|${r.holder}`;
        const row = refused.get(key) ?? { kind: "refused", id: r.id, pid: r.participant, state: "refused", title: title(r.id, state),
          name: name(r.participant), holder: r.holder ? name(r.holder) : "?", count: 0 };
        row.count += 1;
        refused.set(key, row);
      }
      rows.push(...refused.values());
    }
    const says = (r) => [r.kind, r.id, r.pid, r.state, r.title, r.name, r.color ?? null, r.what ?? null, r.holder ?? null, r.count ?? null];
    const gist = JSON.stringify(rows.map(says));
    const key = JSON.stringify([gist, rows.map((r) => r.where ?? null)]);
    if (key === dragsKey) return;
    // Only where the drags are changed: shown at most four times a second.
    const wait = dragsAt + 250 - performance.now();
    if (gist === dragsGist && wait > 0) {
      dragsTimer ??= setTimeout(() => { dragsTimer = null; refreshPanels(); }, wait);
      return;
    }
    dragsKey = key;
    dragsGist = gist;
    dragsAt = performance.now();
    const small = (r) => el("small", {}, r.where);
    const item = (r) => {
      if (r.kind === "drag") {
        return el("li", { dataset: { annotation: r.id, participant: r.pid, state: r.state }, style: { borderLeftColor: r.color } },
          el("span", { className: "state" }, r.state), " ", el("strong", {}, r.title), ` · ${r.name} `, small(r));
      }
      if (r.kind === "outcome") {
        return el("li", { className: `outcome ${r.state}`, dataset: { annotation: r.id, participant: r.pid, state: r.state } },
          el("span", { className: "state" }, r.state), " ", el("strong", {}, r.title), ` · ${r.name} — ${r.what} `, small(r));
      }
      return el("li", { className: "refused", dataset: { annotation: r.id, participant: r.pid, state: "refused", count: String(r.count) } },
        el("span", { className: "state" }, "refused"), ` ${r.name} on `, el("strong", {}, r.title),
        ` — held by ${r.holder}`, r.count > 1 ? el("span", { className: "times" }, ` ×${r.count}`) : "");
    };
    $("drags").replaceChildren(...(rows.length ? rows.map(item) : [el("li", { className: "empty" }, "none")]));
  }
  let dragsKey = null, dragsGist = null, dragsAt = -Infinity, dragsTimer = null;

  function renderShared() {
    const state = shown();
    const cam = state.sharedCamera;
    const holder = state.cameraLease ? name(state.cameraLease) : "nobody";
    setText($("shared-camera"), cam
      ? `${cam.center.latitude.toFixed(4)}, ${cam.center.longitude.toFixed(4)} · zoom ${cam.zoom.toFixed(1)} · bearing ${Math.round(cam.bearing)}° — held by ${holder}`
      : `none — held by ${holder}`);
    // The callout itself is drawn on the map, once; the panel says what it is and who showed it.
    const c = state.callout;
    const box = $("callout");
    if (box.hidden !== !c) box.hidden = !c;
    if ($("callout-none").hidden !== Boolean(c)) $("callout-none").hidden = Boolean(c);
    if (c) {
      const anchor = c.anchor.annotation ? `on ${title(c.anchor.annotation, state)}` : c.anchor.participant ? `on ${name(c.anchor.participant)}` : "at a coordinate";
      // After a restart the server no longer knows who showed it (calloutBy is null).
      const by = state.calloutBy ? `, shown by ${name(state.calloutBy)}` : ", shown before the session was last loaded";
      const key = JSON.stringify([c.title, c.detail, anchor, by]);
      if (key === calloutKey) return;
      calloutKey = key;
      box.replaceChildren(el("strong", {}, c.title), ...(c.detail ? [el("span", {}, c.detail)] : []),
        el("small", {}, `${anchor}${by}`));
    } else calloutKey = null;
  }
  let calloutKey = null;

  const annotationList = new VirtualList($("annotation-list"), {
    rowHeight: rowHeight(2.6), maxRows: 10, key: (a) => a.id, roving: true,
    render: (a) => {
      const state = shown();
      const where = a.type === "point" ? `${a.coordinate.latitude.toFixed(5)}, ${a.coordinate.longitude.toFixed(5)}` : `${a.coordinates.length} vertices`;
      const button = el("button", { type: "button" },
        el("span", { className: "swatch", style: { background: a.strokeColor ?? a.fillColor ?? state.settings?.tint ?? "#007aff" }, ariaHidden: "true" }),
        el("strong", {}, a.title ? `${a.title} (${a.id})` : a.id), el("span", { className: "meta" }, `${a.type} · ${where}`));
      button.addEventListener("click", () => { inspect(a.id, { center: true, reveal: true }); });
      return el("li", { dataset: { annotation: a.id }, title: `${a.title ? `${a.title} (${a.id})` : a.id}: ${a.type} · ${where}` }, button);
    },
  });

  let listKey = null;
  let listed = 0;
  function renderAnnotationList() {
    const state = shown();
    const query = annotationFilter;
    const key = `${state === live ? "live" : "replay"}|${query}|${layers.stacking(state).length}|${state.seq}|${clustersShown()?.length}|${mapInterest.mode}`;
    if (key === listKey) return;
    listKey = key;
    const all = layers.stacking(state);
    const matching = query ? all.filter(annotationMatches) : all;
    const clusters = clustersShown();
    const inClusters = clusters ? clusters.reduce((n, c) => n + c.count, 0) : 0;
    const of = query ? `${matching.length} of ` : "";
    $("annotation-count").textContent = clusters ? `(${inClusters.toLocaleString("en")} here, in clusters)`
      : state === live && mapInterest.mode === "viewport" ? `(${of}${all.length} around the view)` : `(${of}${all.length})`;
    annotationList.update(clusters ? [] : matching);
    listed = clusters ? 0 : matching.length;
    const more = $("annotation-more");
    more.hidden = !clusters;
    more.textContent = clusters ? `Zoom in to zoom ${CLUSTER_BELOW} or closer to list the annotations one by one.` : "";
  }

  /// Shows annotation `id` in the inspector (null closes it); `center` centres the map on it;
  /// `reveal` (the user asked for it) scrolls the inspector into view and gives it the focus,
  /// wherever the side panel was scrolled to.
  function inspect(id, { center = false, reveal = false } = {}) {
    inspected = id ?? null;
    revealInspector = Boolean(reveal && inspected);
    const a = id ? shown().annotations.get(id) : null;
    if (a && center) {
      const c = a.type === "point" ? a.coordinate : a.coordinates[0];
      const p = project(c.latitude, c.longitude);
      setAutoFit(false);
      map.setView(p.x, p.y, Math.max(map.view.zoom, 12));
    }
    refresh();
  }

  function renderInspectorPanel() {
    const panel = $("inspector");
    const state = shown();
    const a = inspected ? state.annotations.get(inspected) : null;
    if (panel.hidden !== !inspected) panel.hidden = !inspected;
    if (!inspected) { published.inspector = null; return; }
    const missing = state === live && mapInterest.mode === "viewport" && !removed.has(inspected) ? "not in the map's area" : "removed";
    published.inspector = renderInspector($("inspector-body"), inspected, a, { state, history, name, colorOf, missing });
    if (revealInspector) {
      revealInspector = false;
      panel.focus({ preventScroll: true });
      panel.scrollIntoView({ block: "start", behavior: "instant" });
    }
  }
  let revealInspector = false;

  // MARK: feed

  function renderFeedFilters() {
    const select = $("feed-participant");
    const current = select.value;
    const ids = new Set([...history.names.keys(), ...live.participants.keys()]);
    const options = [...ids].map((id) => [id, name(id)]).sort((a, b) => a[1].localeCompare(b[1]));
    const signature = options.map((o) => o.join("=")).join("|");
    if (select.dataset.signature === signature) return;
    select.dataset.signature = signature;
    // A name alone, with the id only where two participants share it.
    const uses = new Map();
    for (const [, n] of options) uses.set(n, (uses.get(n) ?? 0) + 1);
    select.replaceChildren(el("option", { value: "" }, "everyone"),
      ...options.map(([id, n]) => el("option", { value: id }, uses.get(n) > 1 ? `${n} (${id})` : n)));
    select.value = ids.has(current) ? current : "";
  }

  // Own-camera moves (every participant panning their own map) would fill the feed: they
  // show under "cameras" and "everything", not in the default view.
  const ownCamera = (m) => (m.type === "camera.begin" || m.type === "camera.end") && m.target !== "shared";
  // A line per event, wrapped rather than cut: who, what, to which annotation, and a drag's
  // state all show, however long the names and titles (rows are as tall as their text).
  const feedList = new VirtualList($("feed"), {
    rowHeight: rowHeight(1.5), maxRows: 14, key: (item) => item.key, variable: true,
    render: ({ item, parts }) => {
      const m = item.event;
      return el("li", { className: `t-${m.type.replace(".", "-")}` },
        el("time", { dateTime: new Date(item.time).toISOString() }, clock(item.time)),
        el("span", { className: "seq" }, m.transient ? "·" : String(m.seq ?? "")),
        ...parts.map((part) => (typeof part === "string" ? part : el("span", { className: part.kind }, part.text))));
    },
  });

  let feedKey = null;
  /// The feed, newest first; while replaying, up to the replayed time, what came later held back until Live.
  function renderFeed() {
    renderFeedFilters();
    const who = $("feed-participant").value, group = $("feed-type").value;
    const key = `${history.items.length}|${history.items.at(-1)?.time}|${who}|${group}|${replay.active ? Math.floor(replay.result?.time ?? 0) : "live"}`;
    if (key === feedKey) return;
    feedKey = key;
    const until = replay.active && replay.result ? replay.result.time : Infinity;
    const shownItems = [];
    let held = 0;
    for (let i = history.items.length - 1; i >= 0 && shownItems.length < FEED_LIMIT; i--) {
      const item = history.items[i];
      const m = item.event;
      if (group === "" && ownCamera(m)) continue;
      if (group && group !== "everything" && eventGroup(m) !== group) continue;
      if (who && !eventParticipants(m).includes(who)) continue;
      if (item.time > until) { held += 1; continue; }
      shownItems.push(item);
    }
    const note = $("feed-replay");
    note.hidden = !replay.active;
    note.textContent = replay.active ? `Replay: events up to ${clock(until)}; ${held} later event${held === 1 ? "" : "s"} held back until Live.` : "";
    feedList.update(shownItems.map((item) => ({ item, parts: describeParts(item.event, name, title), key: item.id })));
    published.feed = shownItems.slice(0, 50).map((item) => ({ time: item.time, type: item.event.type, seq: item.event.seq ?? null,
      text: describeEvent(item.event, name, title) }));
  }

  // MARK: replay

  function replayControls() {
    headerStatus();
    const range = history.range();
    const slider = $("replay-time");
    const missing = client.status === "no-session";
    const ready = range !== null && !missing;
    for (const id of ["replay-time", "replay-play", "replay-speed"]) assign($(id), { disabled: !ready });
    assign($("replay-live"), { disabled: !replay.active });
    mapControls();
    if (!ready) {
      setText($("replay-status"), missing ? "No session: nothing to replay until a participant starts it."
        : history.error ? `Event log unavailable: ${history.error}` : history.loaded ? "Nothing to replay yet." : "Loading the event log…");
      replayKey = null;
      return;
    }
    const t = replay.active ? replay.result.time : range.max;
    // Live, the slider ends at the next whole second (its thumb at the end).
    const end = replay.active ? range.max : Math.ceil(range.max / 1000) * 1000;
    assign(slider, { min: String(range.min), max: String(end), value: String(replay.active ? t : end) });
    // The texts (wall-clock times) change with the replayed second.
    const key = `${range.min}|${replay.active ? Math.floor(t / 1000) : "live"}|${replay.playing}|${replay.speed}`;
    if (key === replayKey) return;
    replayKey = key;
    slider.setAttribute("aria-valuetext", replay.active ? `replaying ${clock(t)}` : "live");
    $("replay-play").textContent = replay.playing ? "Pause" : "Play";
    $("replay-play").setAttribute("aria-pressed", String(replay.playing));
    $("replay-status").textContent = replay.active
      ? `Replaying ${clock(t)} at ${replay.speed}× — events from ${clock(range.min)}; Live returns to now.`
      : `Live. The log goes back to ${clock(range.min)}: move the slider or Play to replay.`;
    $("replaying").hidden = !replay.active;
    $("replaying").textContent = replay.active ? `Replay · ${clock(t)} · ${replay.speed}×` : "";
  }
  let replayKey = null;

  /// The header says what the page shows: the connection's status live, the replayed time while replaying.
  let headerShows = null;
  function headerStatus() {
    const replayed = replay.active ? `replay · ${clock(replay.result.time)}` : null;
    if (headerShows === `${client.status}|${replayed}`) return;
    headerShows = `${client.status}|${replayed}`;
    setStatus(client.status);
    const status = $("status");
    status.dataset.replay = String(replay.active);
    status.title = replay.active ? `Replaying the event log; the connection is ${client.status}` : "";
    if (replayed) status.textContent = replayed;
  }

  function replayTo(time) {
    replay.active = true;
    replay.result = history.replay(time, replay.result);
    if (!replay.refetch) replay.refetch = setInterval(() => history.fetchNew().then((n) => { if (n) refresh(); }), 3000);
    layers.invalidateStacking();
    refresh();
  }

  function backToLive() {
    replay.active = false;
    replay.playing = false;
    replay.result = null;
    clearInterval(replay.timer);
    clearInterval(replay.refetch);
    replay.timer = null;
    replay.refetch = null;
    layers.invalidateStacking();
    colorsFor = null;
    refresh();
  }

  function play() {
    if (replay.playing) {
      replay.playing = false;
      clearInterval(replay.timer);
      replay.timer = null;
      refresh();
      return;
    }
    const range = history.range();
    if (!range) return;
    if (!replay.active) replayTo(range.min);
    replay.playing = true;
    let last = performance.now();
    // With reduced motion the map steps less often: fewer, larger jumps.
    replay.timer = setInterval(() => {
      const now = performance.now();
      const next = replay.result.time + (now - last) * replay.speed;
      last = now;
      if (next >= Date.now()) { backToLive(); return; }
      replayTo(next);
    }, reducedMotion() ? 1000 : 100);
    refresh();
  }

  $("replay-time").addEventListener("input", (e) => {
    if (replay.playing) play();
    replayTo(Number(e.target.value));
  });
  // Arrow keys step a second, Page Up and Down ten (the slider's own step is a millisecond).
  $("replay-time").addEventListener("keydown", (e) => {
    const steps = { ArrowLeft: -1000, ArrowDown: -1000, ArrowRight: 1000, ArrowUp: 1000, PageDown: -10000, PageUp: 10000 };
    if (!(e.key in steps)) return;
    e.preventDefault();
    const slider = e.target;
    const range = history.range();
    if (!range) return;
    if (replay.playing) play();
    const from = replay.active ? replay.result.time : range.max;
    replayTo(Math.max(range.min, Math.min(range.max, from + steps[e.key])));
    slider.value = String(replay.result.time);
  });
  $("replay-play").addEventListener("click", play);
  $("replay-speed").addEventListener("change", (e) => { replay.speed = Number(e.target.value); refresh(); });
  $("replay-live").addEventListener("click", backToLive);

  // MARK: refresh and publish

  let panelsQueued = false;
  function refresh() {
    map.invalidate();
    refreshPanels();
  }

  function refreshPanels() {
    if (panelsQueued) return;
    panelsQueued = true;
    nextFrame(() => {
      panelsQueued = false;
      renderPeople();
      renderDrags();
      renderShared();
      renderAnnotationList();
      renderInspectorPanel();
      renderFeed();
      replayControls();
      renderScale();
      publish();
    });
  }

  /// The map's buttons: nothing to fit or follow without a session; Follow shared camera
  /// only while there is one; Follow all pressed while the map keeps everything in view,
  /// and saying what that is.
  function mapControls() {
    const missing = client.status === "no-session" || !live.settings;
    assign($("fit"), { disabled: missing });
    assign($("follow-all"), { disabled: missing });
    if ($("follow-all").getAttribute("aria-pressed") !== String(autoFit && !missing)) $("follow-all").setAttribute("aria-pressed", String(autoFit && !missing));
    const people = shown().participants.size;
    const scope = `annotations and ${people} participant${people === 1 ? "" : "s"}`;
    if ($("follow-all-scope").textContent !== scope) {
      $("follow-all-scope").textContent = scope;
      $("follow-all").title = `Keep the ${scope} in view (where each participant is: the centre of their view, their location); panning or zooming turns it off`;
    }
    assign($("follow-shared"), { disabled: missing || (!live.sharedCamera && !followShared) });
  }

  const published = { inspector: null, feed: [] };
  function publish() {
    const state = shown();
    Object.assign(published, {
      status: client.status, session: live.session ?? sessionID, seq: live.seq, epoch: live.epoch,
      stale: stale(), staleSince,
      annotationCount: live.annotations.size,
      participants: [...state.participants.values()].map((p) => ({
        id: p.id, name: p.name, selection: p.selection ?? null, color: colorOf(p.id),
        visibleBounds: p.camera && p.viewport ? viewportBounds(p.camera, p.viewport) : null,
      })),
      peopleShown: [...document.querySelectorAll("#people li:not(.spacer)")].map((li) => li.dataset.participant),
      drags: [...state.drags].flatMap(([id, g]) => [...g].map(([pid, d]) => ({ id, participant: pid, state: d.state, coordinate: d.coordinate }))),
      refusals: refusals.map((r) => ({ id: r.id, participant: r.participant, holder: r.holder })),
      callout: state.callout, calloutBy: state.calloutBy, sharedCamera: state.sharedCamera, cameraLease: state.cameraLease,
      serverRates: { ...serverRates }, renderMs: timing.renderMs, drawMs: map.lastDrawMs, welcomes: timing.welcomes, resumes: timing.resumes,
      sessionAnnotations,
      labels: layers.output.labels, mapSize: { width: map.width ?? 0, height: map.height ?? 0 },
      autoFit, firstFrame: map.firstFrame, callouts: layers.output.callouts, layersShown: { ...layerShown },
      annotationListTotal: listed, rateHistory: rateHistory.loaded,
      mapBackground: map.lastColors?.water ?? map.colors.water, basemapLoaded: Boolean(map.basemap),
      // What draws the basemap ("maplibre" or "canvas"), and why not MapLibre, or MapLibre's last error.
      basemapRenderer: map.underlay ? "maplibre" : "canvas", basemapError: basemapError ?? map.underlay?.error ?? null,
      scale: $("scale-text").textContent, cursor: $("cursor").textContent, zoomedTo, hovered, theme: theme().dark ? "dark" : "light",
      reducedMotion: reducedMotion(), flashing: map.animating,
      annotationList: [...document.querySelectorAll("#annotation-list li:not(.spacer)")].length,
      history: { loaded: history.loaded, error: history.error, entries: history.entries.length, checkpoints: history.checkpoints.length,
        range: history.range() },
      replay: replay.active ? { active: true, time: replay.result.time, playing: replay.playing, speed: replay.speed,
        seq: replay.result.state.seq, annotations: Object.fromEntries([...replay.result.state.annotations].map(([id, a]) => [id, a.coordinate ?? null])),
        participants: [...replay.result.state.participants.values()].map((p) => p.name) } : { active: false, speed: replay.speed },
    });
    if (document.body.dataset.seq !== String(live.seq)) document.body.dataset.seq = String(live.seq);
  }
  window.meridianDashboard = {
    view: "session",
    get state() {
      return structuredClone({
        ...published, view: { ...map.view }, tilesLoaded: map.tilesLoaded, labels: layers.output.labels,
        mapSize: { width: map.width ?? 0, height: map.height ?? 0 }, scale: $("scale-text").textContent,
        // What the map asks of the server, and the server's view of it ({area, clusters, zoom}; null for the whole session).
        interest: { mode: mapInterest.mode, clusterBelow: CLUSTER_BELOW, pending: mapInterest.pending, view: live.view },
        // The clusters the last frame drew (x, y, r: where, in CSS pixels), and how many annotations it drew one by one.
        clusters: layers.output.clusters, drawnAnnotations: layers.output.drawn.length,
        clustersDrawMs: timing.clustersDrawMs, clusterDraws: timing.clusterDraws,
        // Nothing drawn, fitted or asked of the server is pending: the map shows `view` (for tests that look at pixels).
        settled: !fitQueued && !map.scheduled && !panelsQueued && Boolean(map.width) && !mapInterest.pending && !map.held
          && map.underlayIdle,
        callouts: layers.output.callouts, autoFit, fits: fitCount, frames: map.frameCount, firstFrame: map.firstFrame,
        // The last frame drew the live state dimmed, as of the lost connection.
        mapStale: layers.output.stale,
      });
    },
    annotation(id) { const a = live.annotations.get(id); return a ? structuredClone(a) : null; },
    /// The ids of the annotations the last frame drew one by one.
    drawn() { return [...layers.output.drawn]; },
  };

  // MARK: wiring

  function showMissing(missing) {
    const box = $("no-session");
    box.hidden = !missing;
    if (!missing) return;
    box.replaceChildren(el("p", {}, "There is no session ", el("strong", {}, sessionID), " on this server."),
      el("p", {}, "This page shows it as soon as a participant starts it. ",
        el("a", { href: `/dashboard/${location.hash}` }, "See all sessions")));
  }

  client.addEventListener("status", (e) => {
    if (e.detail === "live") staleSince = null;
    else if (staleSince === null && timing.welcomes > 0) staleSince = Date.now();
    $("offline").textContent = staleSince === null ? "Disconnected — reconnecting…"
      : `Disconnected at ${clock(staleSince)} — showing the session as it was then; reconnecting…`;
    headerStatus();
    showMissing(e.detail === "no-session");
    if (e.detail === "no-session") release(); // the world, with the notice over it
    refresh();
  });
  client.addEventListener("error", (e) => {
    if (client.status === "refused") $("status").textContent = `refused: ${e.detail.code}: ${e.detail.message}`;
  });
  client.addEventListener("welcome", (e) => {
    layers.invalidateStacking();
    timing.welcomes += 1;
    // The server's own rates for this session, about once a second, after its last minute.
    client.request("overview.watch").catch(() => {});
    rateHistory.fetch();
    if (e.detail.resumed) timing.resumes += 1;
    if (!e.detail.resumed) {
      timing.snapshotAt = client.receivedAt; // from the frame's arrival, parsing included
      timing.renderMs = null;
      timing.awaitClusters = Boolean(e.detail.interest?.clusters); // then the clusters that follow show the session
      for (const p of live.participants.values()) history.names.set(p.id, p.name);
    }
    // Should the map's interest not settle, the map is drawn all the same after a while.
    setTimeout(() => { if (!fitted && live.settings) { if (autoFit && !followShared) fitView(); release(); } }, 3000);
    // The log (possibly megabytes of checkpoints) is read once the snapshot is drawn.
    if (timing.renderMs === null) historyAfterRender = true; else fetchHistory();
  });
  let historyAfterRender = false;
  const fetchHistory = () => history.fetchNew().then(() => refresh());
  client.addEventListener("clusters", (e) => {
    timing.clustersAt = client.receivedAt;
    if (timing.awaitClusters) { timing.awaitClusters = false; timing.snapshotAt = client.receivedAt; }
    // Clusters of the whole world tell the session's size before the overview does (or without
    // it, for a token that allows this session only).
    const total = worldTotal(e.detail);
    if (total !== null && sessionAnnotations === null) mapInterest.sessionSize(total);
  });
  client.addEventListener("interest", (e) => {
    layers.invalidateStacking();
    // The whole session, or a resumed member's area: shown anew.
    if (e.detail.complete && e.detail.entered.length) { timing.snapshotAt = client.receivedAt; timing.renderMs = null; }
    for (const a of e.detail.entered) rememberShape(a);
    if (inspectOnArrival && live.annotations.has(inspectOnArrival)) { inspect(inspectOnArrival, { reveal: true }); inspectOnArrival = null; }
  });
  client.addEventListener("event", (e) => {
    const m = e.detail;
    eventsThisSecond += 1;
    if (m.type.startsWith("annotation.")) layers.invalidateStacking();
    if (m.type === "annotation.removed") { removed.add(m.id); shapeExtents.delete(m.id); }
    if (m.type === "annotation.added" || m.type === "annotation.updated") { removed.delete(m.annotation.id); rememberShape(m.annotation); }
    if (m.type === "drag" && (m.state === "ending" || m.state === "canceling")) {
      outcomes.push({ id: m.id, participant: m.participant, state: m.state, reason: m.reason, coordinate: m.coordinate, at: performance.now() });
    }
    if (m.type === "drag.refused") refusals.push({ id: m.id, participant: m.participant, holder: m.holder, at: performance.now() });
    if (m.transient && m.type !== "drag.refused") return; // moves and camera frames are not worth a feed line each
    history.addLive(m, live.epoch);
  });
  client.addEventListener("state", (e) => {
    const m = e.detail.event;
    // Cameras in motion (changing, before any end) count too: a crowd moving keeps the view fitted.
    const moved = !m || ["annotation.added", "annotation.removed", "annotation.updated", "camera.begin", "camera.changing",
      "camera.end", "participant.joined", "participant.left", "presence", "location"].includes(m.type);
    if (live.settings && !fitted && !mapInterest.settling) {
      // The snapshot is in: the first frame drawn is already fitted to it.
      if (autoFit && !followShared) fitView();
      release();
    } else if (live.settings && moved) queueFit();
    if (followShared && live.sharedCamera) followCamera();
    // Moves (camera frames, drags in progress) come many times a second: the map draws them at its pace.
    map.invalidate({ paced: Boolean(m?.transient) });
    refreshPanels();
  });

  /// After a map frame: the session counts as rendered once the map has drawn it fitted
  /// (the interest settled) and the panels have drawn it too (the next animation frame).
  function rendered() {
    if (!timing.snapshotAt || timing.renderMs !== null || timing.awaitClusters || timing.measuring || !fitted || mapInterest.settling) return;
    timing.measuring = true;
    nextFrame(() => {
      timing.measuring = false;
      if (timing.renderMs === null) { timing.renderMs = performance.now() - timing.snapshotAt; publish(); }
      if (historyAfterRender) { historyAfterRender = false; fetchHistory(); }
    });
  }

  /// Keeps everything in view until the user pans or zooms (at most every 400 ms; not while
  /// the map's interest is settling, its first clusters or the switch to the whole session).
  /// The view changes only when something left it or everything shrank to a corner of it,
  /// and not while the pointer moves over the map: what is under the cursor stays there.
  function queueFit() {
    if (!autoFit || followShared || fitQueued || replay.active || mapInterest.settling) return;
    fitQueued = true;
    // The first fit waits for nothing: until it the map is blank.
    const resting = () => !fitted || performance.now() - pointerAt >= 1500;
    const wait = Math.max(0, 400 - (performance.now() - lastFit), fitted ? 1500 - (performance.now() - pointerAt) : 0);
    setTimeout(() => nextFrame(() => {
      fitQueued = false;
      if (!resting()) { queueFit(); return; }
      lastFit = performance.now();
      if (autoFit && !followShared && !replay.active) fitView({ onlyWhenNeeded: true });
    }), wait);
  }

  /// The first frame is drawn once the view is known.
  function release() {
    if (fitted) return;
    fitted = true;
    map.held = false;
    map.invalidate();
    mapControls();
  }

  /// Auto-fit on or off ("Follow all"); on fits at once.
  function setAutoFit(on) {
    autoFit = on;
    if (on) { zoomedTo = null; fitView(); }
    mapControls();
    publish();
  }

  /// Shapes reach beyond where clusters count them (the centre of their box): their boxes are
  /// kept once seen, so a fit to clusters still shows them whole.
  function rememberShape(a) {
    if (a.type === "point" || mapInterest.mode !== "viewport") return;
    const lats = a.coordinates.map((c) => c.latitude), lons = a.coordinates.map((c) => c.longitude);
    shapeExtents.set(a.id, [{ latitude: Math.min(...lats), longitude: Math.min(...lons) }, { latitude: Math.max(...lats), longitude: Math.max(...lons) }]);
  }

  let fitCount = 0;
  function fitView({ onlyWhenNeeded = false } = {}) {
    const state = shown();
    const coords = [];
    for (const a of state.annotations.values()) {
      if (a.coordinate) coords.push(a.coordinate); else coords.push(...a.coordinates);
    }
    // A large session: what lies outside the area is not held, but every annotation lies in the
    // cell of its cluster, and the last fit showed the whole area, so the fits close in on it.
    const clusters = clustersShown();
    if (clusters) for (const c of clusters) coords.push(...clusterCell(c, live.clusters.view.zoom));
    if (state === live && mapInterest.mode === "viewport") for (const box of shapeExtents.values()) coords.push(...box);
    // Participants by where they are (their cameras' centres and their locations), not by all
    // they see: one zoomed out to a continent does not shrink the session to a dot.
    for (const p of state.participants.values()) coords.push(...whereIs(p));
    if (onlyWhenNeeded && map.width && coords.length) {
      // Everything still inside (a margin kept) and filling a good part of the view: keep it.
      const points = coords.map((c) => map.toScreen(c.latitude, c.longitude));
      const xs = points.map((p) => p.x), ys = points.map((p) => p.y);
      const inset = 0.03;
      const inside = Math.min(...xs) >= map.width * inset && Math.max(...xs) <= map.width * (1 - inset)
        && Math.min(...ys) >= map.height * inset && Math.max(...ys) <= map.height * (1 - inset);
      const fills = Math.max((Math.max(...xs) - Math.min(...xs)) / map.width, (Math.max(...ys) - Math.min(...ys)) / map.height) >= 0.5;
      if (inside && fills) { release(); return; }
    }
    fitCount += 1;
    map.fit(coords);
    release();
  }

  function followCamera() {
    const c = live.sharedCamera;
    const p = project(c.center.latitude, c.center.longitude);
    map.setView(p.x, p.y, c.zoom);
  }

  $("zoom-in").addEventListener("click", () => { setAutoFit(false); map.zoomBy(1); });
  $("zoom-out").addEventListener("click", () => { setAutoFit(false); map.zoomBy(-1); });
  $("fit").addEventListener("click", () => { zoomedTo = null; fitView(); });
  $("follow-all").addEventListener("click", () => setAutoFit(!autoFit));
  $("follow-shared").addEventListener("click", (e) => {
    followShared = !followShared;
    e.currentTarget.setAttribute("aria-pressed", String(followShared));
    if (followShared) setAutoFit(false);
    if (followShared && live.sharedCamera) followCamera();
  });
  $("people-filter").addEventListener("input", (e) => { peopleFilter = e.target.value.trim().toLowerCase(); revealMatchingPeople(); refresh(); });
  $("annotation-filter").addEventListener("input", (e) => { annotationFilter = e.target.value.trim().toLowerCase(); refresh(); });
  $("feed-participant").addEventListener("change", () => refresh());
  $("feed-type").addEventListener("change", () => refresh());
  $("inspector-close").addEventListener("click", () => { inspect(null); $("map").focus(); });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && inspected) { inspect(null); $("map").focus(); }
  });
  $("map").addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    // The cluster or annotation nearest the middle of the map, if one is close.
    const at = { x: map.width / 2, y: map.height / 2 };
    const cluster = clusterAt(layers.output.clusters, at, 40);
    if (cluster) { zoomIntoCluster(cluster); return; }
    inspect(hitTest(map, shown(), layers.stacking(shown()), at, parseFloat(px(16)) / 16, 40), { reveal: true });
  });

  // Charts: events per second received, and ping round trips.
  setInterval(() => {
    rate.push(eventsThisSecond);
    $("rate-now").textContent = `${eventsThisSecond}`;
    eventsThisSecond = 0;
    const now = performance.now();
    const flashing = !reducedMotion() && refusals.some((r) => now - r.at < 2000);
    map.animating = flashing;
    if (refusals.some((r) => now - r.at < 2100)) map.invalidate();
    while (refusals.length && now - refusals[0].at > 6000) { refusals.shift(); refresh(); }
    while (outcomes.length && now - outcomes[0].at > 6000) { outcomes.shift(); refresh(); }
    if (client.status === "live") {
      const sent = performance.now();
      client.request("ping").then(() => {
        const ms = performance.now() - sent;
        latency.push(ms);
        $("latency-now").textContent = `${ms.toFixed(1)} ms`;
      }, () => {});
    }
  }, 1000);
  client.addEventListener("overview", (e) => {
    const mine = e.detail.sessions.find((x) => x.session === sessionID);
    if (!mine) return;
    sessionAnnotations = mine.annotations;
    mapInterest.sessionSize(mine.annotations);
    serverRates.messagesPerSecond = mine.messagesPerSecond;
    serverRates.deliveriesPerSecond = mine.deliveriesPerSecond;
    serverRates.peakDeliveriesPerSecond = Math.max(serverRates.peakDeliveriesPerSecond, mine.deliveriesPerSecond);
    deliveries.push(mine.deliveriesPerSecond);
    $("server-in").textContent = mine.messagesPerSecond.toFixed(1);
    $("server-out").textContent = mine.deliveriesPerSecond.toFixed(1);
    publish();
  });
  client.addEventListener("refused", () => { map.animating = !reducedMotion(); refresh(); });

  // `?map=ZOOM/LATITUDE/LONGITUDE` (as on openstreetmap.org) opens the map there instead of fitting it.
  const start = (new URLSearchParams(location.search).get("map") ?? "").split("/").map(Number);
  if (start.length === 3 && start.every(Number.isFinite)) {
    autoFit = false;
    release();
    const p = project(start[1], start[2]);
    map.setView(p.x, p.y, start[0]);
  }
  // The legend's layer switches.
  for (const input of document.querySelectorAll("#legend-layers input[data-layer]")) {
    input.checked = layerShown[input.dataset.layer];
    input.addEventListener("change", () => { layerShown[input.dataset.layer] = input.checked; refresh(); });
  }
  // Side panel sections fold; virtual lists redraw when shown again.
  for (const section of document.querySelectorAll(".side > section[data-fold]")) collapsible(section, { open: section.dataset.fold !== "closed" });
  document.querySelector(".side").addEventListener("fold", () => { listKey = null; feedKey = null; refresh(); });
  mapControls();

  mapInterest.update(); // the join asks for the map's view
  client.connect();
  publish(); // the state is whole from the start, before the first frame
}
