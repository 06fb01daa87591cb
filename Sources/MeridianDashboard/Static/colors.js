// Colours on the map: participants' colours made readable on the map (at least
// 3:1 contrast, WCAG's figure for graphics) and told apart: a palette whose colours
// differ plainly (CIEDE2000), then other hues for very large groups. A participant's
// colour has one hue in both themes, lighter on the dark map and darker on the light
// one, so that the same person is the same colour whichever theme the page is in.

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

/// The sRGB colour of CIE LCh(ab) (D65) `L`, `C`, `h` (degrees), its chroma lowered as
/// far as needed to be in the sRGB gamut (lightness and hue kept), as #rrggbb.
export function fromLch(L, C, h) {
  const convert = (chroma) => {
    const a = chroma * Math.cos((h * Math.PI) / 180), b = chroma * Math.sin((h * Math.PI) / 180);
    const fy = (L + 16) / 116, fx = fy + a / 500, fz = fy - b / 200;
    const inv = (t) => (t ** 3 > 216 / 24389 ? t ** 3 : (116 * t - 16) / (24389 / 27));
    const [x, y, z] = [inv(fx) * 0.95047, L > 8 ? fy ** 3 : L / (24389 / 27), inv(fz) * 1.08883];
    const lin = [3.2404542 * x - 1.5371385 * y - 0.4985314 * z, -0.969266 * x + 1.8760108 * y + 0.041556 * z,
      0.0556434 * x - 0.2040259 * y + 1.0572252 * z];
    return lin.map((c) => (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055));
  };
  const inGamut = (rgb) => rgb.every((c) => c >= -1e-6 && c <= 1 + 1e-6);
  let lo = 0, hi = C;
  if (!inGamut(convert(C))) {
    for (let i = 0; i < 14; i++) { const mid = (lo + hi) / 2; if (inGamut(convert(mid))) lo = mid; else hi = mid; }
    hi = lo;
  }
  return toHex(convert(hi).map((c) => c * 255));
}

/// The CIE LCh(ab) hue (degrees) and chroma of a colour.
export function hueOf(color) {
  const [, a, b] = lab(color);
  return { hue: ((Math.atan2(b, a) * 180) / Math.PI + 360) % 360, chroma: Math.hypot(a, b) };
}

/// Participants' colours: 24 pairs, one per palette place, [on the dark map, on the light map].
/// The two of a pair have one hue (within 5° in CIE LCh), each at least 3:1 contrast with its
/// theme's water and land; the dark map's have chroma at least 18, the light map's L* and
/// chroma at least LIGHT_FLOOR's (plain colours, none near black). Any two of the dark theme
/// differ by at least 20 (CIEDE2000), of the light theme by at least 16.5: about the most its
/// narrower band allows (from L* 30 to 3:1 contrast with the light map, about L* 57). Found
/// once by a search (simulated annealing over each pair's hue and its two lightnesses and
/// chromas) against the theme colours of dashboard.css.
export const PALETTE = [
  ["#00ca8f", "#005233"], ["#7ffffa", "#007972"], ["#017ede", "#008afa"], ["#e31900", "#f7001b"], ["#007f91", "#0196af"],
  ["#7054ff", "#8c73ff"], ["#a27c6e", "#8f1200"], ["#e4005a", "#ae0048"], ["#01ff00", "#037700"], ["#e7ae00", "#b38000"],
  ["#ffe1ff", "#f300e9"], ["#ff7a04", "#df6500"], ["#a5abff", "#013fa5"], ["#01c3ff", "#00688e"], ["#fcffdb", "#404c00"],
  ["#ff81ff", "#946894"], ["#008452", "#009d67"], ["#80a400", "#729500"], ["#ff8a9d", "#ff337a"], ["#d101b7", "#84007c"],
  ["#7a6d8d", "#7f00fe"], ["#986a00", "#643f00"], ["#ffcaae", "#986249"], ["#fdff00", "#7b733f"],
];

/// The least CIE L* and chroma of a participant's colour on the light map.
export const LIGHT_FLOOR = { lightness: 30, chroma: 30 };

/// The palette of one theme, in the order of PALETTE.
export const PALETTES = { dark: PALETTE.map((pair) => pair[0]), light: PALETTE.map((pair) => pair[1]) };

/// The theme colours (water, land) the palette was made for.
const THEMES = { dark: ["#0d1b2a", "#1b2b3f"], light: ["#e6eff8", "#f3f1ea"] };

