// A small Web Mercator map on a canvas: works with no tile server (an offline
// basemap of coastlines and countries, and a graticule), optionally draws raster
// tiles under the annotations. With an `underlay` (gl-basemap.js) the basemap is drawn
// under the canvas by MapLibre GL JS instead, and the canvas draws the graticule and
// the layers above it. Colours come from the page's CSS (themes).

import { nextFrame } from "/dashboard/ui.js";

const MAX_LAT = 85.0511287798;
const TILE = 256;

export function project(lat, lon) {
  const φ = (Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180;
  return { x: (lon + 180) / 360, y: (1 - Math.log(Math.tan(φ) + 1 / Math.cos(φ)) / Math.PI) / 2 };
}

export function unproject(x, y) {
  const n = Math.PI - 2 * Math.PI * y;
  return { latitude: (180 / Math.PI) * Math.atan(Math.sinh(n)), longitude: x * 360 - 180 };
}

/// The four corners (world units) of what a camera shows in a viewport of
/// width x height points, rotated by the camera's bearing (pitch is ignored).
export function viewportCorners(camera, viewport) {
  const c = project(camera.center.latitude, camera.center.longitude);
  const unit = 1 / (TILE * 2 ** camera.zoom);
  const b = ((camera.bearing || 0) * Math.PI) / 180;
  const hw = viewport.width / 2, hh = viewport.height / 2;
  return [[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]].map(([dx, dy]) => ({
    x: c.x + (dx * Math.cos(b) - dy * Math.sin(b)) * unit,
    y: c.y + (dx * Math.sin(b) + dy * Math.cos(b)) * unit,
  }));
}

/// The geographic bounds of a participant's visible area.
export function viewportBounds(camera, viewport) {
  const corners = viewportCorners(camera, viewport).map((p) => unproject(p.x, p.y));
  const lats = corners.map((c) => c.latitude), lons = corners.map((c) => c.longitude);
  return {
    southWest: { latitude: Math.min(...lats), longitude: Math.min(...lons) },
    northEast: { latitude: Math.max(...lats), longitude: Math.max(...lons) },
  };
}

/// A canvas off the page, `width` x `height` device pixels.
export function offscreenCanvas(width, height) {
  if (typeof OffscreenCanvas === "function") return new OffscreenCanvas(width, height);
  return Object.assign(document.createElement("canvas"), { width, height });
}

/// What was drawn on an offscreen canvas as a bitmap, which frames copy as it is (a canvas would
/// be copied anew each time); the canvas is left blank. Without bitmaps, the canvas itself.
export function bitmapOf(canvas) {
  return canvas.transferToImageBitmap ? canvas.transferToImageBitmap() : canvas;
}

/// The offline basemap (`basemap.json`, Natural Earth 1:110m): rings and lines
/// decoded once into Web Mercator world coordinates with their bounding boxes.
export async function loadBasemap(url = "/dashboard/basemap.json") {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const data = await response.json();
  const decode = (flat) => {
    const points = new Float64Array(flat.length);
    let lon = 0, lat = 0, minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (let i = 0; i < flat.length; i += 2) {
      lon += flat[i]; lat += flat[i + 1];
      const p = project(lat / data.scale, lon / data.scale);
      points[i] = p.x; points[i + 1] = p.y;
      minX = Math.min(minX, p.x); maxX = Math.max(maxX, p.x); minY = Math.min(minY, p.y); maxY = Math.max(maxY, p.y);
    }
    return { points, minX, maxX, minY, maxY };
  };
  // `data` as it came, for a MapLibre basemap (gl-basemap.js).
  return { countries: data.countries.map(decode), coastlines: data.coastlines.map(decode), source: data.source, data };
}

export class CanvasMap {
  constructor(canvas, { tileURL = null, basemap = null, onUserMove = () => {}, onResize = () => {},
    onCursor = () => {}, onTap = () => {}, onView = () => {}, underlay = null } = {}) {
    this.canvas = canvas;
    this.underlay = underlay;
    this.basemap = basemap;
    this.onCursor = onCursor;
    this.onTap = onTap;
    this.onView = onView;
    this.ctx = canvas.getContext("2d");
    this.tileURL = tileURL;
    this.tiles = new Map();
    this.view = { x: 0.5, y: 0.5, zoom: 1 };
    this.layers = [];
    this.dirty = true;
    this.animating = false;
    this.held = false; // while true, frames show only the water (the view is not known yet)
    this.firstFrame = null;
    this.frameCount = 0; // frames drawn (not held)
    this.onUserMove = onUserMove;
    this.lastDrawMs = 0;
    this.tileLoads = 0; // raster tiles loaded: each changes the background
    this.frameInterval = 1000 / 30; // ms between paced frames at least
    this.lastFrameAt = -Infinity;
    new ResizeObserver(() => { onResize(); this.invalidate(); }).observe(canvas);
    this._bindInput();
  }

  /// `draw(map, ctx)` functions called in order on every frame. Leading layers with a `key(map)`
  /// (a string that changes whenever what they draw does) are drawn with the background into a
  /// canvas of their own, then copied while the view and their keys stay the same: frames that
  /// change only what lies above them do not draw them again.
  setLayers(layers) { this.layers = layers; this.invalidate(); }

  /// A frame at the next animation frame; `paced`, no sooner than `frameInterval` ms after the last one.
  invalidate({ paced = false } = {}) {
    this.dirty = true;
    if (this.scheduled === true || (this.scheduled && paced)) return;
    clearTimeout(this.pacing);
    const wait = paced ? this.lastFrameAt + this.frameInterval - performance.now() : 0;
    if (wait > 0) {
      this.scheduled = "paced";
      this.pacing = setTimeout(() => { this.scheduled = false; this.invalidate(); }, wait);
      return;
    }
    this.scheduled = true;
    nextFrame(() => this._frame());
  }

  get scale() { return TILE * 2 ** this.view.zoom; }

  /// Raster tiles drawn at least once (with a tile URL).
  get tilesLoaded() {
    if (this.underlay) return this.underlay.tilesLoaded;
    return [...this.tiles.values()].filter((img) => img.complete && img.naturalWidth > 0).length;
  }

  /// Nothing is left to draw under the canvas (the underlay's tiles and style are loaded or failed).
  get underlayIdle() { return !this.underlay || this.underlay.idle; }

  /// The coordinate under a point of the canvas (CSS pixels from its top left).
  toCoordinate(px, py) {
    const s = this.scale;
    return unproject(this.view.x + (px - this.width / 2) / s, Math.max(0, Math.min(1, this.view.y + (py - this.height / 2) / s)));
  }

  /// Metres per CSS pixel at the centre of the view.
  get metresPerPixel() {
    const lat = unproject(this.view.x, this.view.y).latitude;
    return (40075016.686 * Math.cos((lat * Math.PI) / 180)) / this.scale;
  }

  setBasemap(basemap) { this.basemap = basemap; this.invalidate(); }

  toScreen(lat, lon) {
    const p = project(lat, lon);
    return this.worldToScreen(p.x, p.y);
  }

  worldToScreen(x, y) {
    const s = this.scale;
    let dx = x - this.view.x;
    if (dx > 0.5) dx -= 1; else if (dx < -0.5) dx += 1;
    return { x: dx * s + this.width / 2, y: (y - this.view.y) * s + this.height / 2 };
  }

  setView(x, y, zoom) {
    this.view = { x: ((x % 1) + 1) % 1, y: Math.max(0, Math.min(1, y)), zoom: Math.max(0, Math.min(22, zoom)) };
    if (this.underlay && this.width) this.view = this.underlay.constrain(this.view, this.width, this.height);
    this.invalidate();
    this.onView(this.view);
  }

  pan(dxPixels, dyPixels) {
    const s = this.scale;
    this.setView(this.view.x + dxPixels / s, this.view.y + dyPixels / s, this.view.zoom);
  }

  zoomBy(delta) { this.setView(this.view.x, this.view.y, this.view.zoom + delta); }

  /// Shows every coordinate given (with a margin).
  fit(coordinates, margin = 0.8) {
    if (coordinates.length === 0) { this.setView(0.5, 0.5, 1); return; }
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const c of coordinates) {
      const p = project(c.latitude, c.longitude);
      minX = Math.min(minX, p.x); maxX = Math.max(maxX, p.x);
      minY = Math.min(minY, p.y); maxY = Math.max(maxY, p.y);
    }
    const w = Math.max(maxX - minX, 1e-6), h = Math.max(maxY - minY, 1e-6);
    const rect = this.canvas.getBoundingClientRect();
    const zoom = Math.log2(Math.min((rect.width * margin) / (w * TILE), (rect.height * margin) / (h * TILE)));
    this.setView((minX + maxX) / 2, (minY + maxY) / 2, Math.min(zoom, 16));
  }

  _frame() {
    this.scheduled = false;
    this.lastFrameAt = performance.now();
    const dpr = window.devicePixelRatio || 1;
    const rect = this.canvas.getBoundingClientRect();
    this.width = rect.width;
    this.height = rect.height;
    if (this.canvas.width !== Math.round(rect.width * dpr) || this.canvas.height !== Math.round(rect.height * dpr)) {
      this.canvas.width = Math.round(rect.width * dpr);
      this.canvas.height = Math.round(rect.height * dpr);
    }
    const started = performance.now();
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (this.underlay) ctx.clearRect(0, 0, this.width, this.height);
    if (this.held) {
      ctx.fillStyle = this.colors.water;
      ctx.fillRect(0, 0, this.width, this.height);
      this.dirty = false;
      return;
    }
    this._backdrop(ctx, dpr);
    for (const layer of this.layers.slice(this.backdropLayers)) {
      ctx.save();
      layer(this, ctx);
      ctx.restore();
    }
    this.lastDrawMs = performance.now() - started;
    this.frameCount += 1;
    this.dirty = false;
    if (this.animating) this.invalidate();
  }

  /// The theme's map colours (CSS custom properties of the canvas).
  get colors() {
    const style = getComputedStyle(this.canvas);
    const get = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    return { water: get("--map-water", "#0d1b2a"), land: get("--map-land", "#1a2a3c"), border: get("--map-border", "#3a5069"),
      coast: get("--map-coast", "#5b7896"), grid: get("--map-grid", "#1f3350") };
  }

  /// The background and the leading keyed layers, drawn anew only when one of them changed.
  _backdrop(ctx, dpr) {
    const colors = this.colors;
    this.lastColors = colors;
    let n = 0;
    while (n < this.layers.length && this.layers[n].key) n += 1;
    this.backdropLayers = n;
    const key = [this.view.x, this.view.y, this.view.zoom, this.width, this.height, dpr, Object.values(colors), this.tileLoads,
      Boolean(this.basemap), ...this.layers.slice(0, n).map((layer) => layer.key(this))].join("|");
    if (this.backdropKey !== key) {
      const c = this._scratch("backdrop", dpr);
      this._background(c, colors);
      for (const layer of this.layers.slice(0, n)) {
        c.save();
        layer(this, c);
        c.restore();
      }
      this.backdrop?.close?.();
      this.backdrop = bitmapOf(c.canvas);
      this.backdropKey = key;
    }
    ctx.drawImage(this.backdrop, 0, 0, this.width, this.height);
  }

  /// A blank offscreen context of the map's size (device pixels, scaled to CSS pixels), one per `name`.
  _scratch(name, dpr) {
    const w = Math.round(this.width * dpr), h = Math.round(this.height * dpr);
    this.scratch ??= {};
    const c = this.scratch[name] ?? (this.scratch[name] = offscreenCanvas(w, h).getContext("2d"));
    if (c.canvas.width !== w || c.canvas.height !== h) { c.canvas.width = w; c.canvas.height = h; }
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.clearRect(0, 0, w, h);
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    return c;
  }

  _background(ctx, colors) {
    if (this.underlay) {
      // A resized map may show another view within the poles: the layers above take it.
      const view = this.underlay.draw(this.view, this.width, this.height, colors);
      const s = this.scale;
      if (Math.abs(view.x - this.view.x) * s > 0.01 || Math.abs(view.y - this.view.y) * s > 0.01 || Math.abs(view.zoom - this.view.zoom) > 1e-6) {
        this.view = view;
      }
      this._graticule(ctx, colors.grid);
      return;
    }
    ctx.fillStyle = colors.water;
    ctx.fillRect(0, 0, this.width, this.height);
    if (this.basemap) this._basemapCached(ctx, colors);
    if (this.tileURL) this._tiles(ctx);
    this._graticule(ctx, colors.grid);
  }

  /// The basemap drawn once per view (and size and theme) into a canvas of its
  /// own, then copied: frames that only change marks do not redraw it.
  _basemapCached(ctx, colors) {
    const dpr = window.devicePixelRatio || 1;
    const key = [this.view.x, this.view.y, this.view.zoom, this.width, this.height, dpr, colors.land, colors.border, colors.coast].join();
    if (this.basemapKey !== key) {
      const c = this._scratch("basemap", dpr);
      this._basemap(c, colors);
      this.basemapImage?.close?.();
      this.basemapImage = bitmapOf(c.canvas);
      this.basemapKey = key;
    }
    ctx.drawImage(this.basemapImage, 0, 0, this.width, this.height);
  }

  /// Countries filled and outlined, then coastlines; each ring drawn at the
  /// world copies (−1, 0, +1) where its bounding box meets the view.
  _basemap(ctx, colors) {
    const s = this.scale, w = this.width, h = this.height;
    const left = this.view.x - w / 2 / s, right = this.view.x + w / 2 / s;
    const top = this.view.y - h / 2 / s, bottom = this.view.y + h / 2 / s;
    const trace = (shapes, close) => {
      ctx.beginPath();
      for (const shape of shapes) {
        if (shape.maxY < top || shape.minY > bottom) continue;
        for (let copy = -1; copy <= 1; copy++) {
          if (shape.maxX + copy < left || shape.minX + copy > right) continue;
          const p = shape.points;
          const ox = (copy - this.view.x) * s + w / 2, oy = -this.view.y * s + h / 2;
          ctx.moveTo(p[0] * s + ox, p[1] * s + oy);
          for (let i = 2; i < p.length; i += 2) ctx.lineTo(p[i] * s + ox, p[i + 1] * s + oy);
          if (close) ctx.closePath();
        }
      }
    };
    trace(this.basemap.countries, true);
    ctx.fillStyle = colors.land;
    ctx.fill("nonzero");
    ctx.strokeStyle = colors.border;
    ctx.lineWidth = 0.8;
    ctx.stroke();
    trace(this.basemap.coastlines, false);
    ctx.strokeStyle = colors.coast;
    ctx.lineWidth = 1.2;
    ctx.stroke();
  }

  _graticule(ctx, color) {
    const zoom = this.view.zoom;
    const step = [30, 30, 15, 10, 5, 2, 1, 0.5, 0.25, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001][Math.min(15, Math.max(0, Math.floor(zoom)))];
    const nw = unproject(this.view.x - this.width / 2 / this.scale, Math.max(0, this.view.y - this.height / 2 / this.scale));
    const se = unproject(this.view.x + this.width / 2 / this.scale, Math.min(1, this.view.y + this.height / 2 / this.scale));
    ctx.strokeStyle = color;
    ctx.lineWidth = 1;
    ctx.fillStyle = color;
    ctx.font = "11px system-ui, sans-serif";
    ctx.beginPath();
    for (let lon = Math.floor(nw.longitude / step) * step; lon <= se.longitude; lon += step) {
      const x = (((lon + 180) / 360 - this.view.x) * this.scale) + this.width / 2;
      ctx.moveTo(x, 0); ctx.lineTo(x, this.height);
    }
    for (let lat = Math.floor(se.latitude / step) * step; lat <= nw.latitude; lat += step) {
      const y = this.toScreen(lat, 0).y;
      ctx.moveTo(0, y); ctx.lineTo(this.width, y);
    }
    ctx.stroke();
  }

  _tiles(ctx) {
    const z = Math.max(0, Math.min(19, Math.round(this.view.zoom)));
    const n = 2 ** z, size = this.scale / n;
    const x0 = Math.floor((this.view.x - this.width / 2 / this.scale) * n);
    const x1 = Math.floor((this.view.x + this.width / 2 / this.scale) * n);
    const y0 = Math.max(0, Math.floor((this.view.y - this.height / 2 / this.scale) * n));
    const y1 = Math.min(n - 1, Math.floor((this.view.y + this.height / 2 / this.scale) * n));
    for (let tx = x0; tx <= x1; tx++) {
      for (let ty = y0; ty <= y1; ty++) {
        const wx = ((tx % n) + n) % n;
        const url = this.tileURL.replace("{z}", z).replace("{x}", wx).replace("{y}", ty);
        let img = this.tiles.get(url);
        if (!img) {
          img = new Image();
          img.onload = () => { this.tileLoads += 1; this.invalidate(); };
          img.src = url;
          this.tiles.set(url, img);
        }
        if (img.complete && img.naturalWidth) {
          const p = this.worldToScreen(tx / n, ty / n);
          ctx.drawImage(img, p.x, p.y, size + 0.5, size + 0.5);
        }
      }
    }
  }

  _bindInput() {
    const c = this.canvas;
    let last = null;
    let pressed = null;
    const local = (e) => { const r = c.getBoundingClientRect(); return { x: e.clientX - r.left, y: e.clientY - r.top }; };
    c.addEventListener("pointerdown", (e) => {
      last = { x: e.clientX, y: e.clientY };
      pressed = { x: e.clientX, y: e.clientY, moved: false };
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener("pointermove", (e) => {
      const at = local(e);
      this.onCursor(this.width ? this.toCoordinate(at.x, at.y) : null, at);
      if (!last) return;
      if (pressed && Math.hypot(e.clientX - pressed.x, e.clientY - pressed.y) > 4) {
        if (!pressed.moved) this.onUserMove();
        pressed.moved = true;
      }
      if (!pressed?.moved) return;
      this.pan(last.x - e.clientX, last.y - e.clientY);
      last = { x: e.clientX, y: e.clientY };
    });
    c.addEventListener("pointerup", (e) => {
      if (pressed && !pressed.moved) this.onTap(local(e));
      last = null;
      pressed = null;
    });
    c.addEventListener("pointerleave", () => { if (!last) this.onCursor(null, null); });
    c.addEventListener("wheel", (e) => { e.preventDefault(); this.onUserMove(); this.zoomBy(e.deltaY < 0 ? 0.5 : -0.5); }, { passive: false });
    c.addEventListener("keydown", (e) => {
      const step = 80;
      const actions = {
        ArrowLeft: () => this.pan(-step, 0), ArrowRight: () => this.pan(step, 0),
        ArrowUp: () => this.pan(0, -step), ArrowDown: () => this.pan(0, step),
        "+": () => this.zoomBy(1), "=": () => this.zoomBy(1), "-": () => this.zoomBy(-1),
      };
      if (actions[e.key]) { e.preventDefault(); this.onUserMove(); actions[e.key](); }
    });
  }
}
