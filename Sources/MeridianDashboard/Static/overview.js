// The server overview: every open session with its participants' names, counts,
// rates, an activity sparkline and its last activity; searchable and sortable.
// While disconnected the figures are dimmed and the rates withdrawn: they are
// no longer current.

import { MeridianOverview, pageToken } from "/dashboard/meridian.js";
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
  // A session's last minute, from the server, the first time it is listed (rows shown first).
  const asked = new Set();
  const opened = new Set(); // sessions whose "+N" list is open (rows are drawn anew every second)
  const seeded = new Set();
  async function seed(session) {
    asked.add(session);
    try {
      const headers = pageToken() ? { Authorization: `Bearer ${pageToken()}` } : {};
      const response = await fetch(`/api/sessions/${encodeURIComponent(session)}/rates`, { headers });
      if (!response.ok) return;
      const body = await response.json();
      const since = history.get(session) ?? [];
      // The server's samples end about now; what arrived meanwhile is newer.
      history.set(session, [...body.messagesPerSecond.slice(0, Math.max(0, body.messagesPerSecond.length - since.length)), ...since].slice(-60));
      seeded.add(session);
      published.seeded = [...seeded];
      render();
    } catch { /* the sparkline fills as overviews come */ }
  }

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
    for (const s of ordered(last.sessions).slice(0, 50)) if (!asked.has(s.session)) seed(s.session);
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
      : `${count(m.sessions.length, "session")}; ${count(m.connections, "open connection")} to the server: participants, dashboards `
        + "and overview pages like this one (which counts itself).";
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
      spark.title = `last ${values.length} s, up to ${Math.max(0, ...values).toFixed(1)} messages/s`;
      const names = s.names ?? [];
      // One line: the count, the first names as fit (those the search matches first, marked), and "+N"
      // opening the whole list (the row keeps its height).
      const found = query ? names.filter((n) => n.toLowerCase().includes(query.toLowerCase())) : [];
      const inline = [...found, ...names.filter((n) => !found.includes(n))].slice(0, 3);
      const rest = s.participants - inline.length;
      const list = rest > 0 ? el("details", { className: "more", open: opened.has(s.session) },
        el("summary", { title: "everyone in the session" }, `+${rest}`),
        el("ul", {}, ...names.map((n) => el("li", {}, n)),
          ...(s.participants > names.length ? [el("li", { className: "muted" }, `and ${s.participants - names.length} more`)] : []))) : "";
      return el("tr", { dataset: { session: s.session }, className: s.participants + s.dashboards === 0 ? "idle" : "" },
        el("td", { title: s.session }, el("a", { href: `/dashboard/?session=${encodeURIComponent(s.session)}${location.hash}` }, s.session),
          s.node ? el("small", { className: "node", title: "the cluster node that owns the session" }, `on ${s.node}`) : ""),
        el("td", { className: "names" }, el("div", { className: "line" }, el("strong", { className: "n" }, String(s.participants)),
          inline.length ? el("span", { className: "who", title: names.join(", ") },
            ...inline.flatMap((n, i) => [i ? ", " : "", found.includes(n) ? el("mark", {}, n) : n])) : "", list)),
        el("td", {}, String(s.dashboards)), el("td", {}, String(s.annotations)),
        el("td", { className: s.drags > 0 ? "busy" : "" }, String(s.drags)),
        el("td", { className: "rate" }, rate(s.messagesPerSecond)), el("td", {}, spark),
        el("td", { className: "rate" }, rate(s.deliveriesPerSecond)),
        el("td", { className: "last-activity", title: s.lastActivity ? new Date(s.lastActivity).toISOString() : "" },
          s.lastActivity ? ago(s.lastActivity) : "—"),
        el("td", {}, String(s.seq)));
    });
    // Keyboard focus on a session's link stays on it when the rows are drawn anew.
    for (const d of rows.flatMap((r) => [...r.querySelectorAll("details")])) {
      d.addEventListener("toggle", () => { const id = d.closest("tr").dataset.session; if (d.open) opened.add(id); else opened.delete(id); });
    }
    const focusedSummary = document.activeElement?.matches("#sessions summary");
    const focused = document.activeElement?.closest("#sessions tr")?.dataset.session;
    $("sessions").replaceChildren(...rows);
    if (focused) $("sessions").querySelector(`tr[data-session="${CSS.escape(focused)}"] ${focusedSummary ? "summary" : "a"}`)?.focus();
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
