// Meridian Protocol v1 for browsers: join, snapshot, a state mirror that applies
// events in seq order, transient events, `live` after resume, viewport interest
// (areas, skipped events and clusters), and automatic reconnection with resume.
// No dependencies, no build step:
//
//   import { MeridianClient } from "/dashboard/meridian.js";
//   const client = new MeridianClient("ws://127.0.0.1:8080/", { session: "demo", name: "Web", role: "editor" });
//   client.addEventListener("state", () => draw(client.state));
//   client.connect();
//   await client.request("annotation.add", { annotation: { id: "a", type: "point", coordinate: { latitude: 0, longitude: 0 } } });
//   // Only if nobody changed it since this client saw it (else a MeridianError "revision_conflict"):
//   await client.requestIfUnchanged("annotation.update", { id: "a", changes: { title: "Quay" } });

export const SUBPROTOCOL = "meridian.v1";

/// What a client does after the server closes its connection with each code (SPEC §10, the
/// server's own table: CloseCode in MeridianProtocol). A code not listed, and a close without
/// one (1006), is a network failure: reconnect with backoff and resume.
///   reconnect      reconnect with backoff and resume
///   reconnect-now  reconnect at once (to any node) and resume
///   renew-token    get a new token (`renewToken`), reconnect and resume; without one stay closed
///   replaced       stay closed: the newer connection of the same participant is the live one
///   fix-client     stay closed: the client broke the protocol; reconnecting would repeat it
///   give-up        stay closed: too many invalid requests
export const CLOSE_CODES = Object.freeze({
  1000: "reconnect", 1001: "reconnect", 1002: "fix-client", 1003: "fix-client", 1007: "fix-client",
  1009: "fix-client", 1011: "reconnect", 4008: "reconnect", 4009: "give-up", 4010: "replaced",
  4012: "reconnect-now", 4401: "renew-token",
});

/// The advice of CLOSE_CODES for `code` ("reconnect" for any other).
export function closeAdvice(code) {
  return CLOSE_CODES[code] ?? "reconnect";
}

