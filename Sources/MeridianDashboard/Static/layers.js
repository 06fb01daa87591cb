// What the session view draws on the map, layer by layer, from a session state
// (live, or replayed from the event log), and a large session's clusters. People's
// viewports and locations are drawn first, as outlines, so annotations stay in their
// own colours on top of them. Labels are requested from every layer and placed at the
// end without overlaps, by priority and stable from frame to frame (labels.js).

import { bitmapOf, offscreenCanvas, viewportCorners } from "/dashboard/map.js";
import { drawClusters } from "/dashboard/clusters.js";
import { contrast } from "/dashboard/colors.js";
import { TIER } from "/dashboard/labels.js";

/// The opacity of an annotation the annotation filter leaves out.
const FILTERED_OUT = 0.2;
/// The default pin's box (marker units): its tip at (x, y), its outline's stroke inside.
const PIN = { x: 12, y: 31, width: 24, height: 33 };

/// `view` gives: state() (live or replayed), clusters() (the clusters to draw, or null),
/// name(id), colorOf(id), refused(id), matches(participant) (the participant filter),
/// annotationMatches(annotation) (the annotation filter: the rest is drawn faded and untitled),
/// inspected(), hovered(), shown(layer) (the legend's layer switches), labels, px(size),
/// markerScale(), overlays() (the boxes of the page's controls over the map, which labels keep
/// clear of), theme() ({labelBg, labelText, tint, panel, muted, line}), stale() (the
/// connection is lost: what is live (viewports, locations, selections, drags, the shared camera
/// and callout) is drawn faded, as of then).
/// `output` holds what the last frame drew: labels, clusters (with their places), and the
/// ids of the annotations drawn one by one.
export function createLayers(view) {
  let sorted = null;
  let sortedFor = null;
  let calloutBox = null;
  const output = { labels: [], clusters: [], drawn: [], callouts: 0, stale: false };
  // The opacity of what is live: faded while the connection is lost.
  const liveAlpha = () => (view.stale() ? 0.35 : 1);

  function stacking(state) {
    if (sortedFor !== state || !sorted) {
      sorted = [...state.annotations.values()].sort((a, b) => a.zIndex - b.zIndex || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      sortedFor = state;
    }
    return sorted;
  }

  const tint = (state) => state.settings?.tint ?? view.theme().tint;

  function tracePath(m, ctx, a) {
    const path = (ring) => ring.forEach((c, i) => {
      const p = m.toScreen(c.latitude, c.longitude);
      if (i === 0) ctx.moveTo(p.x, p.y); else ctx.lineTo(p.x, p.y);
    });
    ctx.beginPath();
    path(a.coordinates);
    if (a.type === "polygon") {
      ctx.closePath();
      for (const hole of a.holes ?? []) { path(hole); ctx.closePath(); }
    }
  }

  function drawShape(m, ctx, a, state, fade = 1) {
    const stroke = a.strokeColor ?? tint(state);
    const land = m.lastColors?.land ?? "#808080";
    if (contrast(stroke, land) < 1.6) {
      // A stroke close to the land's colour (white on light land): a thin casing in the ink under it.
      tracePath(m, ctx, a);
      ctx.globalAlpha = 0.7 * (a.alpha ?? 1) * fade;
      ctx.strokeStyle = view.theme().labelText;
      ctx.lineWidth = (a.type === "polygon" ? 2 : a.lineWidth ?? 3) + 2;
      ctx.lineJoin = "round";
      ctx.stroke();
    }
    ctx.globalAlpha = (a.alpha ?? 1) * fade;
    tracePath(m, ctx, a);
    if (a.type === "polygon") {
      ctx.fillStyle = a.fillColor ?? tint(state);
      ctx.fill("evenodd");
      ctx.lineWidth = 2;
    } else {
      ctx.lineWidth = a.lineWidth ?? 3;
      ctx.lineJoin = "round";
      ctx.lineCap = "round";
    }
    ctx.strokeStyle = a.strokeColor ?? tint(state);
    ctx.stroke();
    ctx.globalAlpha = 1;
  }

  /// Many points: a small square each, so a crowded session stays readable and fast.
  function drawDot(m, ctx, a, state) {
    const p = m.toScreen(a.coordinate.latitude, a.coordinate.longitude);
    if (p.x < -4 || p.y < -4 || p.x > m.width + 4 || p.y > m.height + 4) return false;
    ctx.fillStyle = a.enabled === false ? "#7b8794" : tint(state);
    ctx.fillRect(p.x - 2.5, p.y - 2.5, 5, 5);
    return true;
  }

  function drawPoint(m, ctx, a, state, refused, titled, fade = 1, k = view.markerScale()) {
    const p = m.toScreen(a.coordinate.latitude, a.coordinate.longitude);
    if (p.x < -40 || p.y < -40 || p.x > m.width + 40 || p.y > m.height + 40) return false;
    const x = p.x + (a.centerOffset?.dx ?? 0), y = p.y + (a.centerOffset?.dy ?? 0);
    const drags = state.drags.get(a.id);
    if (drags) {
      const [pid, d] = [...drags.entries()].pop();
      const stale = view.stale();
      ctx.beginPath();
      ctx.arc(x, y - 12 * k, 20 * k, 0, Math.PI * 2);
      ctx.strokeStyle = view.colorOf(pid);
      ctx.lineWidth = 4;
      ctx.globalAlpha = liveAlpha();
      ctx.setLineDash(d.state === "starting" || stale ? [4, 4] : []);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.globalAlpha = 1;
      view.labels.request(`${d.state} · ${view.name(pid)}`, x, y - 12 * k,
        { key: `drag:${a.id}`, kind: "drag", color: view.colorOf(pid), tier: TIER.focus, importance: 2, gap: 22 * k, faded: stale });
    }
    if (refused) {
      const phase = view.reducedMotion() || (performance.now() / 150) % 2 < 1;
      ctx.beginPath();
      ctx.arc(x, y - 12 * k, 26 * k, 0, Math.PI * 2);
      ctx.strokeStyle = phase ? "#ff5d73" : "#ffffff";
      ctx.lineWidth = 5;
      ctx.stroke();
    }
    const color = a.enabled === false ? "#7b8794" : tint(state);
    ctx.globalAlpha = fade;
    if (!a.image) {
      // Default marker: a pin whose tip is on the coordinate, at whole device pixels.
      const dpr = window.devicePixelRatio || 1;
      const sprite = pinSprite(color, k, dpr);
      ctx.drawImage(sprite, Math.round((x - PIN.x * k) * dpr) / dpr, Math.round((y - PIN.y * k) * dpr) / dpr, sprite.width / dpr, sprite.height / dpr);
    } else {
      ctx.save();
      ctx.translate(x, y);
      ctx.scale(k, k);
      ctx.translate(-x, -y);
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
      ctx.restore();
    }
    ctx.globalAlpha = 1;
    if (a.title && titled) requestTitle(a, x, y - 12 * k, 14 * k, state);
    return true;
  }

  /// A pin of `color` at marker scale `k` drawn once into a canvas of its own, then copied: hundreds
  /// of pins cost a frame hundreds of copies rather than hundreds of paths.
  const pins = new Map();
  let lastPin = null; // {color, k, dpr, sprite}: most pins are of one colour
  function pinSprite(color, k, dpr) {
    if (lastPin && lastPin.color === color && lastPin.k === k && lastPin.dpr === dpr) return lastPin.sprite;
    const key = `${color}|${k}|${dpr}`;
    let sprite = pins.get(key);
    if (sprite) { lastPin = { color, k, dpr, sprite }; return sprite; }
    if (pins.size >= 64) pins.clear();
    const c = offscreenCanvas(Math.ceil(PIN.width * k * dpr), Math.ceil(PIN.height * k * dpr)).getContext("2d");
    c.setTransform(k * dpr, 0, 0, k * dpr, 0, 0);
    const { x, y } = PIN;
    c.beginPath();
    c.moveTo(x, y);
    c.bezierCurveTo(x - 4, y - 8, x - 10, y - 12, x - 10, y - 19);
    c.arc(x, y - 19, 10, Math.PI, 0);
    c.bezierCurveTo(x + 10, y - 12, x + 4, y - 8, x, y);
    c.fillStyle = color;
    c.fill();
    c.strokeStyle = "#ffffff";
    c.lineWidth = 2;
    c.stroke();
    c.beginPath();
    c.arc(x, y - 19, 3.5, 0, Math.PI * 2);
    c.fillStyle = "#ffffff";
    c.fill();
    sprite = bitmapOf(c.canvas);
    pins.set(key, sprite);
    lastPin = { color, k, dpr, sprite };
    return sprite;
  }

  /// Ids selected by someone (each frame's): their titles are focus labels.
  let selected = new Set();

  /// An annotation's title: a focus label when selected, dragged, hovered or inspected, else
  /// by importance (stacking order: higher zIndex first; points before shapes).
  function requestTitle(a, x, y, gap, state) {
    const focus = selected.has(a.id) || state.drags.has(a.id) || view.hovered() === a.id || view.inspected() === a.id;
    view.labels.request(a.title, x, y, { key: `a:${a.id}`, tier: focus ? TIER.focus : TIER.annotation,
      importance: focus ? 1 : (a.zIndex ?? 0) * 2 + (a.type === "point" ? 1 : 0), gap });
  }

  function annotations(m, ctx) {
    const state = view.state();
    selected = new Set([...state.participants.values()].map((p) => p.selection).filter(Boolean));
    const dense = state.annotations.size > 1500;
    // Titles are asked for up to a few thousand annotations; the labels' budget keeps the map readable.
    const titled = state.annotations.size <= 3000 && view.shown("labels");
    const drawn = [];
    const k = view.markerScale();
    for (const a of stacking(state)) {
      const fade = view.annotationMatches(a) ? 1 : FILTERED_OUT;
      const inspected = view.inspected() === a.id;
      if (a.type !== "point") {
        drawShape(m, ctx, a, state, fade);
        drawn.push(a.id);
        if (a.title && titled && (fade === 1 || inspected)) {
          const c = a.coordinates[0];
          const p = m.toScreen(c.latitude, c.longitude);
          if (p.x > -50 && p.y > -50 && p.x < m.width + 50 && p.y < m.height + 50) requestTitle(a, p.x, p.y, 8, state);
        }
      } else if (dense && !state.drags.has(a.id) && !view.refused(a.id) && !inspected) {
        ctx.globalAlpha = fade;
        if (drawDot(m, ctx, a, state)) drawn.push(a.id);
        ctx.globalAlpha = 1;
      } else if (drawPoint(m, ctx, a, state, view.refused(a.id), (fade === 1 && (titled || selected.has(a.id))) || inspected, fade, k)) drawn.push(a.id);
    }
    output.drawn = drawn;
  }

  /// A large session's clusters, in the tint, their counts in whichever of white and ink reads better on it.
  function clusters(m, ctx) {
    const list = view.clusters();
    if (!list) { output.clusters = []; return; }
    const fill = tint(view.state());
    const text = contrast(fill, "#ffffff") >= contrast(fill, "#0b1320") ? "#ffffff" : "#0b1320";
    output.clusters = drawClusters(m, ctx, list, { fill, ring: "#ffffff", text });
  }

  /// Each participant's selection in their colour: a ring around a point, the
  /// outline of a polyline or polygon traced over it.
  function selections(m, ctx) {
    if (!view.shown("selections")) return;
    const state = view.state();
    const bySelection = new Map();
    for (const p of state.participants.values()) {
      if (!p.selection || !view.matches(p)) continue;
      if (!bySelection.has(p.selection)) bySelection.set(p.selection, []);
      bySelection.get(p.selection).push(p);
    }
    const inspected = view.inspected();
    if (inspected && state.annotations.has(inspected) && !bySelection.has(inspected)) bySelection.set(inspected, []);
    const k = view.markerScale();
    ctx.globalAlpha = liveAlpha();
    for (const [id, people] of bySelection) {
      const a = state.annotations.get(id);
      if (!a) continue;
      const rings = people.map((p) => view.colorOf(p.id));
      if (id === inspected) rings.push(view.theme().labelText);
      if (a.type === "point") {
        const s = m.toScreen(a.coordinate.latitude, a.coordinate.longitude);
        rings.forEach((color, i) => {
          ctx.beginPath();
          ctx.arc(s.x, s.y - 12 * k, (16 + i * 5) * k, 0, Math.PI * 2);
          ctx.strokeStyle = color;
          ctx.lineWidth = 3;
          ctx.setLineDash(i === people.length ? [3, 3] : []);
          ctx.stroke();
        });
        ctx.setLineDash([]);
      } else {
        // Widest first, so every selector's colour shows as a band along the shape.
        const base = a.type === "polyline" ? (a.lineWidth ?? 3) : 2;
        for (let i = rings.length - 1; i >= 0; i--) {
          tracePath(m, ctx, a);
          ctx.lineJoin = "round";
          ctx.lineCap = "round";
          ctx.strokeStyle = rings[i];
          ctx.lineWidth = base + 6 + i * 6;
          ctx.setLineDash(i === people.length ? [6, 4] : []);
          ctx.stroke();
        }
        ctx.setLineDash([]);
        ctx.globalAlpha = 1;
        drawShape(m, ctx, a, state, view.annotationMatches(a) ? 1 : FILTERED_OUT);
        ctx.globalAlpha = liveAlpha();
      }
    }
    ctx.globalAlpha = 1;
  }

  /// A participant's viewport on the screen: its corners, its largest extent and its middle.
  function viewportShape(m, p) {
    const corners = viewportCorners(p.camera, p.viewport).map((c) => m.worldToScreen(c.x, c.y));
    const xs = corners.map((c) => c.x), ys = corners.map((c) => c.y);
    const span = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys));
    return { corners, span, cx: xs.reduce((a, b) => a + b) / 4, cy: ys.reduce((a, b) => a + b) / 4 };
  }

  /// Each participant's viewport as an outline in their colour (filled only when the legend's
  /// switch says so), and their location: a dot in an outlined accuracy circle, a dashed
  /// circle alone when coarse. Under everything else, and drawn again only when its key changes.
  function presence(m, ctx) {
    const state = view.state();
    const alpha = liveAlpha();
    ctx.globalAlpha = alpha;
    const showViewports = view.shown("viewports"), fill = view.shown("viewportFill"), showLocations = view.shown("locations");
    for (const p of state.participants.values()) {
      if (!view.matches(p)) continue;
      const color = view.colorOf(p.id);
      if (p.camera && p.viewport && showViewports) {
        const { corners, span, cx, cy } = viewportShape(m, p);
        ctx.beginPath();
        corners.forEach((c, i) => (i === 0 ? ctx.moveTo(c.x, c.y) : ctx.lineTo(c.x, c.y)));
        ctx.closePath();
        if (fill) {
          ctx.globalAlpha = 0.1 * alpha;
          ctx.fillStyle = color;
          ctx.fill();
          ctx.globalAlpha = alpha;
        }
        ctx.strokeStyle = color;
        ctx.lineWidth = 2;
        ctx.stroke();
        if (span < 12) {
          // Too small to see as an outline at this zoom: a marker where it is.
          ctx.beginPath();
          ctx.arc(cx, cy, 5, 0, Math.PI * 2);
          ctx.fillStyle = color;
          ctx.fill();
          ctx.strokeStyle = view.theme().labelBg;
          ctx.lineWidth = 1.5;
          ctx.stroke();
        }
      }
      if (p.location && showLocations) {
        const c = p.location.coordinate;
        const s = m.toScreen(c.latitude, c.longitude);
        const r = Math.max(6, p.location.accuracy / (m.metresPerPixel || 1));
        const coarse = p.location.authorization === "reduced";
        ctx.beginPath();
        ctx.arc(s.x, s.y, r, 0, Math.PI * 2);
        ctx.setLineDash(coarse ? [6, 5] : []);
        ctx.strokeStyle = color;
        ctx.lineWidth = 1.5;
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.beginPath();
        ctx.arc(s.x, s.y, coarse ? 4 : 6, 0, Math.PI * 2);
        ctx.fillStyle = coarse ? view.theme().labelBg : color;
        ctx.fill();
        ctx.strokeStyle = coarse ? color : "#fff";
        ctx.lineWidth = 2;
        ctx.stroke();
      }
    }
    ctx.globalAlpha = 1;
  }
  /// All that `presence` draws depends on (with the view, which the map adds).
  presence.key = () => {
    const people = [...view.state().participants.values()].filter((p) => view.matches(p))
      .map((p) => [p.id, view.colorOf(p.id), p.camera, p.viewport, p.location]);
    return JSON.stringify([liveAlpha(), view.shown("viewports"), view.shown("viewportFill"), view.shown("locations"), view.theme().labelBg, people]);
  };

  /// One label per participant: at their location, else at their viewport's top corner.
  function presenceLabels(m) {
    const state = view.state();
    const faded = liveAlpha() < 1;
    output.stale = faded;
    const showViewports = view.shown("viewports"), showLocations = view.shown("locations");
    for (const p of state.participants.values()) {
      if (!view.matches(p)) continue;
      const color = view.colorOf(p.id);
      const key = `p:${p.id}`;
      if (p.camera && p.viewport && showViewports) {
        const { corners, span, cx, cy } = viewportShape(m, p);
        const label = (x, y, importance, gap = 4) => view.labels.request(p.name, x, y,
          { key, kind: "participant", color, tier: TIER.participant, importance, gap, faded });
        if (span < 12) {
          label(cx, cy, 0, 7);
        } else {
          // At its top corner, else anywhere else on its outline (its colour says whose it is):
          // the other corners, then the middles of its sides, each kept on the map.
          const onMap = (c) => [Math.max(0, Math.min(m.width, c.x)), Math.max(0, Math.min(m.height, c.y))];
          const top = corners.reduce((a, b) => (b.y < a.y ? b : a));
          const sides = corners.map((c, i) => ({ x: (c.x + corners[(i + 1) % 4].x) / 2, y: (c.y + corners[(i + 1) % 4].y) / 2 }));
          [top, ...corners.filter((c) => c !== top), ...sides].forEach((c, i) => label(...onMap(c), -i));
        }
      }
      if (p.location && showLocations) {
        const s = m.toScreen(p.location.coordinate.latitude, p.location.coordinate.longitude);
        view.labels.request(p.name, s.x, s.y, { key, kind: "participant", color, tier: TIER.participant, importance: 1, gap: 9, faded });
      }
    }
  }

  function sharedCamera(m, ctx) {
    if (!view.shown("sharedCamera")) return;
    const state = view.state();
    const cam = state.sharedCamera;
    if (!cam) return;
    const s = m.toScreen(cam.center.latitude, cam.center.longitude);
    ctx.globalAlpha = liveAlpha();
    ctx.strokeStyle = state.cameraLease ? view.colorOf(state.cameraLease) : view.theme().labelText;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(s.x - 14, s.y); ctx.lineTo(s.x + 14, s.y);
    ctx.moveTo(s.x, s.y - 14); ctx.lineTo(s.x, s.y + 14);
    ctx.stroke();
    ctx.beginPath();
    ctx.arc(s.x, s.y, 8, 0, Math.PI * 2);
    ctx.stroke();
    ctx.globalAlpha = 1;
  }

  function calloutAnchor(state) {
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

  function callout(m, ctx) {
    const state = view.state();
    const c = state.callout;
    const at = calloutAnchor(state);
    calloutBox = null;
    output.callouts = 0;
    if (!c || !at || !view.shown("callout")) return;
    const s = m.toScreen(at.coordinate.latitude, at.coordinate.longitude);
    const x = s.x + at.offset.dx, y = s.y + at.offset.dy - 34 * view.markerScale();
    const titleSize = parseFloat(view.px(14)), detailSize = parseFloat(view.px(12));
    ctx.font = `600 ${titleSize}px system-ui, sans-serif`;
    const w = Math.max(ctx.measureText(c.title).width, c.detail ? ctx.measureText(c.detail).width * 0.9 : 0) + 20;
    const h = c.detail ? titleSize + detailSize + 18 : titleSize + 14;
    // In the callout's own colours when it has them, else in the theme's.
    const theme = view.theme();
    ctx.globalAlpha = liveAlpha();
    ctx.fillStyle = c.backgroundColor ?? theme.panel;
    ctx.beginPath();
    ctx.roundRect(x - w / 2, y - h, w, h, 8);
    ctx.moveTo(x - 7, y); ctx.lineTo(x, y + 8); ctx.lineTo(x + 7, y);
    ctx.fill();
    ctx.strokeStyle = theme.line;
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.fillStyle = c.titleColor ?? theme.labelText;
    ctx.textAlign = "center";
    ctx.fillText(c.title, x, y - h + titleSize + 5);
    if (c.detail) {
      ctx.font = `${detailSize}px system-ui, sans-serif`;
      ctx.fillStyle = c.detailColor ?? theme.muted;
      ctx.fillText(c.detail, x, y - h + titleSize + detailSize + 9);
    }
    ctx.textAlign = "start";
    ctx.globalAlpha = 1;
    calloutBox = { x: x - w / 2, y: y - h, w, h: h + 8 };
    output.callouts = 1;
  }

  function labels(m, ctx) {
    const theme = view.theme();
    output.labels = view.labels.draw(ctx, {
      width: m.width, height: m.height, font: `600 ${view.px(13)} system-ui, sans-serif`,
      background: theme.labelBg, foreground: theme.labelText, border: theme.line,
      blocked: calloutBox ? [...view.overlays(), calloutBox] : view.overlays(),
    });
  }

  return {
    layers: [presence, presenceLabels, annotations, clusters, selections, sharedCamera, callout, labels],
    output,
    invalidateStacking() { sorted = null; },
    stacking,
  };
}
