// MapLibre GL JS style pieces shared by the dashboard's map and the MapLibre example: the
// offline basemap (Natural Earth countries and coastlines from basemap.json) as a GeoJSON
// source with its layers, and raster tiles from a Leaflet-style URL template.

/// A ring's last position repeated at its end, as GeoJSON polygons want.
export const closeRing = (ring) => (ring.length && (ring[0][0] !== ring.at(-1)[0] || ring[0][1] !== ring.at(-1)[1]) ? [...ring, ring[0]] : ring);

/// basemap.json (rings and lines of integers in 1/`scale` degree, delta-encoded) as GeoJSON:
/// one MultiPolygon of the countries, one MultiLineString of the coastlines.
export function basemapGeoJSON(data) {
  const decode = (flat) => {
    const out = [];
    for (let i = 0, lon = 0, lat = 0; i < flat.length; i += 2) {
      lon += flat[i]; lat += flat[i + 1];
      out.push([lon / data.scale, Math.max(-85, Math.min(85, lat / data.scale))]);
    }
    return out;
  };
  return { type: "FeatureCollection", features: [
    { type: "Feature", properties: {}, geometry: { type: "MultiPolygon", coordinates: data.countries.map((r) => [closeRing(decode(r))]) } },
    { type: "Feature", properties: {}, geometry: { type: "MultiLineString", coordinates: data.coastlines.map(decode) } },
  ] };
}

/// A raster source from a Leaflet-style template (`{s}` subdomains, `{z}/{x}/{y}`, `{r}`),
/// credited to the tile server's host.
export function rasterSource(template) {
  const tiles = (template.includes("{s}") ? ["a", "b", "c"].map((s) => template.replaceAll("{s}", s)) : [template])
    .map((t) => t.replaceAll("{r}", ""));
  let host = "";
  try { host = new URL(tiles[0].replace(/\{[a-z]+\}/g, "0"), window.location.href).host; } catch { /* no host to credit */ }
  return { type: "raster", tiles, tileSize: 256, maxzoom: 19, ...(host ? { attribution: `Map tiles: ${host}` } : {}) };
}

/// The sources and layers of a basemap: raster tiles when there is a template, else the offline
/// basemap (its source `basemap` starts empty: give it `basemapGeoJSON`). `colors` are the
/// theme's map colours: {water, land, border, coast}.
export function basemapStyle(tileURL, colors, data = { type: "FeatureCollection", features: [] }) {
  const background = { id: "background", type: "background", paint: { "background-color": colors.water } };
  if (tileURL) return { sources: { tiles: rasterSource(tileURL) }, layers: [background, { id: "tiles", type: "raster", source: "tiles" }] };
  return {
    sources: { basemap: { type: "geojson", data, attribution: "Natural Earth" } },
    layers: [
      background,
      { id: "countries", type: "fill", source: "basemap", filter: ["==", ["geometry-type"], "Polygon"],
        paint: { "fill-color": colors.land } },
      { id: "borders", type: "line", source: "basemap", filter: ["==", ["geometry-type"], "Polygon"],
        paint: { "line-color": colors.border, "line-width": 0.8 } },
      { id: "coastlines", type: "line", source: "basemap", filter: ["==", ["geometry-type"], "LineString"],
        paint: { "line-color": colors.coast, "line-width": 1.2 } },
    ],
  };
}

/// Sets the basemap layers' colours to the theme's (the layers a style from elsewhere lacks are skipped).
export function recolorBasemap(map, colors) {
  const set = (layer, property, value) => { if (map.getLayer(layer)) map.setPaintProperty(layer, property, value); };
  set("background", "background-color", colors.water);
  set("countries", "fill-color", colors.land);
  set("borders", "line-color", colors.border);
  set("coastlines", "line-color", colors.coast);
}