/// The WebSocket URL of the server that served the current page.
/// With a bearer token in the page's fragment (`#token=…`, never sent to a
/// server or logged) the URL carries it as `?access_token=` (SPEC §5.1).
export function serverURL(location = window.location) {
  return withToken((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/", pageToken(location));
}

/// The bearer token of the page: `#token=…`, else nothing.
export function pageToken(location = window.location) {
  return new URLSearchParams(location.hash.replace(/^#/, "")).get("token");
}

/// `url` with `access_token` set to `token` (unchanged when there is none).
export function withToken(url, token) {
  if (!token) return url;
  const u = new URL(url);
  u.searchParams.set("access_token", token);
  return u.toString();
}

/// An answer the server refused: `code`, `field`, `holder` as in SPEC §7.1; with
/// `revision_conflict` also `revision` and `annotation`, the annotation as it is now.
export class MeridianError extends Error {
  constructor(message) {
    super(`${message.code}: ${message.message}`);
    this.code = message.code;
    this.field = message.field;
    this.holder = message.holder;
    this.revision = message.revision;
    this.annotation = message.annotation;
  }
}

export function emptyState() {
  return {
    session: null, epoch: null, participant: null, seq: 0, settings: null,
    annotations: new Map(), participants: new Map(), sharedCamera: null,
    cameraLease: null, callout: null, calloutBy: null,
    /// annotation id -> Map(participant id -> {state, coordinate})
    drags: new Map(),
    /// With viewport interest (SPEC §4.7): the member's view as the server last wrote it,
    /// `{area, clusters, zoom}`; `annotations` and `drags` then hold only what its area holds.
    view: null,
    /// While the view clusters: the latest `clusters` message (`{seq, view, clusters}`).
    clusters: null,
  };
}

/// The session state a snapshot describes (also used to replay an event log).
export function stateFromSnapshot(snap, { session = null, epoch = null, participant = null } = {}) {
  const s = Object.assign(emptyState(), { session, epoch, participant });
  s.seq = snap.seq;
  s.settings = snap.settings;
  for (const a of snap.annotations) s.annotations.set(a.id, a);
  for (const p of snap.participants) s.participants.set(p.id, p);
  s.sharedCamera = snap.sharedCamera;
  s.cameraLease = snap.cameraLease;
  s.callout = snap.callout;
  s.calloutBy = snap.calloutBy;
  for (const d of snap.drags) setDrag(s, d.id, d.participant, d.state, d.coordinate);
  return s;
}

function setDrag(s, id, participant, state, coordinate) {
  let group = s.drags.get(id);
  if (state === "none") {
    if (group) { group.delete(participant); if (group.size === 0) s.drags.delete(id); }
    return;
  }
  if (!group) { group = new Map(); s.drags.set(id, group); }
  group.set(participant, { state, coordinate });
}

/// Applies an `interest` message (SPEC §7.6): the annotations that entered the member's
/// area (all of them when `complete`), those that left it, and the entered ones' drags.
export function applyInterest(s, m) {
  if (m.complete) { s.annotations.clear(); s.drags.clear(); }
  for (const id of m.left) { s.annotations.delete(id); s.drags.delete(id); }
  for (const a of m.entered) { s.annotations.set(a.id, a); s.drags.delete(a.id); }
  for (const d of m.drags) setDrag(s, d.id, d.participant, d.state, d.coordinate);
  s.view = m.view;
  if (!m.view.clusters) s.clusters = null;
}

/// Applies one server event (discrete or transient) to a session state.
export function applyEvent(s, m) {
  const who = s.participants.get(m.participant);
  switch (m.type) {
    case "participant.joined": s.participants.set(m.participant.id, m.participant); break;
    case "participant.left": s.participants.delete(m.participant); break;
    case "presence": // a large session's joins and leaves, announced together
      for (const p of m.joined) s.participants.set(p.id, p);
      for (const l of m.left) s.participants.delete(l.participant);
      break;
    case "camera.begin": if (who && m.viewport) who.viewport = m.viewport; break;
    case "camera.changing": case "camera.end":
      if (m.target === "shared") s.sharedCamera = m.camera;
      else if (who) { who.camera = m.camera; if (m.viewport) who.viewport = m.viewport; }
      break;
    case "camera.lease": s.cameraLease = m.holder; break;
    case "follow": if (who) { if (m.target === null) delete who.following; else who.following = m.target; } break;
    case "annotation.added": case "annotation.updated": s.annotations.set(m.annotation.id, m.annotation); break;
    case "annotation.removed": s.annotations.delete(m.id); s.drags.delete(m.id); break;
    case "selection": if (who) { if (m.annotation === null) delete who.selection; else who.selection = m.annotation; } break;
    case "callout.shown": s.callout = m.callout; s.calloutBy = m.by; break;
    case "callout.hidden": s.callout = null; s.calloutBy = null; break;
    case "drag": {
      const a = s.annotations.get(m.id);
      if (a) a.coordinate = m.coordinate;
      if (a && m.state === "ending") a.revision = m.revision; // the commit's revision (SPEC §6.3)
      setDrag(s, m.id, m.participant, m.state, m.coordinate);
      break;
    }
    case "map.load": if (who) who.mapLoad = m.message ? { state: m.state, message: m.message } : { state: m.state }; break;
    case "location": if (who) { if (m.location === null) delete who.location; else who.location = m.location; } break;
    case "settings": s.settings = m.settings; break;
    default: break;
  }
  if (!m.transient && typeof m.seq === "number") s.seq = Math.max(s.seq, m.seq);
}

/// Base class: one WebSocket that reconnects by itself with backoff.
/// A page that is left (`pagehide`, also into the back/forward cache) closes
/// its socket, so it never lingers in a session; when the page is shown again
/// from that cache (`pageshow` with `persisted`) it reconnects and resumes.
class Connection extends EventTarget {
  constructor(url, { renewToken } = {}) {
    super();
    this.url = url;
    /// Resolves to a new bearer token after a 4401 close (or to null: stay closed).
    this.renewToken = renewToken ?? null;
    /// The code and advice (CLOSE_CODES) of the last close by the server, until the next connect.
    this.closeCode = null;
    this.closeAdvice = null;
    this.status = "idle";
    this.socket = null;
    this.nextRef = 1;
    this.pending = new Map();
    this.backoff = 250;
    this.closed = false;
    this.suspended = false;
    this.timer = null;
    if (typeof window !== "undefined") {
      window.addEventListener("pagehide", () => this._suspend());
      window.addEventListener("pageshow", (e) => { if (e.persisted) this._wake(); });
    }
  }

  /// The page is going away (perhaps into the back/forward cache): leave now.
  _suspend() {
    if (this.closed || this.suspended || this.status === "idle") return;
    this.suspended = true;
    clearTimeout(this.timer);
    const socket = this.socket;
    this.socket = null;
    for (const p of this.pending.values()) p.reject(new Error(`${p.type}: the page was hidden`));
    this.pending.clear();
    if (socket) socket.close(1000, "page hidden");
    this._setStatus("suspended");
  }

  /// The page is shown again from the back/forward cache: reconnect (and resume).
  _wake() {
    if (!this.suspended) return;
    this.suspended = false;
    this.backoff = 250;
    this._open();
  }

  connect() {
    this.closed = false;
    this.closeCode = null;
    this.closeAdvice = null;
    this._open();
    return this;
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.socket) this.socket.close(1000);
    this._setStatus("closed");
  }

  /// Sends a request; resolves with its ack, rejects with a MeridianError.
  request(type, fields = {}) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new Error(`${type}: not connected`));
    }
    const ref = this.nextRef++;
    this.socket.send(JSON.stringify({ type, ref, ...fields }));
    return new Promise((resolve, reject) => this.pending.set(ref, { resolve, reject, type }));
  }

  _setStatus(status) {
    if (this.status === status) return;
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: status }));
  }

  _open() {
    this._setStatus(this.status === "idle" || this.status === "no-session" ? "connecting" : "reconnecting");
    const socket = new WebSocket(this.url, SUBPROTOCOL);
    this.socket = socket;
    socket.onopen = () => { this.backoff = 250; this._opened(); };
    socket.onmessage = (e) => {
      this.receivedAt = performance.now(); // before parsing: when the frame arrived
      this._receive(JSON.parse(e.data));
    };
    socket.onclose = (e) => {
      if (this.socket !== socket) return;
      this.socket = null;
      for (const p of this.pending.values()) p.reject(new Error(`${p.type}: connection closed`));
      this.pending.clear();
      if (this.closed) return;
      this.closeCode = e.code;
      this.closeAdvice = closeAdvice(e.code);
      this._afterClose(this.closeAdvice);
    };
  }

  /// What the close code says (SPEC §10): reconnect with backoff or at once, with a new token,
  /// or stay closed with a status that says why (`replaced`, `stopped`, `token-expired`).
  _afterClose(advice) {
    switch (advice) {
      case "replaced":
        this.closed = true;
        this._setStatus("replaced");
        return;
      case "fix-client": case "give-up":
        this.closed = true;
        this._setStatus("stopped");
        return;
      case "renew-token":
        this._setStatus("disconnected");
        Promise.resolve(this.renewToken ? this.renewToken() : null).catch(() => null).then((token) => {
          if (this.closed || this.socket) return;
          if (!token) { this.closed = true; this._setStatus("token-expired"); return; }
          this.url = withToken(this.url, token);
          this._open();
        });
        return;
      case "reconnect-now":
        this._setStatus("disconnected");
        this._open();
        return;
      default:
        this._setStatus("disconnected");
        this.timer = setTimeout(() => this._open(), this.backoff);
        this.backoff = Math.min(this.backoff * 2, 5000);
    }
  }

  /// Drops the connection and reconnects (e.g. after a seq gap).
  _restart() {
    if (this.socket) this.socket.close(1000);
  }

  _answer(message) {
    const p = this.pending.get(message.ref);
    if (!p) return false;
    this.pending.delete(message.ref);
    if (message.type === "error") p.reject(new MeridianError(message)); else p.resolve(message);
    return true;
  }
}

