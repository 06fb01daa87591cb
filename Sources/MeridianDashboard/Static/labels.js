// Map labels without overlaps: each frame, labels are requested with an anchor
// and a priority, then placed greedily (most important first) at the first of a
// few positions around the anchor that is free; a label that fits nowhere is
// left out rather than drawn over another.

const OFFSETS = [[1, -1], [1, 1], [-1, -1], [-1, 1], [0, -1.6], [0, 1.6]];

export class Labels {
  constructor() {
    this.requests = [];
    this.placed = [];
  }

  /// A label for `text` near (x, y); `gap` keeps it clear of the mark itself.
  request(text, x, y, { color = null, priority = 0, gap = 8 } = {}) {
    this.requests.push({ text, x, y, color, priority, gap, order: this.requests.length });
  }

  /// Places and draws the requested labels; `blocked` rectangles (e.g. the
  /// callout) are kept free. Returns the placed labels {text, x, y, w, h}.
  draw(ctx, { width, height, font, background, foreground, blocked = [] }) {
    ctx.font = font;
    const size = parseFloat(font.match(/(\d+(?:\.\d+)?)px/)[1]);
    const h = Math.round(size + 6);
    const taken = [...blocked];
    this.placed = [];
    this.requests.sort((a, b) => b.priority - a.priority || a.order - b.order);
    for (const r of this.requests) {
      const w = Math.ceil(ctx.measureText(r.text).width + 8);
      for (const [dx, dy] of OFFSETS) {
        const x = dx === 0 ? r.x - w / 2 : dx > 0 ? r.x + r.gap : r.x - r.gap - w;
        const y = dy < 0 ? r.y - r.gap * Math.abs(dy) - h : r.y + r.gap * Math.abs(dy) - (dy === 1 ? h / 2 : 0);
        const box = { x: Math.round(x), y: Math.round(y), w, h };
        if (box.x < 0 || box.y < 0 || box.x + w > width || box.y + h > height) continue;
        if (taken.some((t) => box.x < t.x + t.w && t.x < box.x + box.w && box.y < t.y + t.h && t.y < box.y + box.h)) continue;
        taken.push(box);
        this.placed.push({ text: r.text, ...box });
        ctx.fillStyle = background;
        ctx.fillRect(box.x, box.y, w, h);
        ctx.fillStyle = r.color ?? foreground;
        ctx.textBaseline = "middle";
        ctx.fillText(r.text, box.x + 4, box.y + h / 2 + 0.5);
        break;
      }
    }
    ctx.textBaseline = "alphabetic";
    this.requests = [];
    return this.placed;
  }
}
