// The Meridian dashboard: the server overview, or (with ?session=ID) one session
// watched live as a hidden viewer. It never changes shared state.

import { MeridianClient, MeridianOverview, pageToken, serverURL, withToken } from "/dashboard/meridian.js";
import { CanvasMap, project, unproject, viewportBounds, viewportCorners } from "/dashboard/map.js";
import { Sparkline } from "/dashboard/charts.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(window.location.search);
const url = params.get("server") ? withToken(params.get("server"), pageToken()) : serverURL();

function setStatus(status) {
  document.body.dataset.status = status;
  $("status").textContent = status;
  const offline = $("offline");
  if (offline) offline.hidden = !(status === "disconnected" || status === "reconnecting");
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(node.dataset, v);
    else if (k === "style") Object.assign(node.style, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c);
  return node;
}

// MARK: Overview

function showOverview() {
  document.body.dataset.view = "overview";
  $("overview").hidden = false;
  const overview = new MeridianOverview(url);
  const published = { status: "connecting", sessions: [] };
  window.meridianDashboard = { view: "overview", get state() { return structuredClone(published); } };
  overview.addEventListener("status", (e) => { published.status = e.detail; setStatus(e.detail); });
  // Under --auth jwt the page needs #token= (an owner or dashboard token for session *).
  overview.addEventListener("refused", (e) => { $("overview-summary").textContent = `Refused: ${e.detail.message}`; });
  overview.addEventListener("overview", (e) => {
    const m = e.detail;
    published.sessions = m.sessions;
    published.connections = m.connections;
    $("overview-summary").textContent =
      `${m.sessions.length} session${m.sessions.length === 1 ? "" : "s"}, ${m.connections} connection${m.connections === 1 ? "" : "s"}`;
    const total = (key) => m.sessions.reduce((sum, s) => sum + s[key], 0);
    const tiles = [["Sessions", m.sessions.length], ["Participants", total("participants")], ["Dashboards", total("dashboards")],
      ["Drags now", total("drags")], ["Messages/s", total("messagesPerSecond").toFixed(1)], ["Deliveries/s", total("deliveriesPerSecond").toFixed(1)]];
    $("tiles").replaceChildren(...tiles.map(([label, value]) => el("div", { className: "tile" }, el("strong", {}, String(value)), el("span", {}, label))));
    // Busy sessions first, then the rest by id; idle ones dimmed.
    const busy = (s) => s.participants * 1000 + s.dashboards + s.messagesPerSecond;
    const ordered = [...m.sessions].sort((a, b) => busy(b) - busy(a) || (a.session < b.session ? -1 : 1));
    const rows = ordered.map((s) => el("tr", { dataset: { session: s.session }, className: s.participants + s.dashboards === 0 ? "idle" : "" },
      el("td", {}, el("a", { href: `/dashboard/?session=${encodeURIComponent(s.session)}${location.hash}` }, s.session)),
      el("td", {}, String(s.participants)), el("td", {}, String(s.dashboards)),
      el("td", {}, String(s.annotations)), el("td", { className: s.drags > 0 ? "busy" : "" }, String(s.drags)),
      el("td", {}, s.messagesPerSecond.toFixed(1)), el("td", {}, s.deliveriesPerSecond.toFixed(1)),
      el("td", {}, String(s.seq))));
    $("sessions").replaceChildren(...rows);
  });
  overview.connect();
}

// MARK: Session view

