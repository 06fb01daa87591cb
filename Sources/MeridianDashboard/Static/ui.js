// Small DOM helpers shared by the dashboard's views.

export const $ = (id) => document.getElementById(id);

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(node.dataset, v);
    else if (k === "style") Object.assign(node.style, v);
    else node[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined && c !== "") node.append(c);
  return node;
}

/// Sets a node's text unless it already says that (an unchanged text is not laid out again).
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/// Sets the properties of `props` that differ on `node`.
export function assign(node, props) {
  for (const [k, v] of Object.entries(props)) if (node[k] !== v) node[k] = v;
}

/// What a status says to the person watching (the connection's own words for the rest).
const STATUS_TEXT = {
  "no-session": "no such session",
  "replaced": "replaced: a newer connection with this token is live",
  "stopped": "stopped: the server closed this page for what it sent",
  "token-expired": "token expired: open the page with a new token",
};

export function setStatus(status) {
  document.body.dataset.status = status;
  $("status").textContent = STATUS_TEXT[status] ?? status;
  const offline = $("offline");
  if (offline) offline.hidden = !(status === "disconnected" || status === "reconnecting");
}

/// Wall-clock time of `ms` (since 1970) as HH:MM:SS in the page's time zone.
export function clock(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

/// "12 s ago", "3 min ago", "2 h ago".
export function ago(ms, now = Date.now()) {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/// Runs `callback` once at the next animation frame, or after `fallbackMs` if no frame comes
/// first: a page the browser stops giving frames (hidden, throttled, or a headless window that
/// drops them) still draws and publishes its state, and a frame asked for is never lost.
export function nextFrame(callback, fallbackMs = 200) {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
    callback();
  };
  const frame = requestAnimationFrame(run);
  const timer = setTimeout(run, fallbackMs);
}

export const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/// A list of any length in a scroller of its own: only the rows in view (and a few around
/// them) are in the document, so thousands of rows cost what a screenful does.
/// `render(item, index)` makes a row's content; `key(item)` names it (rows kept across
/// updates keep their focus). Rows are `rowHeight()` tall, or with `variable`, as tall as
/// their content (at least `rowHeight()`; each row is measured once drawn, so a row that
/// wraps shows whole). The scroller is as tall as `maxRows` rows of `rowHeight()` at most.
///
/// With `roving`, the list is one stop in the keyboard's Tab order: the button of one row
/// (the last focused, else the first) takes Tab; arrow keys, Home, End, Page Up and Page Down
/// move between rows, and the row moved to is brought into view.
export class VirtualList {
  constructor(list, { rowHeight, maxRows = 12, render, key, label = null, variable = false, roving = false }) {
    this.list = list;
    this.rowHeight = rowHeight; // () => CSS pixels
    this.maxRows = maxRows;
    this.render = render;
    this.key = key;
    this.variable = variable;
    this.roving = roving;
    this.items = [];
    this.positions = new Map(); // key -> index in items
    this.rows = new Map(); // key -> li
    this.heights = new Map(); // key -> measured height (variable rows)
    this.measuredWidth = 0;
    this.offsets = [0]; // offsets[i]: the top of row i (variable rows)
    this.active = null; // the key of the row that takes Tab (roving)
    list.classList.add("virtual");
    if (variable) list.classList.add("variable");
    if (label) list.setAttribute("aria-label", label);
    list.addEventListener("scroll", () => this.draw());
    if (roving) {
      list.addEventListener("keydown", (e) => this.keydown(e));
      list.addEventListener("focusin", (e) => {
        const k = this.keyOf(e.target);
        if (k !== null && k !== this.active) { this.active = k; this.tabStops(); }
      });
    }
  }

  /// Shows `items` (the list keeps its scroll position).
  update(items) {
    this.items = items;
    this.positions = new Map(items.map((item, i) => [this.key(item), i]));
    this.draw(true);
  }

  /// The top of row `i` and its height, in CSS pixels.
  place(i) {
    if (!this.variable) { const h = this.rowHeight(); return [i * h, h]; }
    return [this.offsets[i], this.offsets[i + 1] - this.offsets[i]];
  }

  layout() {
    const h = this.rowHeight();
    const n = this.items.length;
    if (!this.variable) return n * h;
    const offsets = new Array(n + 1);
    offsets[0] = 0;
    for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + (this.heights.get(this.key(this.items[i])) ?? h);
    this.offsets = offsets;
    return offsets[n];
  }

  /// The first row whose bottom is below `y`.
  rowAt(y) {
    if (!this.variable) return Math.floor(y / this.rowHeight());
    let lo = 0, hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.offsets[mid + 1] <= y) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  draw(changed = false) {
    const h = this.rowHeight();
    const n = this.items.length;
    if (this.variable && this.list.clientWidth !== this.measuredWidth) {
      this.heights.clear(); // rows wrap anew at another width
      this.measuredWidth = this.list.clientWidth;
    }
    let total = this.layout();
    this.list.style.height = `${Math.max(h, Math.min(total, this.maxRows * h))}px`;
    this.list.style.setProperty("--row-height", `${h}px`);
    const top = this.list.scrollTop;
    const first = Math.max(0, this.rowAt(top) - 4);
    const last = Math.min(n, this.rowAt(top + this.maxRows * h) + 5);
    const wanted = new Map();
    for (let i = first; i < last; i++) wanted.set(this.key(this.items[i]), i);
    if (this.roving) {
      if (this.active === null || !this.positions.has(this.active)) this.active = n ? this.key(this.items[0]) : null;
      // The row that takes Tab stays in the document wherever the list is scrolled.
      if (this.active !== null) wanted.set(this.active, this.positions.get(this.active));
    }
    for (const [k, li] of this.rows) {
      if (!wanted.has(k)) { li.remove(); this.rows.delete(k); }
    }
    let spacer = this.list.querySelector(":scope > .spacer");
    if (!spacer) {
      spacer = el("li", { className: "spacer", ariaHidden: "true" });
      this.list.prepend(spacer);
    }
    for (const [k, i] of wanted) {
      let li = this.rows.get(k);
      const item = this.items[i];
      if (!li || changed) {
        const fresh = this.render(item, i);
        // A row whose content is the same is left alone: a button under the pointer is not
        // replaced between press and release (the click would be lost), nor loses focus.
        const signature = `${fresh.className}|${fresh.title}|${fresh.innerHTML}`;
        if (li && li.dataset.signature !== signature) {
          const focused = li.contains(document.activeElement);
          li.replaceChildren(...fresh.childNodes);
          for (const a of ["className", "title"]) li[a] = fresh[a];
          Object.assign(li.dataset, fresh.dataset);
          li.dataset.signature = signature;
          if (this.variable) this.heights.delete(k);
          if (focused) li.querySelector("button, a")?.focus();
        } else if (!li) {
          li = fresh;
          li.dataset.signature = signature;
          this.rows.set(k, li);
          this.list.append(li);
        }
      }
      li.setAttribute("aria-setsize", String(n));
      li.setAttribute("aria-posinset", String(i + 1));
    }
    if (this.variable) {
      // Rows drawn are measured; the rows after one that is taller than thought move down.
      let measured = false;
      for (const [k, li] of this.rows) {
        const height = li.offsetHeight;
        if (height && Math.abs((this.heights.get(k) ?? h) - height) > 0.5) { this.heights.set(k, height); measured = true; }
      }
      if (measured) total = this.layout();
      this.list.style.height = `${Math.max(h, Math.min(total, this.maxRows * h))}px`;
    }
    spacer.style.height = `${total}px`;
    for (const [k, li] of this.rows) li.style.top = `${this.place(this.positions.get(k) ?? wanted.get(k))[0]}px`;
    this.tabStops();
  }

  /// Roving: only the active row's button is in the Tab order.
  tabStops() {
    if (!this.roving) return;
    for (const [k, li] of this.rows) {
      const target = li.querySelector("button, a");
      if (target) target.tabIndex = k === this.active ? 0 : -1;
    }
  }

  /// The key of the row holding `node`, or null.
  keyOf(node) {
    for (const [k, li] of this.rows) if (li.contains(node)) return k;
    return null;
  }

  keydown(e) {
    const n = this.items.length;
    const from = this.positions.get(this.keyOf(e.target));
    if (!n || from === undefined || e.altKey || e.ctrlKey || e.metaKey) return;
    const page = Math.max(1, this.maxRows - 1);
    const to = { ArrowDown: from + 1, ArrowUp: from - 1, Home: 0, End: n - 1, PageDown: from + page, PageUp: from - page }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    this.focusRow(Math.max(0, Math.min(n - 1, to)));
  }

  /// Makes row `i` the one that takes Tab, brings it into view and focuses its button.
  focusRow(i) {
    const k = this.key(this.items[i]);
    this.active = k;
    this.reveal(k);
    this.draw();
    this.rows.get(k)?.querySelector("button, a")?.focus({ preventScroll: true });
  }

  /// Scrolls so that the row of `key` is in view.
  reveal(key) {
    const i = this.positions.get(key) ?? -1;
    if (i < 0) return;
    const [top, height] = this.place(i);
    if (top < this.list.scrollTop) this.list.scrollTop = top;
    else if (top + height > this.list.scrollTop + this.list.clientHeight) this.list.scrollTop = top + height - this.list.clientHeight;
  }
}

/// A side panel section that folds: its heading's button shows and hides what follows it.
export function collapsible(section, { open = true } = {}) {
  const heading = section.querySelector("h2");
  const body = section.querySelector(".section-body");
  if (!heading || !body) return;
  if (!body.id) body.id = `${section.getAttribute("aria-labelledby")}-body`;
  const button = el("button", { type: "button", className: "fold" });
  button.setAttribute("aria-controls", body.id);
  button.append(...heading.childNodes);
  heading.replaceChildren(button);
  const set = (expanded) => {
    button.setAttribute("aria-expanded", String(expanded));
    body.hidden = !expanded;
    section.dataset.open = String(expanded);
  };
  button.addEventListener("click", () => {
    set(button.getAttribute("aria-expanded") !== "true");
    section.dispatchEvent(new CustomEvent("fold", { bubbles: true }));
  });
  set(open);
}
