// The Meridian dashboard: the server overview, or (with ?session=ID) one session
// watched live as a hidden viewer. It never changes shared state.

import { pageToken, serverURL, withToken } from "/dashboard/meridian.js";
import { loadMapLibre } from "/dashboard/gl-basemap.js";
import { loadBasemap } from "/dashboard/map.js";
import { showOverview } from "/dashboard/overview.js";
import { showSession } from "/dashboard/session.js";

const params = new URLSearchParams(window.location.search);
const url = params.get("server") ? withToken(params.get("server"), pageToken()) : serverURL();

async function main() {
  const sessionID = params.get("session");
  if (!sessionID) return showOverview(url);
  // The page's settings, the offline basemap and MapLibre GL JS (which draws the basemap; without
  // it, or with ?renderer=canvas, the page's canvas does), all before the first frame.
  const canvasOnly = params.get("renderer") === "canvas";
  const [config, basemap, maplibre] = await Promise.all([
    fetch("/dashboard/config.json").then((r) => (r.ok ? r.json() : {})).catch(() => ({})),
    loadBasemap().catch((error) => { console.warn(`no basemap: ${error.message}`); return null; }),
    canvasOnly ? { library: null, error: "the canvas draws the basemap (?renderer=canvas)" }
      : loadMapLibre().then((library) => ({ library, error: null }), (error) => ({ library: null, error: error.message })),
  ]);
  showSession(url, sessionID, { tileURL: null, styleURL: null, ...config }, basemap, maplibre);
}

// Skip links move the focus without changing the address: its fragment may hold the page's token.
document.addEventListener("click", (e) => {
  const link = e.target.closest?.("a.skip");
  const target = link && document.getElementById(link.getAttribute("href").slice(1));
  if (!target) return;
  e.preventDefault();
  target.focus();
});

main();
