// Colours on the map: participants' colours made readable on the map (at least
// 3:1 contrast, WCAG's figure for graphics) and told apart when many share one.

export function parseHex(color) {
  let c = String(color ?? "").trim().replace(/^#/, "");
  if (c.length === 3 || c.length === 4) c = [...c.slice(0, 3)].map((x) => x + x).join("");
  const n = parseInt(c.slice(0, 6), 16);
  return Number.isFinite(n) && c.length >= 6 ? [(n >> 16) & 255, (n >> 8) & 255, n & 255] : [128, 128, 128];
}

export function toHex([r, g, b]) {
  return `#${[r, g, b].map((v) => Math.round(Math.max(0, Math.min(255, v))).toString(16).padStart(2, "0")).join("")}`;
}

export function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a, b) {
  const [hi, lo] = [luminance(parseHex(a)), luminance(parseHex(b))].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/// `color` moved towards white (on dark backgrounds) or black (on light ones)
/// until it has `min` contrast with every background.
export function readable(color, backgrounds, min = 3) {
  const rgb = parseHex(color);
  const dark = backgrounds.every((b) => luminance(parseHex(b)) < 0.25);
  const target = dark ? [255, 255, 255] : [0, 0, 0];
  for (let t = 0; t <= 1.0001; t += 0.05) {
    const c = toHex(rgb.map((v, i) => v + (target[i] - v) * t));
    if (backgrounds.every((b) => contrast(c, b) >= min)) return c;
  }
  return toHex(target);
}

function hsl(h, s, l) {
  const k = (n) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [f(0) * 255, f(8) * 255, f(4) * 255];
}

function distance(a, b) {
  const [x, y] = [parseHex(a), parseHex(b)];
  return Math.hypot(x[0] - y[0], x[1] - y[1], x[2] - y[2]);
}

/// A display colour per participant (in the order given): its own colour made
/// readable on the backgrounds; when that is too close to a colour already
/// given to someone else, another hue (golden-angle steps) of the same kind.
export function displayColors(participants, backgrounds) {
  const out = new Map();
  const used = [];
  const dark = backgrounds.every((b) => luminance(parseHex(b)) < 0.25);
  for (const p of participants) {
    let c = readable(p.color, backgrounds);
    for (let gap = 60; used.some((u) => distance(u, c) < gap) && gap > 0; gap -= 12) {
      let found = null;
      for (let k = 1; k < 90 && !found; k++) {
        const hue = (k * 137.508 + parseHex(p.color)[0]) % 360;
        const light = dark ? [0.68, 0.78, 0.58][k % 3] : [0.32, 0.24, 0.40][k % 3];
        const candidate = readable(toHex(hsl(hue, 0.85, light)), backgrounds);
        if (!used.some((u) => distance(u, candidate) < gap)) found = candidate;
      }
      if (found) c = found;
    }
    used.push(c);
    out.set(p.id, c);
  }
  return out;
}
