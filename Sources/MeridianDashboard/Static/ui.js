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

/// A list of any length in a scroller of its own: rows of one fixed height, and only
/// those in view (and a few around them) are in the document, so thousands of rows cost
/// what a screenful does. `render(item, index)` makes a row's content; `key(item)` names
/// it (rows kept across updates keep their focus). The scroller is as tall as its rows
/// up to `maxRows` of them.
export class VirtualList {
  constructor(list, { rowHeight, maxRows = 12, render, key, label = null }) {
    this.list = list;
    this.rowHeight = rowHeight; // () => CSS pixels
    this.maxRows = maxRows;
    this.render = render;
    this.key = key;
    this.items = [];
    this.rows = new Map(); // key -> li
    list.classList.add("virtual");
    if (label) list.setAttribute("aria-label", label);
    list.addEventListener("scroll", () => this.draw());
  }

  /// Shows `items` (the list keeps its scroll position).
  update(items) {
    this.items = items;
    this.draw(true);
  }

  draw(changed = false) {
    const h = this.rowHeight();
    const n = this.items.length;
    this.list.style.height = `${Math.max(1, Math.min(n, this.maxRows)) * h}px`;
    this.list.style.setProperty("--row-height", `${h}px`);
    const top = this.list.scrollTop;
    const first = Math.max(0, Math.floor(top / h) - 4);
    const last = Math.min(n, Math.ceil((top + this.maxRows * h) / h) + 4);
    const wanted = new Map();
    for (let i = first; i < last; i++) wanted.set(this.key(this.items[i]), i);
    for (const [k, li] of this.rows) {
      if (!wanted.has(k)) { li.remove(); this.rows.delete(k); }
    }
    let spacer = this.list.querySelector(":scope > .spacer");
    if (!spacer) {
      spacer = el("li", { className: "spacer", ariaHidden: "true" });
      this.list.prepend(spacer);
    }
    spacer.style.height = `${n * h}px`;
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
          if (focused) li.querySelector("button, a")?.focus();
        } else if (!li) {
          li = fresh;
          li.dataset.signature = signature;
          this.rows.set(k, li);
          this.list.append(li);
        }
      }
      li.style.top = `${i * h}px`;
      li.setAttribute("aria-setsize", String(n));
      li.setAttribute("aria-posinset", String(i + 1));
    }
  }

  /// Scrolls so that the row of `key` is in view.
  reveal(key) {
    const i = this.items.findIndex((item) => this.key(item) === key);
    if (i < 0) return;
    const h = this.rowHeight();
    if (i * h < this.list.scrollTop || (i + 1) * h > this.list.scrollTop + this.list.clientHeight) this.list.scrollTop = i * h;
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
