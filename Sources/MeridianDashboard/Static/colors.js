// Colours on the map: participants' colours made readable on the map (at least
// 3:1 contrast, WCAG's figure for graphics) and told apart: a palette per theme
// whose colours differ plainly (CIEDE2000), then other hues for very large groups.

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

/// CIE L*a*b* (D65) of an sRGB colour.
export function lab(color) {
  const lin = parseHex(color).map((v) => { const c = v / 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  const x = (0.4124564 * lin[0] + 0.3575761 * lin[1] + 0.1804375 * lin[2]) / 0.95047;
  const y = 0.2126729 * lin[0] + 0.7151522 * lin[1] + 0.072175 * lin[2];
  const z = (0.0193339 * lin[0] + 0.119192 * lin[1] + 0.9503041 * lin[2]) / 1.08883;
  const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

/// The CIEDE2000 colour difference of two colours (about 2 is just noticeable; 20 is plainly another colour).
export function ciede2000(c1, c2) {
  const [L1, a1, b1] = lab(c1), [L2, a2, b2] = lab(c2);
  const rad = Math.PI / 180;
  const Cb = (Math.hypot(a1, b1) + Math.hypot(a2, b2)) / 2;
  const G = 0.5 * (1 - Math.sqrt(Cb ** 7 / (Cb ** 7 + 25 ** 7)));
  const a1p = (1 + G) * a1, a2p = (1 + G) * a2;
  const C1p = Math.hypot(a1p, b1), C2p = Math.hypot(a2p, b2);
  const hue = (b, a) => (b === 0 && a === 0 ? 0 : ((Math.atan2(b, a) / rad) + 360) % 360);
  const h1p = hue(b1, a1p), h2p = hue(b2, a2p);
  let dhp = 0;
  if (C1p * C2p !== 0) { dhp = h2p - h1p; if (dhp > 180) dhp -= 360; else if (dhp < -180) dhp += 360; }
  const dLp = L2 - L1, dCp = C2p - C1p, dHp = 2 * Math.sqrt(C1p * C2p) * Math.sin((dhp * rad) / 2);
  const Lbp = (L1 + L2) / 2, Cbp = (C1p + C2p) / 2;
  let hbp = h1p + h2p;
  if (C1p * C2p !== 0) hbp = Math.abs(h1p - h2p) <= 180 ? hbp / 2 : hbp < 360 ? (hbp + 360) / 2 : (hbp - 360) / 2;
  const T = 1 - 0.17 * Math.cos((hbp - 30) * rad) + 0.24 * Math.cos(2 * hbp * rad) + 0.32 * Math.cos((3 * hbp + 6) * rad) - 0.2 * Math.cos((4 * hbp - 63) * rad);
  const dTheta = 30 * Math.exp(-(((hbp - 275) / 25) ** 2));
  const RC = 2 * Math.sqrt(Cbp ** 7 / (Cbp ** 7 + 25 ** 7));
  const SL = 1 + (0.015 * (Lbp - 50) ** 2) / Math.sqrt(20 + (Lbp - 50) ** 2), SC = 1 + 0.045 * Cbp, SH = 1 + 0.015 * Cbp * T;
  const RT = -Math.sin(2 * dTheta * rad) * RC;
  return Math.sqrt((dLp / SL) ** 2 + (dCp / SC) ** 2 + (dHp / SH) ** 2 + RT * (dCp / SC) * (dHp / SH));
}

/// Participants' colours, 24 per theme: each has at least 3:1 contrast with that theme's
/// water and land, and any two differ by at least 20 (CIEDE2000). Found once by a search
/// over sRGB (farthest points, then local moves) against the theme colours of dashboard.css.
export const PALETTES = {
  dark: ["#ff003c", "#37ff00", "#00a5f0", "#ffb42d", "#ffd2ff", "#c300ff", "#008700", "#00fff0", "#72746f", "#e3ffc3", "#96b40f", "#ff69b4",
    "#fffb00", "#9696c3", "#ff9472", "#c35a00", "#a5b4a5", "#c3e1ff", "#966978", "#0f69ff", "#00c178", "#96780f", "#1e9696", "#ffe1d2"],
  light: ["#9e66c6", "#009e00", "#1c2400", "#c87000", "#0092a6", "#a00030", "#000070", "#625204", "#00549e", "#ff1890", "#004848", "#72727c",
    "#36001e", "#988800", "#900078", "#883800", "#5010ff", "#ff0000", "#7a8e76", "#1888f8", "#363644", "#b07870", "#006020", "#301800"],
};

/// A display colour per participant (in the order given): the free colour of the theme's
/// palette nearest to the participant's own, so that up to 24 people stay told apart at a
/// glance; beyond the palette, another hue (golden-angle steps) of the same kind, distinct
/// from those given.
export function displayColors(participants, backgrounds) {
  const out = new Map();
  const used = [];
  const dark = backgrounds.every((b) => luminance(parseHex(b)) < 0.25);
  const free = PALETTES[dark ? "dark" : "light"].filter((c) => backgrounds.every((b) => contrast(c, b) >= 3));
  for (const p of participants) {
    let c;
    if (free.length) {
      const own = readable(p.color, backgrounds);
      let best = 0;
      for (let i = 1; i < free.length; i++) if (ciede2000(own, free[i]) < ciede2000(own, free[best])) best = i;
      c = free.splice(best, 1)[0];
    } else {
      c = readable(p.color, backgrounds);
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
    }
    used.push(c);
    out.set(p.id, c);
  }
  return out;
}