function describeEvent(m, name) {
  switch (m.type) {
    case "participant.joined": return `${m.participant.name} joined as ${m.participant.role}`;
    case "participant.left": return `${name(m.participant)} left (${m.reason})`;
    case "camera.begin": return `${name(m.participant)} starts moving the ${m.target} camera`;
    case "camera.end": return `${name(m.participant)} moved the ${m.target} camera (zoom ${m.camera.zoom.toFixed(1)})`;
    case "camera.lease": return m.holder ? `${name(m.holder)} holds the shared camera (${m.reason})` : `shared camera released (${m.reason})`;
    case "follow": return `${name(m.participant)} follows ${m.target === null ? "nobody" : m.target === "shared" ? "the shared camera" : name(m.target)}`;
    case "annotation.added": return `added ${m.annotation.type} ${m.annotation.id}`;
    case "annotation.updated": return `updated ${m.annotation.id}`;
    case "annotation.removed": return `removed ${m.id}`;
    case "selection": return m.annotation ? `${name(m.participant)} selected ${m.annotation}` : `${name(m.participant)} deselected`;
    case "callout.shown": return `${name(m.by)} shows callout “${m.callout.title}”`;
    case "callout.hidden": return `callout hidden (${m.reason})`;
    case "callout.tapped": return `${name(m.by)} tapped the callout ${m.part}`;
    case "drag": return `${name(m.participant)} drag ${m.id}: ${m.state}${m.reason ? ` (${m.reason})` : ""}`;
    case "drag.refused": return `${name(m.participant)} refused dragging ${m.id}: held by ${m.holder ? name(m.holder) : "another participant"}`;
    case "map.load": return `${name(m.participant)} map ${m.state}${m.message ? `: ${m.message}` : ""}`;
    case "location": return m.location ? `${name(m.participant)} location` : `${name(m.participant)} stopped sharing location`;
    case "settings": return `settings: policy ${m.settings.dragPolicy}, tint ${m.settings.tint}`;
    default: return m.type;
  }
}

