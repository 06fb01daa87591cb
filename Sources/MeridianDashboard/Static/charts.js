// A small line chart of the last values on a canvas (newest on the right),
// in the page's accent colour unless given one.

export class Sparkline {
  constructor(canvas, { color = null, capacity = 60, unit = "", compact = false } = {}) {
    this.canvas = canvas;
    this.color = color;
    this.capacity = capacity;
    this.unit = unit;
    this.compact = compact;
    this.values = [];
  }

  push(value) {
    this.values.push(value);
    if (this.values.length > this.capacity) this.values.shift();
    this.draw();
  }

  draw(values = this.values) {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth || c.width, h = c.clientHeight || c.height;
    if (c.width !== Math.round(w * dpr)) { c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); }
    const style = getComputedStyle(document.documentElement);
    const color = this.color ?? (style.getPropertyValue("--accent").trim() || "#4cc9f0");
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    if (values.length === 0) return;
    const max = Math.max(1, ...values);
    const step = w / (this.capacity - 1);
    const x0 = w - (values.length - 1) * step;
    const top = this.compact ? 10 : 14;
    ctx.beginPath();
    values.forEach((v, i) => {
      const x = x0 + i * step, y = h - 3 - (v / max) * (h - top - 3);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.strokeStyle = color;
    ctx.lineWidth = this.compact ? 1.5 : 2;
    ctx.stroke();
    ctx.lineTo(w, h);
    ctx.lineTo(x0, h);
    ctx.closePath();
    ctx.globalAlpha = 0.15;
    ctx.fillStyle = color;
    ctx.fill();
    ctx.globalAlpha = 1;
    // The scale: the top of the chart is its largest value.
    ctx.fillStyle = style.getPropertyValue("--muted").trim() || "#93a4bd";
    ctx.font = this.compact ? "9px system-ui, sans-serif" : "10px system-ui, sans-serif";
    ctx.fillText(this.compact ? max.toFixed(max < 10 ? 1 : 0) : `max ${max.toFixed(max < 10 ? 1 : 0)}${this.unit} · last ${this.capacity} s`, 2, this.compact ? 9 : 11);
  }
}
