// The basemap under the session view's canvas, drawn by MapLibre GL JS: the offline basemap
// (Natural Earth countries and coastlines), raster tiles (`--dashboard-tiles`) or a whole
// MapLibre style (`--dashboard-style`, e.g. vector streets). The canvas map above it owns the
// view and the input: each view it takes is given to MapLibre, which keeps it within the poles
// (at low zooms it zooms in until the world fills the map's height), and the canvas takes the
// view MapLibre shows, so both project every coordinate to the same pixel.

import { basemapGeoJSON, basemapStyle, recolorBasemap } from "/dashboard/gl-style.js";
import { project, unproject } from "/dashboard/map.js";

/// MapLibre GL JS, from the server's vendored copy (`make web-deps`); rejects when it is missing.
export async function loadMapLibre(base = "/vendor/maplibre-gl/maplibre-gl") {
  framesWithFallback();
  if (!window.maplibregl) {
    await new Promise((resolve, reject) => {
      const script = Object.assign(document.createElement("script"), { src: `${base}.js`, onload: resolve,
        onerror: () => reject(new Error(`${base}.js did not load (make web-deps installs it)`)) });
      document.head.append(script);
    });
  }
  if (!document.querySelector(`link[href="${base}.css"]`)) {
    document.head.append(Object.assign(document.createElement("link"), { rel: "stylesheet", href: `${base}.css` }));
  }
  return window.maplibregl;
}

/// MapLibre waits for animation frames to load its style and to draw, and a browser may give a
/// page none (a headless one that drops them, a throttled window): each frame asked for of the
/// page is given by a timer 200 ms later when the browser has not given it by then, as the
/// page's own frames are (ui.js `nextFrame`).
function framesWithFallback(fallbackMs = 200) {
  if (window.requestAnimationFrame.withFallback) return;
  const request = window.requestAnimationFrame.bind(window), cancel = window.cancelAnimationFrame.bind(window);
  const pending = new Map(); // id -> {frame, timer}
  let last = 0;
  window.requestAnimationFrame = Object.assign((callback) => {
    const id = ++last;
    const run = (time) => {
      const asked = pending.get(id);
      if (!asked) return;
      pending.delete(id);
      cancel(asked.frame);
      clearTimeout(asked.timer);
      callback(time ?? performance.now());
    };
    pending.set(id, { frame: request(run), timer: setTimeout(run, fallbackMs) });
    return id;
  }, { withFallback: true });
  window.cancelAnimationFrame = (id) => {
    const asked = pending.get(id);
    if (!asked) return;
    pending.delete(id);
    cancel(asked.frame);
    clearTimeout(asked.timer);
  };
}

export class GLBasemap {
  /// A MapLibre map in a new element just before `canvas`, filling the same box. Throws when
  /// MapLibre cannot start (no WebGL). `basemap` is basemap.json's content, for the offline style.
  constructor(maplibregl, canvas, { tileURL = null, styleURL = null, basemap = null, colors }) {
    this.container = Object.assign(document.createElement("div"), { className: "gl-basemap" });
    this.container.setAttribute("aria-hidden", "true");
    canvas.before(this.container);
    this.ownStyle = !styleURL;
    const base = basemapStyle(tileURL, colors, basemap ? basemapGeoJSON(basemap) : undefined);
    try {
      this.map = new maplibregl.Map({
        container: this.container, style: styleURL ?? { version: 8, sources: base.sources, layers: base.layers },
        interactive: false, attributionControl: { compact: true }, fadeDuration: 0,
        minZoom: -1, maxZoom: 21, center: [0, 0], zoom: 0,
      });
    } catch (error) {
      this.container.remove();
      throw error;
    }
    this.colors = colors;
    this.tilesLoaded = 0; // raster or vector tiles loaded
    this.idle = false;
    this.error = null; // MapLibre's last error (a style or tile that did not load), for the page's state
    this.map.on("data", (e) => { if (e.dataType === "source" && e.tile && e.sourceId !== "basemap") this.tilesLoaded += 1; });
    this.map.on("style.load", () => { if (this.ownStyle) recolorBasemap(this.map, this.colors); });
    this.map.on("render", () => { this.idle = false; this.rendered = true; });
    this.map.on("idle", () => { this.idle = true; });
    this.map.on("error", (e) => { this.error = e.error?.message ?? String(e.error); this.idle = true; });
  }

  /// `view` ({x, y, zoom} of the canvas map) as MapLibre shows it in a box of `width` x `height`.
  constrain(view, width, height) {
    this.fitTo(width, height);
    const key = `${view.x},${view.y},${view.zoom},${width},${height}`;
    if (key === this.asked || key === this.gave) return this.shown;
    const c = unproject(view.x, view.y);
    this.map.jumpTo({ center: [c.longitude, c.latitude], zoom: view.zoom - 1 });
    this.rendered = false;
    const center = this.map.getCenter();
    const p = project(center.lat, center.lng);
    this.shown = { x: ((p.x % 1) + 1) % 1, y: p.y, zoom: this.map.getZoom() + 1 };
    this.asked = key;
    this.gave = `${this.shown.x},${this.shown.y},${this.shown.zoom},${width},${height}`;
    return this.shown;
  }

  /// Draws `view` with the theme's `colors` now, in step with the canvas frame above it, unless
  /// MapLibre drew it already (the canvas redraws its background for its own layers too, and
  /// MapLibre draws a view it was given at its next animation frame); returns the view shown.
  draw(view, width, height, colors) {
    if (colors.water !== this.colors.water || colors.land !== this.colors.land || colors.border !== this.colors.border
      || colors.coast !== this.colors.coast) {
      this.colors = colors;
      if (this.ownStyle && this.map.isStyleLoaded()) { recolorBasemap(this.map, colors); this.rendered = false; }
    }
    const shown = this.constrain(view, width, height);
    if (!this.rendered && this.map.isStyleLoaded()) this.map.redraw();
    return shown;
  }

  /// MapLibre resized to the canvas map's box when the two differ.
  fitTo(width, height) {
    const canvas = this.map.getCanvas();
    if (Math.abs(canvas.clientWidth - width) > 0.5 || Math.abs(canvas.clientHeight - height) > 0.5) {
      this.map.resize();
      this.rendered = false;
      this.asked = this.gave = null;
    }
  }
}
