// A small line chart of the last values on a canvas (newest on the right).

export class Sparkline {
  constructor(canvas, { color = "#4cc9f0", capacity = 60, unit = "" } = {}) {
    this.canvas = canvas;
    this.color = color;
    this.capacity = capacity;
    this.unit = unit;
    this.values = [];
  }

  push(value) {
    this.values.push(value);
    if (this.values.length > this.capacity) this.values.shift();
    this.draw();
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth || c.width, h = c.clientHeight || c.height;
    if (c.width !== Math.round(w * dpr)) { c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); }
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const max = Math.max(1, ...this.values);
    const step = w / (this.capacity - 1);
    const x0 = w - (this.values.length - 1) * step;
    ctx.beginPath();
    this.values.forEach((v, i) => {
      const x = x0 + i * step, y = h - 4 - (v / max) * (h - 14);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.strokeStyle = this.color;
    ctx.lineWidth = 2;
    ctx.stroke();
    ctx.lineTo(w, h);
    ctx.lineTo(x0, h);
    ctx.closePath();
    ctx.globalAlpha = 0.15;
    ctx.fillStyle = this.color;
    ctx.fill();
    ctx.globalAlpha = 1;
    ctx.fillStyle = "#93a4bd";
    ctx.font = "10px system-ui, sans-serif";
    ctx.fillText(`max ${max.toFixed(max < 10 ? 1 : 0)}${this.unit}`, 4, 11);
  }
}
