// A session's history: its persisted event log (GET /api/sessions/{id}/events,
// paged), merged with the events received live, for the feed (with wall-clock
// times) and for replay (the state at any time, from the last checkpoint before it).

import { applyEvent, pageToken, stateFromSnapshot } from "/dashboard/meridian.js";

export function describeEvent(m, name, title = (id) => id) {
  return describeParts(m, name, title).map((part) => (typeof part === "string" ? part : part.text)).join("");
}

/// What `describeEvent` says, in parts: plain strings, and `{text, kind}` for who did it
/// (`actor`), what it was done to (`subject`, an annotation or the callout) and a drag's
/// state (`state`), which the feed sets apart.
export function describeParts(m, name, title = (id) => id) {
  const who = (id) => ({ text: name(id), kind: "actor" });
  const joined = (p) => ({ text: p.name, kind: "actor" });
  const quoted = (id, known) => ({ text: `“${known || title(id)}”`, kind: "subject" });
  const state = (text) => ({ text, kind: "state" });
  switch (m.type) {
    case "participant.joined": return [joined(m.participant), ` joined as ${m.participant.role}`];
    case "participant.left": return [who(m.participant), ` left (${m.reason})`];
    case "presence": return [
      ...m.joined.map((p) => [joined(p), ` joined as ${p.role}`]),
      ...m.left.map((l) => [who(l.participant), ` left (${l.reason})`]),
    ].flatMap((line, i) => (i ? ["; ", ...line] : line));
    case "camera.begin": return [who(m.participant), ` starts moving the ${m.target} camera`];
    case "camera.end": return [who(m.participant), ` moved the ${m.target} camera (zoom ${m.camera.zoom.toFixed(1)})`];
    case "camera.lease": return m.holder ? [who(m.holder), ` holds the shared camera (${m.reason})`] : [`shared camera released (${m.reason})`];
    case "follow": return [who(m.participant), " follows ",
      m.target === null ? "nobody" : m.target === "shared" ? "the shared camera" : who(m.target)];
    case "annotation.added": return [`added ${m.annotation.type} `, quoted(m.annotation.id, m.annotation.title)];
    case "annotation.updated": return ["updated ", quoted(m.annotation.id, m.annotation.title)];
    case "annotation.removed": return ["removed ", quoted(m.id)];
    case "selection": return m.annotation ? [who(m.participant), " selected ", quoted(m.annotation)] : [who(m.participant), " deselected"];
    case "callout.shown": return [who(m.by), " shows callout ", { text: `“${m.callout.title}”`, kind: "subject" }];
    case "callout.hidden": return [`callout hidden (${m.reason})`];
    case "callout.tapped": return [who(m.by), ` tapped the callout ${m.part}`];
    case "drag": return [who(m.participant), " drag ", quoted(m.id), ": ", state(m.state), m.reason ? ` (${m.reason})` : ""];
    case "drag.refused": return [who(m.participant), " refused dragging ", quoted(m.id), ": held by ",
      m.holder ? who(m.holder) : "another participant"];
    case "map.load": return [who(m.participant), ` map ${m.state}${m.message ? `: ${m.message}` : ""}`];
    case "location": return m.location ? [who(m.participant), " location"] : [who(m.participant), " stopped sharing location"];
    case "settings": return [`settings: policy ${m.settings.dragPolicy}, tint ${m.settings.tint}`];
    case "change.undone": return [who(m.participant), ` undid ${changeName(m.change)} `, quoted(m.annotation)];
    case "change.redone": return [who(m.participant), ` redid ${changeName(m.change)} `, quoted(m.annotation)];
    case "welcome": return ["snapshot received"];
    default: return [m.type];
  }
}

/// The change an undo or redo names, as the feed says it.
export function changeName(change) {
  return { "annotation.add": "the add of", "annotation.update": "the update of", "annotation.remove": "the removal of", drag: "the drag of" }[change] ?? change;
}

/// The feed's type filter: which group an event belongs to.
export function eventGroup(m) {
  if (m.type.startsWith("participant.") || m.type === "presence") return "participant";
  if (m.type.startsWith("camera.") || m.type === "follow") return "camera";
  if (m.type.startsWith("annotation.") || m.type.startsWith("change.")) return "annotation";
  if (m.type.startsWith("drag")) return "drag";
  if (m.type === "selection") return "selection";
  if (m.type.startsWith("callout.")) return "callout";
  if (m.type === "map.load" || m.type === "location") return "presence";
  return m.type;
}

