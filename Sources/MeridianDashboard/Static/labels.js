// Map labels without overlaps and without flicker. Each frame, labels are requested
// with an anchor, a key (one label per key: a participant is named once however many
// marks they have, the first candidate that fits wins), a tier and an importance; then
// placed greedily at the first of a few positions around the anchor that is free:
//  1. focus labels (what is selected, dragged, hovered or inspected);
//  2. labels placed on the previous frame, at their previous position when it is free
//     (fixed marks' before moving ones'), so moving marks do not reshuffle which
//     annotations are labelled;
//  3. the rest, by tier (participants before annotations), then importance.
// Apart from focus labels, at most one label per `area` square pixels of map is drawn
// (participants' included, however many are placed);
// a label that fits nowhere is left out rather than drawn over another.

import { contrast } from "/dashboard/colors.js";

const OFFSETS = [[1, -1], [1, 1], [-1, -1], [-1, 1], [0, -1.6], [0, 1.6]];
const PADDING = 2;

export const TIER = { focus: 3, participant: 2, annotation: 1 };

export class Labels {
  constructor({ area = 20000 } = {}) {
    this.area = area;
    this.requests = [];
    this.placed = [];
    this.previous = new Map(); // key -> offset index placed on the last frame
    this.widths = new Map(); // text -> its width in `widthsFont` (the same titles are measured frame after frame)
    this.widthsFont = null;
  }

  width(ctx, text) {
    let w = this.widths.get(text);
    if (w === undefined) { w = ctx.measureText(text).width; this.widths.set(text, w); }
    return w;
  }

  /// A label for `text` near (x, y); `gap` keeps it clear of the mark itself. `kind`
  /// "participant" draws it filled with `color`; annotation labels are plain. `faded` draws it
  /// faded (what it names is no longer current).
  request(text, x, y, { key = text, kind = "annotation", color = null, tier = TIER.annotation, importance = 0, gap = 8, faded = false } = {}) {
    if (!Number.isFinite(x) || !Number.isFinite(y)) return;
    this.requests.push({ text, x, y, key, kind, color, tier, importance, gap, faded, order: this.requests.length });
  }

  /// Places and draws the requested labels; `blocked` rectangles (e.g. the callout) are
  /// kept free. Returns the placed labels {text, key, kind, x, y, w, h}.
  draw(ctx, { width, height, font, background, foreground, border, blocked = [] }) {
    ctx.font = font;
    if (this.widthsFont !== font || this.widths.size > 5000) { this.widths.clear(); this.widthsFont = font; }
    const size = parseFloat(font.match(/(\d+(?:\.\d+)?)px/)[1]);
    const h = Math.round(size + 6);
    const taken = [...blocked];
    const placed = [];
    const positions = new Map();
    // Candidates of one key: the best first.
    const groups = new Map();
    for (const r of this.requests) {
      if (!groups.has(r.key)) groups.set(r.key, []);
      groups.get(r.key).push(r);
    }
    const best = (list) => list.reduce((a, b) => (b.tier > a.tier || (b.tier === a.tier && b.importance > a.importance) ? b : a));
    const entries = [...groups.entries()].map(([key, list]) => {
      list.sort((a, b) => b.tier - a.tier || b.importance - a.importance || a.order - b.order);
      const top = best(list);
      const phase = top.tier === TIER.focus ? 0 : this.previous.has(key) ? 1 : 2;
      return { key, list, phase, tier: top.tier, importance: top.importance, order: top.order };
    });
    // Kept labels of fixed marks go before those of moving ones (people's views and locations),
    // which find another side of their mark, or wait, rather than push an annotation's label out.
    const moving = (e) => (e.phase === 1 && e.list[0].kind === "participant" ? 1 : 0);
    entries.sort((a, b) => a.phase - b.phase || moving(a) - moving(b) || b.tier - a.tier || b.importance - a.importance || a.order - b.order);
    // The budget is shared out before placing: participants' labels are reserved theirs, so an
    // annotation's label does not take the place a moving participant's label left for a frame.
    const people = entries.filter((e) => e.tier === TIER.participant).length;
    const budget = Math.max(6, Math.round((width * height) / this.area) - people);
    let ordinary = 0;
    for (const entry of entries) {
      const counted = entry.phase > 0 && entry.tier !== TIER.participant;
      if (counted && ordinary >= budget) continue;
      const last = this.previous.get(entry.key);
      const order = last === undefined ? OFFSETS.map((_, i) => i) : [last, ...OFFSETS.map((_, i) => i).filter((i) => i !== last)];
      let done = false;
      for (const r of entry.list) {
        const w = Math.ceil(this.width(ctx, r.text) + 10);
        for (const i of order) {
          const [dx, dy] = OFFSETS[i];
          const x = dx === 0 ? r.x - w / 2 : dx > 0 ? r.x + r.gap : r.x - r.gap - w;
          const y = dy < 0 ? r.y - r.gap * Math.abs(dy) - h : r.y + r.gap * Math.abs(dy) - (dy === 1 ? h / 2 : 0);
          const box = { x: Math.round(x), y: Math.round(y), w, h };
          if (box.x < 0 || box.y < 0 || box.x + w > width || box.y + h > height) continue;
          if (taken.some((t) => box.x < t.x + t.w + PADDING && t.x < box.x + box.w + PADDING
            && box.y < t.y + t.h + PADDING && t.y < box.y + box.h + PADDING)) continue;
          taken.push(box);
          positions.set(entry.key, i);
          placed.push({ r, box });
          done = true;
          break;
        }
        if (done) break;
      }
      if (done && counted) ordinary += 1;
    }
    for (const { r, box } of placed) drawLabel(ctx, r, box, { background, foreground, border });
    ctx.textBaseline = "alphabetic";
    this.previous = positions;
    this.requests = [];
    this.placed = placed.map(({ r, box }) => ({ text: r.text, key: r.key, kind: r.kind, ...box }));
    return this.placed;
  }
}

/// White or ink, whichever reads better on `fill` (labels of the same colours are drawn frame after frame).
const inks = new Map();
function inkOn(fill) {
  let ink = inks.get(fill);
  if (ink === undefined) {
    ink = contrast(fill, "#ffffff") >= contrast(fill, "#0b1320") ? "#ffffff" : "#0b1320";
    if (inks.size > 1000) inks.clear();
    inks.set(fill, ink);
  }
  return ink;
}

/// A participant's label (or a drag's, in the dragger's colour): a pill in their colour, its text in whichever of white and ink
/// reads better on it. An annotation's: a box in the theme's label colours, outlined.
function drawLabel(ctx, r, box, { background, foreground, border }) {
  ctx.globalAlpha = r.faded ? 0.45 : 1;
  ctx.beginPath();
  if (r.kind === "participant" || r.kind === "drag") {
    const fill = r.color ?? foreground;
    ctx.roundRect(box.x, box.y, box.w, box.h, box.h / 2);
    ctx.fillStyle = fill;
    ctx.fill();
    ctx.fillStyle = inkOn(fill);
  } else {
    ctx.rect(box.x + 0.5, box.y + 0.5, box.w - 1, box.h - 1);
    ctx.fillStyle = background;
    ctx.fill();
    ctx.strokeStyle = r.tier === TIER.focus ? foreground : border;
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.fillStyle = r.color ?? foreground;
  }
  ctx.textBaseline = "middle";
  ctx.textAlign = "start";
  ctx.fillText(r.text, box.x + 5, box.y + box.h / 2 + 0.5);
  ctx.globalAlpha = 1;
}