async function showSession(sessionID, config) {
  document.body.dataset.view = "session";
  $("session").hidden = false;
  $("title").textContent = sessionID;
  document.title = `${sessionID} · Meridian`;

  const client = new MeridianClient(url, { session: sessionID, name: "Dashboard", role: "viewer", hidden: true });
  const state = client.state;
  const refusals = []; // {id, participant, holder, at}
  const outcomes = []; // ended drags shown for a while: {id, participant, state, reason, coordinate, at}
  const feedLimit = 200;
  const rate = new Sparkline($("rate-chart"), { color: "#4cc9f0", unit: "/s" });
  const latency = new Sparkline($("latency-chart"), { color: "#ffb84d", unit: " ms" });
  const deliveries = new Sparkline($("server-chart"), { color: "#49d49d", unit: "/s" });
  const serverRates = { messagesPerSecond: null, deliveriesPerSecond: null, peakDeliveriesPerSecond: 0 };
  let eventsThisSecond = 0;
  let sorted = null; // annotations in stacking order, rebuilt when they change
  let followShared = false;
  let autoFit = true; // keep everything in view until someone pans or zooms
  let fitQueued = false;
  const timing = { snapshotAt: 0, renderMs: null, welcomes: 0, resumes: 0 };

  const departed = new Map(); // names of participants that left, for the feed
  const name = (pid) => state.participants.get(pid)?.name ?? departed.get(pid) ?? pid;
  const remember = () => { for (const p of state.participants.values()) departed.set(p.id, p.name); };
  const colorOf = (pid) => state.participants.get(pid)?.color ?? "#9aa5b1";
  const tint = () => state.settings?.tint ?? "#007aff";

  const map = new CanvasMap($("map"), {
    tileURL: config.tileURL,
    onUserMove: () => { autoFit = false; },
    onResize: () => { if (autoFit && !followShared && state.settings) fitView(); },
  });
  // Text on the map follows the page's font size (larger on a wall screen).
  const px = (size) => `${Math.round(size * (parseFloat(getComputedStyle(document.documentElement).fontSize) / 16))}px`;

  function stacking() {
    if (!sorted) {
      sorted = [...state.annotations.values()].sort((a, b) => a.zIndex - b.zIndex || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }
    return sorted;
  }

  let markerScale = 1;
  function drawAnnotations(m, ctx) {
    markerScale = parseFloat(px(16)) / 16;
    const refusedIDs = new Set(refusals.filter((r) => performance.now() - r.at < 2000).map((r) => r.id));
    const dense = state.annotations.size > 1500;
    for (const a of stacking()) {
      if (a.type !== "point") drawShape(m, ctx, a);
      else if (dense && !state.drags.has(a.id) && !refusedIDs.has(a.id)) drawDot(m, ctx, a);
      else drawPoint(m, ctx, a, refusedIDs.has(a.id));
    }
  }

  function drawShape(m, ctx, a) {
    const path = (ring) => {
      ring.forEach((c, i) => {
        const p = m.toScreen(c.latitude, c.longitude);
        if (i === 0) ctx.moveTo(p.x, p.y); else ctx.lineTo(p.x, p.y);
      });
    };
    ctx.globalAlpha = a.alpha ?? 1;
    ctx.beginPath();
    path(a.coordinates);
    if (a.type === "polygon") {
      ctx.closePath();
      for (const hole of a.holes ?? []) { path(hole); ctx.closePath(); }
      ctx.fillStyle = a.fillColor ?? tint();
      ctx.fill("evenodd");
      ctx.lineWidth = 2;
    } else {
      ctx.lineWidth = a.lineWidth ?? 3;
      ctx.lineJoin = "round";
      ctx.lineCap = "round";
    }
    ctx.strokeStyle = a.strokeColor ?? tint();
    ctx.stroke();
    ctx.globalAlpha = 1;
  }

  /// Many points: a small dot each, so a crowded session stays readable and fast.
  function drawDot(m, ctx, a) {
    const p = m.toScreen(a.coordinate.latitude, a.coordinate.longitude);
    if (p.x < -4 || p.y < -4 || p.x > m.width + 4 || p.y > m.height + 4) return;
    ctx.fillStyle = a.enabled === false ? "#7b8794" : tint();
    ctx.fillRect(p.x - 2.5, p.y - 2.5, 5, 5);
  }

  function drawPoint(m, ctx, a, refused) {
    const p = m.toScreen(a.coordinate.latitude, a.coordinate.longitude);
    if (p.x < -40 || p.y < -40 || p.x > m.width + 40 || p.y > m.height + 40) return;
    const x = p.x + (a.centerOffset?.dx ?? 0), y = p.y + (a.centerOffset?.dy ?? 0);
    const drags = state.drags.get(a.id);
    if (drags) {
      const [pid, d] = [...drags.entries()].pop();
      ctx.beginPath();
      ctx.arc(x, y - 12, 20, 0, Math.PI * 2);
      ctx.strokeStyle = colorOf(pid);
      ctx.lineWidth = 4;
      ctx.setLineDash(d.state === "starting" ? [4, 4] : []);
      ctx.stroke();
      ctx.setLineDash([]);
      label(ctx, `${d.state} · ${name(pid)}`, x + 22, y - 28, colorOf(pid));
    }
    if (refused) {
      const phase = (performance.now() / 150) % 2 < 1;
      ctx.beginPath();
      ctx.arc(x, y - 12, 26, 0, Math.PI * 2);
      ctx.strokeStyle = phase ? "#ff5d73" : "#ffffff";
      ctx.lineWidth = 5;
      ctx.stroke();
    }
    const color = a.enabled === false ? "#7b8794" : tint();
    const k = markerScale;
    ctx.save();
    ctx.translate(x, y);
    ctx.scale(k, k);
    ctx.translate(-x, -y);
    if (a.image) {
      ctx.fillStyle = "#f4f7fb";
      ctx.strokeStyle = color;
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.roundRect(x - 13, y - 13, 26, 26, 6);
      ctx.fill();
      ctx.stroke();
      ctx.fillStyle = "#0b1320";
      ctx.font = "bold 13px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText(a.image.slice(0, 2), x, y + 1);
      ctx.textAlign = "start";
      ctx.textBaseline = "alphabetic";
    } else {
      // Default marker: a pin whose tip is on the coordinate.
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.bezierCurveTo(x - 4, y - 8, x - 10, y - 12, x - 10, y - 19);
      ctx.arc(x, y - 19, 10, Math.PI, 0);
      ctx.bezierCurveTo(x + 10, y - 12, x + 4, y - 8, x, y);
      ctx.fillStyle = color;
      ctx.fill();
      ctx.strokeStyle = "#ffffff";
      ctx.lineWidth = 2;
      ctx.stroke();
      ctx.beginPath();
      ctx.arc(x, y - 19, 3.5, 0, Math.PI * 2);
      ctx.fillStyle = "#ffffff";
      ctx.fill();
    }
    ctx.restore();
    if (a.title && state.annotations.size <= 300) label(ctx, a.title, x + 14, y - 6, null);
  }

  function label(ctx, text, x, y, color) {
    ctx.font = `600 ${px(13)} system-ui, sans-serif`;
    const w = ctx.measureText(text).width;
    const h = parseFloat(ctx.font.match(/(\d+)px/)[1]);
    ctx.fillStyle = "#0b1320cc";
    ctx.fillRect(x - 3, y - h, w + 6, h + 5);
    ctx.fillStyle = color ?? "#e8eef7";
    ctx.fillText(text, x, y);
  }

  function drawPresence(m, ctx) {
    for (const p of state.participants.values()) {
      if (p.camera && p.viewport) {
        const corners = viewportCorners(p.camera, p.viewport).map((c) => m.worldToScreen(c.x, c.y));
        ctx.beginPath();
        corners.forEach((c, i) => (i === 0 ? ctx.moveTo(c.x, c.y) : ctx.lineTo(c.x, c.y)));
        ctx.closePath();
        ctx.strokeStyle = p.color;
        ctx.lineWidth = 2.5;
        ctx.globalAlpha = 0.9;
        ctx.stroke();
        ctx.globalAlpha = 0.08;
        ctx.fillStyle = p.color;
        ctx.fill();
        ctx.globalAlpha = 1;
        const top = corners.reduce((a, b) => (b.y < a.y ? b : a));
        label(ctx, p.name, top.x + 4, top.y + 16, p.color);
      }
      if (p.location) {
        const c = p.location.coordinate;
        const s = m.toScreen(c.latitude, c.longitude);
        const metresPerPixel = (40075016 * Math.cos((c.latitude * Math.PI) / 180)) / m.scale;
        const r = Math.max(6, p.location.accuracy / metresPerPixel);
        const coarse = p.location.authorization === "reduced";
        ctx.beginPath();
        ctx.arc(s.x, s.y, r, 0, Math.PI * 2);
        ctx.fillStyle = p.color;
        ctx.globalAlpha = coarse ? 0.12 : 0.2;
        ctx.fill();
        ctx.globalAlpha = 1;
        ctx.setLineDash(coarse ? [6, 5] : []);
        ctx.strokeStyle = p.color;
        ctx.lineWidth = 1.5;
        ctx.stroke();
        ctx.setLineDash([]);
        if (!coarse) {
          ctx.beginPath();
          ctx.arc(s.x, s.y, 6, 0, Math.PI * 2);
          ctx.fillStyle = p.color;
          ctx.fill();
          ctx.strokeStyle = "#fff";
          ctx.lineWidth = 2;
          ctx.stroke();
        }
        label(ctx, coarse ? `${p.name} (coarse)` : p.name, s.x + 9, s.y - 9, p.color);
      }
    }
  }

  function drawSelections(m, ctx) {
    const bySelection = new Map();
    for (const p of state.participants.values()) {
      if (!p.selection) continue;
      if (!bySelection.has(p.selection)) bySelection.set(p.selection, []);
      bySelection.get(p.selection).push(p);
    }
    for (const [id, people] of bySelection) {
      const a = state.annotations.get(id);
      if (!a) continue;
      const c = a.type === "point" ? a.coordinate : a.coordinates[0];
      const s = m.toScreen(c.latitude, c.longitude);
      people.forEach((p, i) => {
        ctx.beginPath();
        ctx.arc(s.x, s.y - (a.type === "point" ? 12 : 0), 16 + i * 5, 0, Math.PI * 2);
        ctx.strokeStyle = p.color;
        ctx.lineWidth = 3;
        ctx.stroke();
      });
    }
  }

  function drawSharedCamera(m, ctx) {
    const cam = state.sharedCamera;
    if (!cam) return;
    const s = m.toScreen(cam.center.latitude, cam.center.longitude);
    ctx.strokeStyle = state.cameraLease ? colorOf(state.cameraLease) : "#ffffff";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(s.x - 14, s.y); ctx.lineTo(s.x + 14, s.y);
    ctx.moveTo(s.x, s.y - 14); ctx.lineTo(s.x, s.y + 14);
    ctx.stroke();
    ctx.beginPath();
    ctx.arc(s.x, s.y, 8, 0, Math.PI * 2);
    ctx.stroke();
  }

  function calloutAnchor() {
    const anchor = state.callout?.anchor;
    if (!anchor) return null;
    if (anchor.coordinate) return { coordinate: anchor.coordinate, offset: { dx: 0, dy: 0 } };
    if (anchor.annotation) {
      const a = state.annotations.get(anchor.annotation);
      return a?.coordinate ? { coordinate: a.coordinate, offset: a.calloutOffset ?? { dx: 0, dy: 0 } } : null;
    }
    const loc = state.participants.get(anchor.participant)?.location;
    return loc ? { coordinate: loc.coordinate, offset: { dx: 0, dy: 0 } } : null;
  }

  function drawCallout(m, ctx) {
    const c = state.callout;
    const at = calloutAnchor();
    if (!c || !at) return;
    const s = m.toScreen(at.coordinate.latitude, at.coordinate.longitude);
    const x = s.x + at.offset.dx, y = s.y + at.offset.dy - 34 * markerScale;
    const titleSize = parseFloat(px(14)), detailSize = parseFloat(px(12));
    ctx.font = `600 ${titleSize}px system-ui, sans-serif`;
    const w = Math.max(ctx.measureText(c.title).width, c.detail ? ctx.measureText(c.detail).width * 0.9 : 0) + 20;
    const h = c.detail ? titleSize + detailSize + 18 : titleSize + 14;
    ctx.fillStyle = c.backgroundColor ?? "#fffdf5";
    ctx.beginPath();
    ctx.roundRect(x - w / 2, y - h, w, h, 8);
    ctx.moveTo(x - 7, y); ctx.lineTo(x, y + 8); ctx.lineTo(x + 7, y);
    ctx.fill();
    ctx.fillStyle = c.titleColor ?? "#111111";
    ctx.textAlign = "center";
    ctx.fillText(c.title, x, y - h + titleSize + 5);
    if (c.detail) {
      ctx.font = `${detailSize}px system-ui, sans-serif`;
      ctx.fillStyle = c.detailColor ?? "#555555";
      ctx.fillText(c.detail, x, y - h + titleSize + detailSize + 9);
    }
    ctx.textAlign = "start";
  }

  map.setLayers([drawAnnotations, drawSelections, drawPresence, drawSharedCamera, drawCallout]);

  // MARK: panels

  function renderPeople() {
    const people = [...state.participants.values()];
    $("people-count").textContent = `(${people.length})`;
    $("people").replaceChildren(...people.map((p) => {
      const facts = [p.role];
      if (state.cameraLease === p.id) facts.push("holds shared camera");
      if (p.selection) facts.push(`selected ${p.selection}`);
      if (p.following) facts.push(`follows ${p.following === "shared" ? "shared camera" : name(p.following)}`);
      if (p.mapLoad) facts.push(`map ${p.mapLoad.state}`);
      if (p.location) facts.push(p.location.authorization === "reduced" ? "location (coarse)" : "location");
      if (p.camera) facts.push(`zoom ${p.camera.zoom.toFixed(1)}`);
      return el("li", { dataset: { participant: p.id } },
        el("span", { className: "swatch", style: { background: p.color }, ariaHidden: "true" }),
        el("strong", {}, p.name), el("span", { className: "meta" }, facts.join(" · ")));
    }));
  }

  function renderDrags() {
    const now = performance.now();
    const items = [];
    for (const [id, group] of state.drags) {
      for (const [pid, d] of group) {
        items.push(el("li", { dataset: { annotation: id, participant: pid, state: d.state }, style: { borderLeftColor: colorOf(pid) } },
          el("span", { className: "state" }, d.state), ` ${id} · ${name(pid)} `,
          el("small", {}, `${d.coordinate.latitude.toFixed(5)}, ${d.coordinate.longitude.toFixed(5)}`)));
      }
    }
    for (const o of outcomes) {
      if (now - o.at > 6000) continue;
      const what = o.state === "ending" ? "committed" : `restored${o.reason ? ` (${o.reason.replace("_", " ")})` : ""}`;
      items.push(el("li", { className: `outcome ${o.state}`, dataset: { annotation: o.id, participant: o.participant, state: o.state } },
        el("span", { className: "state" }, o.state), ` ${o.id} · ${name(o.participant)} — ${what} `,
        el("small", {}, `${o.coordinate.latitude.toFixed(5)}, ${o.coordinate.longitude.toFixed(5)}`)));
    }
    for (const r of refusals) {
      if (now - r.at > 6000) continue;
      items.push(el("li", { className: "refused", dataset: { annotation: r.id, participant: r.participant, state: "refused" } },
        el("span", { className: "state" }, "refused"), ` ${name(r.participant)} on ${r.id} — held by ${r.holder ? name(r.holder) : "?"}`));
    }
    $("drags").replaceChildren(...(items.length ? items : [el("li", { className: "empty" }, "none")]));
  }

  function renderShared() {
    const cam = state.sharedCamera;
    const holder = state.cameraLease ? name(state.cameraLease) : "nobody";
    $("shared-camera").textContent = cam
      ? `${cam.center.latitude.toFixed(4)}, ${cam.center.longitude.toFixed(4)} · zoom ${cam.zoom.toFixed(1)} · bearing ${Math.round(cam.bearing)}° — held by ${holder}`
      : `none — held by ${holder}`;
    const c = state.callout;
    const box = $("callout");
    box.hidden = !c;
    if (c) {
      const anchor = c.anchor.annotation ? `on ${c.anchor.annotation}` : c.anchor.participant ? `on ${name(c.anchor.participant)}` : "at a coordinate";
      box.replaceChildren(el("strong", {}, c.title), ...(c.detail ? [el("span", {}, c.detail), el("br")] : []),
        el("small", {}, `shared callout ${anchor}, shown by ${name(state.calloutBy)}`));
    }
  }

  const feed = $("feed");
  function addFeed(m) {
    const item = el("li", { className: `t-${m.type.replace(".", "-")}` },
      el("span", { className: "seq" }, m.transient ? "·" : String(m.seq ?? "")), describeEvent(m, name));
    feed.prepend(item);
    while (feed.childElementCount > feedLimit) feed.lastElementChild.remove();
  }

  let panelsQueued = false;
  function refresh() {
    map.invalidate();
    if (panelsQueued) return;
    panelsQueued = true;
    requestAnimationFrame(() => {
      panelsQueued = false;
      renderPeople();
      renderDrags();
      renderShared();
      publish();
    });
  }

  // MARK: test and automation view (read-only)

  const published = {};
  function publish() {
    Object.assign(published, {
      status: client.status, session: state.session, seq: state.seq,
      annotationCount: state.annotations.size,
      participants: [...state.participants.values()].map((p) => ({
        id: p.id, name: p.name, selection: p.selection ?? null,
        visibleBounds: p.camera && p.viewport ? viewportBounds(p.camera, p.viewport) : null,
      })),
      drags: [...state.drags].flatMap(([id, g]) => [...g].map(([pid, d]) => ({ id, participant: pid, state: d.state, coordinate: d.coordinate }))),
      refusals: refusals.map((r) => ({ id: r.id, participant: r.participant, holder: r.holder })),
      callout: state.callout, calloutBy: state.calloutBy, sharedCamera: state.sharedCamera, cameraLease: state.cameraLease,
      serverRates: { ...serverRates }, renderMs: timing.renderMs, drawMs: map.lastDrawMs, welcomes: timing.welcomes, resumes: timing.resumes,
    });
    document.body.dataset.seq = String(state.seq);
  }
  window.meridianDashboard = {
    view: "session",
    get state() { return structuredClone({ ...published, view: { ...map.view }, tilesLoaded: map.tilesLoaded }); },
    annotation(id) { const a = state.annotations.get(id); return a ? structuredClone(a) : null; },
  };

  // MARK: wiring

  client.addEventListener("status", (e) => { setStatus(e.detail); publish(); });
  client.addEventListener("error", (e) => {
    if (client.status === "refused") $("status").textContent = `refused: ${e.detail.code}: ${e.detail.message}`;
  });
  client.addEventListener("welcome", (e) => {
    sorted = null;
    remember();
    timing.welcomes += 1;
    // The server's own rates for this session, about once a second.
    client.request("overview.watch").catch(() => {});
    if (e.detail.resumed) timing.resumes += 1;
    if (!e.detail.resumed) {
      timing.snapshotAt = client.receivedAt; // from the frame's arrival, parsing included
      timing.renderMs = null;
      feed.replaceChildren();
      addFeed({ type: "welcome", seq: e.detail.seq });
    }
  });
  client.addEventListener("event", (e) => {
    const m = e.detail;
    eventsThisSecond += 1;
    if (m.type.startsWith("annotation.")) sorted = null;
    if (m.type === "participant.joined") departed.set(m.participant.id, m.participant.name);
    if (m.type === "drag" && (m.state === "ending" || m.state === "canceling")) {
      outcomes.push({ id: m.id, participant: m.participant, state: m.state, reason: m.reason, coordinate: m.coordinate, at: performance.now() });
    }
    if (m.type === "drag.refused") refusals.push({ id: m.id, participant: m.participant, holder: m.holder, at: performance.now() });
    if (m.transient && m.type !== "drag.refused") return; // moves and camera frames are not worth a feed line each
    addFeed(m);
  });
  client.addEventListener("state", (e) => {
    const m = e.detail.event;
    const moved = !m || ["annotation.added", "annotation.removed", "annotation.updated", "camera.end", "participant.joined"].includes(m.type);
    if (autoFit && !followShared && state.settings && moved && !fitQueued) {
      fitQueued = true;
      requestAnimationFrame(() => { fitQueued = false; if (autoFit && !followShared) fitView(); });
    }
    if (followShared && state.sharedCamera) followCamera();
    refresh();
    if (timing.snapshotAt && timing.renderMs === null) {
      // Rendered once the map and panels have drawn the snapshot.
      requestAnimationFrame(() => requestAnimationFrame(() => {
        if (timing.renderMs === null) { timing.renderMs = performance.now() - timing.snapshotAt; publish(); }
      }));
    }
  });

  function fitView() {
    const coords = [];
    for (const a of state.annotations.values()) {
      if (a.coordinate) coords.push(a.coordinate); else coords.push(...a.coordinates);
    }
    for (const p of state.participants.values()) {
      if (p.camera && p.viewport) {
        for (const c of viewportCorners(p.camera, p.viewport)) coords.push(unproject(c.x, c.y));
      } else if (p.camera) coords.push(p.camera.center);
      if (p.location) coords.push(p.location.coordinate);
    }
    map.fit(coords);
  }

  function followCamera() {
    const c = state.sharedCamera;
    const p = project(c.center.latitude, c.center.longitude);
    map.setView(p.x, p.y, c.zoom);
  }

  $("zoom-in").addEventListener("click", () => { autoFit = false; map.zoomBy(1); });
  $("zoom-out").addEventListener("click", () => { autoFit = false; map.zoomBy(-1); });
  $("fit").addEventListener("click", () => { autoFit = true; fitView(); });
  $("follow-shared").addEventListener("click", (e) => {
    followShared = !followShared;
    e.currentTarget.setAttribute("aria-pressed", String(followShared));
    if (followShared && state.sharedCamera) followCamera();
  });

  // Charts: events per second received, and ping round trips.
  setInterval(() => {
    rate.push(eventsThisSecond);
    $("rate-now").textContent = `${eventsThisSecond}`;
    eventsThisSecond = 0;
    const now = performance.now();
    const flashing = refusals.some((r) => now - r.at < 2000);
    map.animating = flashing;
    if (flashing) map.invalidate();
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
    serverRates.messagesPerSecond = mine.messagesPerSecond;
    serverRates.deliveriesPerSecond = mine.deliveriesPerSecond;
    serverRates.peakDeliveriesPerSecond = Math.max(serverRates.peakDeliveriesPerSecond, mine.deliveriesPerSecond);
    deliveries.push(mine.deliveriesPerSecond);
    $("server-in").textContent = mine.messagesPerSecond.toFixed(1);
    $("server-out").textContent = mine.deliveriesPerSecond.toFixed(1);
    publish();
  });
  client.addEventListener("refused", () => { map.animating = true; refresh(); });

  client.connect();
}

async function main() {
  let config = { tileURL: null };
  try {
    const response = await fetch("/dashboard/config.json");
    if (response.ok) config = await response.json();
  } catch (_) { /* served elsewhere: defaults */ }
  const sessionID = params.get("session");
  if (sessionID) showSession(sessionID, config); else showOverview();
}

main();
