// A small Web Mercator map on a canvas: works with no tile server (graticule on a
// plain background), optionally draws raster tiles under the annotations.

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

export class CanvasMap {
  constructor(canvas, { tileURL = null, onUserMove = () => {}, onResize = () => {} } = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.tileURL = tileURL;
    this.tiles = new Map();
    this.view = { x: 0.5, y: 0.5, zoom: 1 };
    this.layers = [];
    this.dirty = true;
    this.animating = false;
    this.onUserMove = onUserMove;
    this.lastDrawMs = 0;
    new ResizeObserver(() => { onResize(); this.invalidate(); }).observe(canvas);
    this._bindInput();
  }

  /// `draw(map)` functions called in order on every frame; `animating()` asks for continuous frames.
  setLayers(layers) { this.layers = layers; this.invalidate(); }

  invalidate() {
    if (this.dirty && this.scheduled) return;
    this.dirty = true;
    if (!this.scheduled) {
      this.scheduled = true;
      requestAnimationFrame(() => this._frame());
    }
  }

  get scale() { return TILE * 2 ** this.view.zoom; }

  /// Raster tiles drawn at least once (with a tile URL).
  get tilesLoaded() { return [...this.tiles.values()].filter((img) => img.complete && img.naturalWidth > 0).length; }

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
    this.invalidate();
  }

  pan(dxPixels, dyPixels) {
    const s = this.scale;
    this.setView(this.view.x + dxPixels / s, this.view.y + dyPixels / s, this.view.zoom);
  }

  zoomBy(delta) { this.setView(this.view.x, this.view.y, this.view.zoom + delta); }

  /// Shows every coordinate given (with a margin).
  fit(coordinates) {
    if (coordinates.length === 0) { this.setView(0.5, 0.5, 1); return; }
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const c of coordinates) {
      const p = project(c.latitude, c.longitude);
      minX = Math.min(minX, p.x); maxX = Math.max(maxX, p.x);
      minY = Math.min(minY, p.y); maxY = Math.max(maxY, p.y);
    }
    const w = Math.max(maxX - minX, 1e-6), h = Math.max(maxY - minY, 1e-6);
    const rect = this.canvas.getBoundingClientRect();
    const zoom = Math.log2(Math.min((rect.width * 0.8) / (w * TILE), (rect.height * 0.8) / (h * TILE)));
    this.setView((minX + maxX) / 2, (minY + maxY) / 2, Math.min(zoom, 16));
  }

  _frame() {
    this.scheduled = false;
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
    this._background(ctx);
    for (const layer of this.layers) {
      ctx.save();
      layer(this, ctx);
      ctx.restore();
    }
    this.lastDrawMs = performance.now() - started;
    this.dirty = false;
    if (this.animating) this.invalidate();
  }

  _background(ctx) {
    const style = getComputedStyle(this.canvas);
    ctx.fillStyle = style.getPropertyValue("--map-water").trim() || "#0d1b2a";
    ctx.fillRect(0, 0, this.width, this.height);
    if (this.tileURL) this._tiles(ctx);
    this._graticule(ctx, style.getPropertyValue("--map-grid").trim() || "#24384f");
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
          img.onload = () => this.invalidate();
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
    c.addEventListener("pointerdown", (e) => { this.onUserMove(); last = { x: e.clientX, y: e.clientY }; c.setPointerCapture(e.pointerId); });
    c.addEventListener("pointermove", (e) => {
      if (!last) return;
      this.pan(last.x - e.clientX, last.y - e.clientY);
      last = { x: e.clientX, y: e.clientY };
    });
    c.addEventListener("pointerup", () => { last = null; });
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
