// Clusters of a large session's annotations (SPEC §4.7, `clusters` messages): a
// circle sized by its count with the count written in it, a single annotation as a
// point; finding the one under the pointer; and the cell each one's members lie in.

import { project, unproject } from "/dashboard/map.js";

/// The server groups annotations on a grid of 64-point cells at the view's zoom.
const CELL_POINTS = 64;

/// A cluster's radius in CSS pixels: from 11 for two up to 30 for 100,000, so that
/// neighbouring cells' circles (64 points apart) rarely touch.
export function clusterRadius(count) {
  return count <= 1 ? 4.5 : Math.min(30, 10 + 4 * Math.log10(count));
}

/// "7", "950", "1.2k", "35k".
export function countText(count) {
  if (count < 1000) return String(count);
  if (count < 10_000) return `${(count / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  return `${Math.round(count / 1000)}k`;
}

/// Draws the clusters that are on the map; returns them with where they were drawn
/// (`x`, `y`, radius `r` in CSS pixels), in drawing order.
export function drawClusters(m, ctx, clusters, { fill, ring, text }) {
  const drawn = [];
  ctx.font = "600 12px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (const c of clusters) {
    const p = m.toScreen(c.coordinate.latitude, c.coordinate.longitude);
    const r = clusterRadius(c.count);
    if (p.x < -r || p.y < -r || p.x > m.width + r || p.y > m.height + r) continue;
    ctx.beginPath();
    ctx.arc(p.x, p.y, r, 0, Math.PI * 2);
    ctx.fillStyle = fill;
    ctx.globalAlpha = c.count > 1 ? 0.85 : 1;
    ctx.fill();
    ctx.globalAlpha = 1;
    ctx.lineWidth = c.count > 1 ? 2 : 1.5;
    ctx.strokeStyle = ring;
    ctx.stroke();
    if (c.count > 1) {
      ctx.fillStyle = text;
      ctx.fillText(countText(c.count), p.x, p.y + 0.5);
    }
    drawn.push({ ...c, x: p.x, y: p.y, r });
  }
  ctx.textAlign = "start";
  ctx.textBaseline = "alphabetic";
  return drawn;
}

/// The topmost drawn cluster at `at` (CSS pixels), or null; `slop` widens small ones.
export function clusterAt(drawn, at, slop = 4) {
  if (!at) return null;
  for (let i = drawn.length - 1; i >= 0; i--) {
    const c = drawn[i];
    if (Math.hypot(at.x - c.x, at.y - c.y) <= Math.max(c.r, 8) + slop) return c;
  }
  return null;
}

/// The corners (north-west, south-east) of the cell a cluster's members lie in at
/// integer zoom `zoom`: its coordinate is their mean, which lies in the same cell.
export function clusterCell(cluster, zoom) {
  const n = 2 ** zoom * (256 / CELL_POINTS);
  const p = project(cluster.coordinate.latitude, cluster.coordinate.longitude);
  const column = Math.min(n - 1, Math.floor(p.x * n)), row = Math.min(n - 1, Math.floor(p.y * n));
  return [unproject(column / n, row / n), unproject((column + 1) / n, (row + 1) / n)];
}

/// The session's annotation count when a `clusters` message covers the whole world (every
/// annotation is then in one of its clusters), else null.
export function worldTotal(message) {
  const area = message.view.area;
  const whole = area && area.southWest.longitude === -180 && area.northEast.longitude === 180
    && area.southWest.latitude <= -85.0511 && area.northEast.latitude >= 85.0511;
  return whole ? message.clusters.reduce((n, c) => n + c.count, 0) : null;
}