/// Hue `h` at chroma 60 as light (dark backgrounds) or dark (light ones) as needed for 3:1
/// contrast with `backgrounds`, starting from step `k`'s lightness (on light backgrounds L* 34
/// or more), and lighter where the hue's gamut has less than LIGHT_FLOOR's chroma there.
function shade(h, k, backgrounds) {
  const key = `${h.toFixed(3)}|${k % 3}|${backgrounds.join()}`;
  let c = shades.get(key);
  if (c) return c;
  if (shades.size > 20000) shades.clear();
  c = shadeOf(h, k, backgrounds);
  shades.set(key, c);
  return c;
}
const shades = new Map(); // shade()'s answers: the colours are worked out again at every change of the participants

function shadeOf(h, k, backgrounds) {
  const dark = backgrounds.every((b) => luminance(parseHex(b)) < 0.25);
  const clear = (c) => backgrounds.every((b) => contrast(c, b) >= 3);
  let L = dark ? [72, 82, 62][k % 3] : [42, 34, 50][k % 3];
  let c = fromLch(L, 60, h);
  while (!clear(c) && L > 0 && L < 100) {
    L += dark ? 2 : -2;
    c = fromLch(L, 60, h);
  }
  while (!dark && hueOf(c).chroma < LIGHT_FLOOR.chroma && clear(fromLch(L + 2, 60, h))) {
    L += 2;
    c = fromLch(L, 60, h);
  }
  return c;
}

/// A display colour per participant (in the order given), readable on `backgrounds` (the
/// map's water and land). Up to 24 people take the palette's places, each the free place
/// nearest to their own colour; beyond that, other hues (golden-angle steps from their own),
/// apart from those given in both themes. Which place or hue a participant takes does not
/// depend on the theme: only its lightness does, so they keep their hue when it changes.
export function displayColors(participants, backgrounds) {
  const out = new Map();
  const dark = backgrounds.every((b) => luminance(parseHex(b)) < 0.25);
  const side = dark ? 0 : 1;
  const free = PALETTE.map((_, i) => i);
  const used = []; // each colour given: {pair: [in the dark theme, in the light theme], rgb: the pair's channels}
  const given = new Set();
  for (const p of participants) {
    let pair;
    let onOthers; // the colour for backgrounds other than the palette's
    if (free.length) {
      const own = toHex(parseHex(p.color));
      const near = (i) => Math.min(ciede2000(own, PALETTE[i][0]), ciede2000(own, PALETTE[i][1]));
      let best = 0;
      for (let i = 1; i < free.length; i++) if (near(free[i]) < near(free[best])) best = i;
      pair = PALETTE[free.splice(best, 1)[0]];
      onOthers = () => readable(pair[side], backgrounds); // the same hue made readable there
    } else {
      const start = hueOf(toHex(parseHex(p.color))).hue;
      // The first hue step whose colours are farthest from every colour given, in both themes
      // (at least 60 apart in sRGB, else 48, 36, ...).
      const candidates = Array.from({ length: 90 }, (_, k) => {
        const h = (start + k * 137.508) % 360;
        const pair = [shade(h, k, THEMES.dark), shade(h, k, THEMES.light)];
        const [d, l] = pair.map(parseHex);
        let nearest = Infinity;
        for (const { rgb: [ud, ul] } of used) {
          nearest = Math.min(nearest, Math.hypot(d[0] - ud[0], d[1] - ud[1], d[2] - ud[2]), Math.hypot(l[0] - ul[0], l[1] - ul[1], l[2] - ul[2]));
        }
        return { h, k, pair, nearest };
      });
      let found = candidates[0];
      for (let gap = 60; gap > 0; gap -= 12) {
        const far = candidates.find((c) => c.nearest >= gap);
        if (far) { found = far; break; }
      }
      pair = found.pair;
      onOthers = () => shade(found.h, found.k, backgrounds); // the hue at the lightness they need
    }
    used.push({ pair, rgb: pair.map(parseHex) });
    let c = pair[side];
    if (!backgrounds.every((b) => contrast(c, b) >= 3)) c = onOthers();
    // Never two people in one colour.
    for (let step = 1; given.has(c); step += 1) c = readable(toHex(parseHex(c).map((v) => v + (dark ? step : -step))), backgrounds);
    given.add(c);
    out.set(p.id, c);
  }
  return out;
}