/// The participants an event is about (ids), for the feed's participant filter.
export function eventParticipants(m) {
  const ids = [m.participant?.id ?? m.participant, m.by, m.holder, typeof m.target === "string" && m.target !== "shared" ? m.target : null];
  if (m.type === "presence") ids.push(...m.joined.map((p) => p.id), ...m.left.map((l) => l.participant));
  return ids.filter((x) => typeof x === "string");
}

export class SessionHistory {
  constructor(session) {
    this.session = session;
    this.entries = []; // log entries, by position
    this.items = []; // feed items {time, epoch, seq, event, live}, oldest first
    this.keys = new Set(); // epoch:seq of items already held
    this.serial = 0; // each item's own number (its key in the feed's list)
    this.names = new Map(); // participant id -> name, from everything seen
    this.after = 0;
    this.loaded = false;
    this.error = null;
    this.loading = null;
  }

  /// Fetches the log pages not fetched yet. Resolves with the number of new entries.
  fetchNew() {
    if (this.loading) return this.loading;
    this.loading = (async () => {
      let added = 0;
      try {
        const headers = pageToken() ? { Authorization: `Bearer ${pageToken()}` } : {};
        for (;;) {
          const response = await fetch(`/api/sessions/${encodeURIComponent(this.session)}/events?after=${this.after}&limit=1000`, { headers });
          if (!response.ok) {
            const body = await response.json().catch(() => ({}));
            throw new Error(body.message ?? `HTTP ${response.status}`);
          }
          const page = await response.json();
          for (const e of page.entries) this._addEntry(e);
          added += page.entries.length;
          this.after = page.next;
          if (!page.more) break;
        }
        this.loaded = true;
        this.error = null;
      } catch (error) {
        this.error = error.message;
      } finally {
        this.loading = null;
      }
      return added;
    })();
    return this.loading;
  }

  _addEntry(e) {
    this.entries.push(e);
    if (e.snapshot) {
      for (const p of e.snapshot.participants) this.names.set(p.id, p.name);
      return;
    }
    this._learnNames(e.event);
    this._addItem({ time: e.time, epoch: e.epoch, seq: e.seq, event: e.event, live: false });
  }

  /// An event received live (discrete ones are also in the log, once written).
  addLive(m, epoch, time = Date.now()) {
    this._learnNames(m);
    this._addItem({ time, epoch, seq: m.seq, event: structuredClone(m), live: true });
  }

  _learnNames(m) {
    if (m.type === "participant.joined") this.names.set(m.participant.id, m.participant.name);
    if (m.type === "presence") for (const p of m.joined) this.names.set(p.id, p.name);
  }

  _addItem(item) {
    if (!item.event.transient) {
      const key = `${item.epoch}:${item.seq}`;
      if (this.keys.has(key)) return;
      this.keys.add(key);
    }
    item.id = ++this.serial;
    const items = this.items;
    let i = items.length;
    while (i > 0 && items[i - 1].time > item.time) i--;
    items.splice(i, 0, item);
    if (items.length > 20000) this.keys.delete(`${items[0].epoch}:${items[0].seq}`), items.shift();
  }

  get checkpoints() { return this.entries.filter((e) => e.snapshot); }

  /// The replayable range: from the first checkpoint to now.
  range(now = Date.now()) {
    const first = this.entries.find((e) => e.snapshot);
    return first ? { min: first.time, max: Math.max(now, this.entries.at(-1).time) } : null;
  }

  /// Replay of the session up to `time`: a state rebuilt from the last
  /// checkpoint at or before it, with the logged events after it applied.
  /// `previous` (an earlier result) is continued when it can be.
  replay(time, previous = null) {
    const entries = this.entries;
    let base = -1;
    for (let i = 0; i < entries.length && entries[i].time <= time; i++) if (entries[i].snapshot) base = i;
    if (base < 0) base = entries.findIndex((e) => e.snapshot);
    if (base < 0) return null;
    let r = previous;
    if (!r || r.base !== base || r.time > time) {
      const cp = entries[base];
      r = { base, epoch: cp.epoch, next: base + 1, time: cp.time, state: stateFromSnapshot(structuredClone(cp.snapshot), { session: this.session, epoch: cp.epoch }) };
    }
    while (r.next < entries.length && entries[r.next].time <= time) {
      const e = entries[r.next++];
      // A copy: the state keeps (and later changes) what it is given.
      if (e.event && e.epoch === r.epoch) applyEvent(r.state, structuredClone(e.event));
    }
    r.time = Math.max(time, entries[base].time);
    return r;
  }
}