/// A session member with a mirror of the session state (`client.state`).
/// Events: `status` (connecting, live, disconnected, reconnecting, closed),
/// `welcome`, `event` (every server event, discrete and transient, after it is
/// applied), `state` (after anything changed), `refused` (drag.refused, for
/// hidden members), `error` (an error not answering a pending request), and with
/// viewport interest `interest` and `clusters` (after they are applied).
/// `interest` (SPEC §4.7) is carried by every join, a resume's included; change it
/// with the `interest` request, and set `join.interest` so that later joins ask for it too.
/// A hidden join of a session that does not exist is refused
/// (`session_not_found`): the status becomes `no-session` and the join is
/// retried now and then, so the page goes live once someone starts the session.
export class MeridianClient extends Connection {
  constructor(url, { session, name, role = "viewer", hidden = false, color, interest, renewToken } = {}) {
    super(url, { renewToken });
    this.join = { session, name, role, hidden, ...(color ? { color } : {}), ...(interest ? { interest } : {}) };
    this.state = emptyState();
    this.missingRetry = 1000;
    /// The interest the last join asked for.
    this.joinedInterest = null;
    /// The seq of an `interest` message that raised `state.seq`: the event that brought an
    /// annotation into the area (a drag) follows it with that same seq.
    this.announcedSeq = null;
  }

