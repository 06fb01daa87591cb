// The server overview: every open session with its participants' names, counts,
// rates, an activity sparkline and its last activity; searchable and sortable.
// While disconnected the figures are dimmed and the rates withdrawn: they are
// no longer current.

import { MeridianOverview } from "/dashboard/meridian.js";
import { Sparkline } from "/dashboard/charts.js";
import { $, el, setStatus, clock, ago } from "/dashboard/ui.js";

const MAX_ROWS = 500;
const NUMERIC = ["participants", "dashboards", "annotations", "drags", "messagesPerSecond", "deliveriesPerSecond", "lastActivity", "seq"];

export function showOverview(url) {
  document.body.dataset.view = "overview";
  $("overview").hidden = false;
  const overview = new MeridianOverview(url);
  const published = { status: "connecting", stale: false, sessions: [], connections: 0, sort: null, filter: "", shown: [] };
  window.meridianDashboard = { view: "overview", get state() { return structuredClone(published); } };
  const history = new Map(); // session -> messages/s of the last minute
  let last = null; // the latest overview message
  let receivedAt = null;
  let sort = { key: null, descending: true }; // null: busy sessions first

  overview.addEventListener("status", (e) => {
    published.status = e.detail;
    setStatus(e.detail);
    const stale = e.detail !== "live" && last !== null;
    if (stale !== published.stale) {
      published.stale = stale;
      render();
    }
  });
  // Under --auth jwt the page needs #token= (an owner or dashboard token for session *).
  overview.addEventListener("refused", (e) => { $("overview-summary").textContent = `Refused: ${e.detail.message}`; });
  overview.addEventListener("overview", (e) => {
    last = e.detail;
    receivedAt = Date.now();
    published.stale = false;
    for (const s of last.sessions) {
      const values = history.get(s.session) ?? [];
      values.push(s.messagesPerSecond);
      if (values.length > 60) values.shift();
      history.set(s.session, values);
    }
    for (const id of history.keys()) if (!last.sessions.some((s) => s.session === id)) history.delete(id);
    render();
  });

  $("overview-search").addEventListener("input", () => render());
  for (const th of document.querySelectorAll(".sessions th[data-sort]")) {
    th.querySelector("button").addEventListener("click", () => {
      const key = th.dataset.sort;
      sort = sort.key === key ? { key, descending: !sort.descending } : { key, descending: NUMERIC.includes(key) };
      render();
    });
  }

  function matches(s, query) {
    if (!query) return true;
    const q = query.toLowerCase();
    return s.session.toLowerCase().includes(q) || (s.names ?? []).some((n) => n.toLowerCase().includes(q));
  }

  function ordered(sessions) {
    const busy = (s) => s.participants * 1000 + s.dashboards + s.messagesPerSecond;
    const byID = (a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0);
    if (!sort.key) return [...sessions].sort((a, b) => busy(b) - busy(a) || byID(a, b));
    const sign = sort.descending ? -1 : 1;
    const value = (s) => (sort.key === "session" ? s.session : s[sort.key] ?? -1);
    return [...sessions].sort((a, b) => {
      const [x, y] = [value(a), value(b)];
      return (x < y ? -1 : x > y ? 1 : 0) * sign || byID(a, b);
    });
  }

  function render() {
    if (!last) return;
    const m = last;
    const stale = published.stale;
    const query = $("overview-search").value.trim();
    $("overview-body").dataset.stale = String(stale);
    const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
    $("overview-summary").textContent = stale
      ? `Disconnected — reconnecting… The figures are from ${clock(receivedAt)} and not current.`
      : `${count(m.sessions.length, "session")}, ${count(m.connections, "connection")}`;
    const total = (key) => m.sessions.reduce((sum, s) => sum + s[key], 0);
    const rate = (v) => (stale ? "—" : v.toFixed(1));
    const tiles = [["Sessions", m.sessions.length], ["Participants", total("participants")], ["Dashboards", total("dashboards")],
      ["Drags now", total("drags")], ["Messages/s", rate(total("messagesPerSecond")), "rate"],
      ["Deliveries/s", rate(total("deliveriesPerSecond")), "rate"]];
    $("tiles").replaceChildren(...tiles.map(([label, value, kind]) =>
      el("div", { className: `tile ${kind ?? ""}` }, el("strong", {}, String(value)), el("span", {}, label))));
    for (const th of document.querySelectorAll(".sessions th[data-sort]")) {
      if (th.dataset.sort === sort.key) th.setAttribute("aria-sort", sort.descending ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    }
    const shown = ordered(m.sessions.filter((s) => matches(s, query)));
    const rows = shown.slice(0, MAX_ROWS).map((s) => {
      const spark = el("canvas", { className: "spark", width: 112, height: 26 });
      spark.setAttribute("role", "img");
      const values = history.get(s.session) ?? [];
      spark.setAttribute("aria-label", `messages per second over the last ${values.length} s, up to ${Math.max(0, ...values).toFixed(1)}`);
      const names = s.names ?? [];
      const more = s.participants - names.length;
      return el("tr", { dataset: { session: s.session }, className: s.participants + s.dashboards === 0 ? "idle" : "" },
        el("td", {}, el("a", { href: `/dashboard/?session=${encodeURIComponent(s.session)}${location.hash}` }, s.session),
          s.node ? el("small", { className: "node", title: "the cluster node that owns the session" }, `on ${s.node}`) : ""),
        el("td", { className: "names" }, String(s.participants),
          names.length ? el("small", {}, names.join(", ") + (more > 0 ? ` and ${more} more` : "")) : ""),
        el("td", {}, String(s.dashboards)), el("td", {}, String(s.annotations)),
        el("td", { className: s.drags > 0 ? "busy" : "" }, String(s.drags)),
        el("td", { className: "rate" }, rate(s.messagesPerSecond)), el("td", {}, spark),
        el("td", { className: "rate" }, rate(s.deliveriesPerSecond)),
        el("td", { className: "last-activity", title: s.lastActivity ? new Date(s.lastActivity).toISOString() : "" },
          s.lastActivity ? ago(s.lastActivity) : "—"),
        el("td", {}, String(s.seq)));
    });
    // Keyboard focus on a session's link stays on it when the rows are drawn anew.
    const focused = document.activeElement?.closest("#sessions tr")?.dataset.session;
    $("sessions").replaceChildren(...rows);
    if (focused) $("sessions").querySelector(`tr[data-session="${CSS.escape(focused)}"] a`)?.focus();
    if (shown.length > MAX_ROWS) {
      $("sessions").append(el("tr", {}, el("td", { colSpan: 10 }, `${shown.length - MAX_ROWS} more: search to narrow the list`)));
    }
    for (const row of rows) {
      const values = history.get(row.dataset.session) ?? [];
      new Sparkline(row.querySelector("canvas.spark"), { capacity: 60, compact: true }).draw(values);
    }
    Object.assign(published, { sessions: m.sessions, connections: m.connections, sort: sort.key && { ...sort }, filter: query,
      shown: shown.map((s) => s.session), stale });
  }

  // "12 s ago" keeps counting between overview messages.
  setInterval(() => { if (last && published.stale) render(); }, 5000);
  overview.connect();
}
