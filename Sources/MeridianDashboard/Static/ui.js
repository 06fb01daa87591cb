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

export function setStatus(status) {
  document.body.dataset.status = status;
  $("status").textContent = status === "no-session" ? "no such session" : status;
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

export const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;