  /// The revision of annotation `id` as this client last saw it (SPEC §6.3), or undefined.
  revisionOf(id) {
    return this.state.annotations.get(id)?.revision;
  }

  /// `request` made conditional on the annotation `fields.id` being still at the revision this
  /// client last saw (`ifRevision`, SPEC §6.3): `annotation.update`, `annotation.remove`, or a
  /// `drag` with state `starting`. A change by someone else meanwhile rejects it with a
  /// MeridianError whose `code` is "revision_conflict" and whose `annotation` is theirs.
  requestIfUnchanged(type, fields) {
    const revision = this.revisionOf(fields.id);
    return this.request(type, revision === undefined ? fields : { ...fields, ifRevision: revision });
  }

  /// Reverts this participant's own last change (SPEC §6.9); `redo` makes it again. Both
  /// resolve with the ack; a change someone else has made since rejects with a MeridianError
  /// whose `code` is "revision_conflict".
  undo() { return this.request("undo"); }
  redo() { return this.request("redo"); }

  _opened() {
    clearTimeout(this.timer);
    const resume = this.state.epoch ? { resume: { epoch: this.state.epoch, seq: this.state.seq } } : {};
    // The id of the last connection: its undo history follows this one (SPEC §6.9).
    const previous = this.state.participant ? { previousParticipant: this.state.participant } : {};
    const ref = this.nextRef++;
    this.joinedInterest = this.join.interest ?? null;
    this.socket.send(JSON.stringify({ type: "join", ref, ...this.join, ...resume, ...previous }));
  }

  _receive(m) {
    switch (m.type) {
      case "welcome": return this._welcome(m);
      case "ack": case "error":
        if (!this._answer(m) && m.type === "error") {
          if (m.code === "session_not_found" && this.status !== "live") {
            this._setStatus("no-session");
            this.dispatchEvent(new CustomEvent("error", { detail: m }));
            const socket = this.socket;
            this.timer = setTimeout(() => { if (socket && socket === this.socket && socket.readyState === WebSocket.OPEN) this._opened(); },
              this.missingRetry);
            this.missingRetry = Math.min(this.missingRetry * 2, 5000);
            return;
          }
          if (this.status !== "live") this._setStatus("refused"); // the join was refused (SPEC §9)
          this.dispatchEvent(new CustomEvent("error", { detail: m }));
        }
        return;
      case "live": return this._live(m);
      case "interest": return this._interest(m);
      case "clusters": return this._clusters(m);
      case "skipped": return this._skipped(m);
      default: return this._event(m);
    }
  }

  _welcome(m) {
    this.missingRetry = 1000;
    const s = this.state;
    s.session = m.session;
    s.epoch = m.epoch;
    s.participant = m.participant;
    if (!m.resumed) {
      Object.assign(s, stateFromSnapshot(m.snapshot, { session: m.session, epoch: m.epoch, participant: m.participant }));
    }
    s.view = m.interest ?? null;
    this.announcedSeq = null;
    this._setStatus(m.resumed ? "resuming" : "live");
    this.dispatchEvent(new CustomEvent("welcome", { detail: m }));
    this.dispatchEvent(new CustomEvent("state", { detail: { reset: !m.resumed } }));
  }

  _live(m) {
    const s = this.state;
    s.sharedCamera = m.sharedCamera;
    for (const p of m.participants) {
      const known = s.participants.get(p.id);
      if (!known) continue;
      for (const key of ["camera", "viewport", "location"]) {
        if (p[key] === null) delete known[key]; else known[key] = p[key];
      }
    }
    for (const a of m.annotations) {
      const known = s.annotations.get(a.id);
      if (known) known.coordinate = a.coordinate;
    }
    this._setStatus("live");
    this.dispatchEvent(new CustomEvent("state", { detail: { live: true } }));
  }

  /// What entered and left the area; the message accounts for every seq up to its own.
  _interest(m) {
    const s = this.state;
    applyInterest(s, m);
    if (m.seq > s.seq) { s.seq = m.seq; this.announcedSeq = m.seq; }
    this.dispatchEvent(new CustomEvent("interest", { detail: m }));
    this.dispatchEvent(new CustomEvent("state", { detail: { interest: m } }));
  }

  /// The clusters of the area. Not a stream position: their seq accounts for nothing.
  _clusters(m) {
    this.state.clusters = { seq: m.seq, view: m.view, clusters: m.clusters };
    this.state.view = m.view;
    this.dispatchEvent(new CustomEvent("clusters", { detail: m }));
    this.dispatchEvent(new CustomEvent("state", { detail: { clusters: m } }));
  }

  /// Every discrete event up to `m.seq` not received was outside the area (SPEC §4.7).
  _skipped(m) {
    if (m.seq > this.state.seq) this.state.seq = m.seq;
    this.announcedSeq = null;
  }

  _event(m) {
    const s = this.state;
    if (m.type === "drag.refused") {
      this.dispatchEvent(new CustomEvent("refused", { detail: m }));
      this.dispatchEvent(new CustomEvent("event", { detail: m }));
      return;
    }
    if (m.type === "overview") {
      this.dispatchEvent(new CustomEvent("overview", { detail: m }));
      return;
    }
    if (!m.transient) {
      const announced = m.seq === this.announcedSeq; // the event an interest message came ahead of
      this.announcedSeq = null;
      if (m.seq <= s.seq && !announced) return; // already applied (replayed after a resume)
      if (m.seq > s.seq + 1) { this._restart(); return; } // a gap: resume
      s.seq = m.seq;
    }
    this._apply(m);
    this.dispatchEvent(new CustomEvent("event", { detail: m }));
    this.dispatchEvent(new CustomEvent("state", { detail: { event: m } }));
  }

  _apply(m) {
    applyEvent(this.state, m);
  }
}

/// The server overview (`overview.watch`): an `overview` event about once a
/// second with every session's counts and rates; resubscribes after reconnecting.
export class MeridianOverview extends Connection {
  _opened() {
    this.request("overview.watch").then(() => this._setStatus("live"), (e) => {
      if (!(e instanceof MeridianError)) return; // the connection closed: it reconnects
      this._setStatus("refused");
      this.dispatchEvent(new CustomEvent("refused", { detail: e }));
    });
  }

  _receive(m) {
    if (m.type === "ack" || m.type === "error") { this._answer(m); return; }
    if (m.type === "overview") this.dispatchEvent(new CustomEvent("overview", { detail: m }));
  }
}
