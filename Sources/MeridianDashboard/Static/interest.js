// What of a session the dashboard's map asks the server for (SPEC §4.7): a small
// session whole; a large one by viewport, as clusters at low zooms and one by one
// at high zooms, asked again as the map moves.

import { MeridianError } from "/dashboard/meridian.js";
import { unproject } from "/dashboard/map.js";

/// The zoom below which a large session comes as clusters. At zoom 8 the world is 65,536
/// points wide: a 1,200 by 800-point map shows about 6.6° by 4.4° at the equator (a region a
/// few hundred kilometres across), about 10° by 7° with its margin. 100,000 annotations spread
/// over the world put a couple of hundred there, spread over a continent a few thousand: drawn
/// one by one in a few milliseconds. Each level lower makes the area four times larger, and at
/// zoom 5 it is most of a continent: tens of thousands of marks, too many to read, or to
/// receive again at every move of the map. Zoom 10 would be safe too, but would hide each
/// annotation, and its drags, over whole regions for no gain. (A session crowded into one
/// city is dense at any zoom: its points are drawn as small squares, as in any crowded session.)
export const CLUSTER_BELOW = 8;

/// A session with at most this many annotations is mirrored whole at every zoom: every
/// annotation is fitted, listed and inspectable, and every drag shows (a snapshot of 10,000
/// annotations draws in a fraction of a second). Whole again at or below this; by viewport
/// above a tenth more, so that a session near the limit does not switch at every overview.
export const WHOLE_UP_TO = 10_000;

/// The area held around the view: a quarter of its width and height on each side, so a short
/// pan draws at once.
const MARGIN = 0.25;

export class MapInterest {
  /// `onChange()` is called when a request starts or ends.
  constructor(client, map, { onChange = () => {} } = {}) {
    this.client = client;
    this.map = map;
    this.onChange = onChange;
    this.whole = false; // until the session is known to be small
    this.sized = false; // the session's size is known, or taken as large (clusters that do not cover the world)
    this.inFlight = false;
    this.again = false;
    this.sent = null; // the interest the server has, as JSON
    this.applied = null; // the mode the server has
    client.addEventListener("welcome", () => {
      this.sent = JSON.stringify(client.joinedInterest);
      this.applied = client.joinedInterest?.mode ?? "everything";
      this.update();
    });
    client.addEventListener("clusters", () => { this.sized = true; });
  }

  get mode() { return this.whole ? "everything" : "viewport"; }

  /// Until the session's size is known and the server sends what the map asks for, the mirror
  /// holds a passing state: a map fitted to it would only move again.
  get settling() { return !this.sized || this.applied !== this.mode; }

  /// What the map needs now; null until the map has a size.
  wanted() {
    if (this.whole) return { mode: "everything" };
    const rect = this.map.canvas.getBoundingClientRect();
    if (!rect.width || !rect.height) return null;
    const { x, y, zoom } = this.map.view;
    return {
      mode: "viewport", margin: MARGIN, clusterBelow: CLUSTER_BELOW,
      camera: { center: unproject(x, y), zoom, pitch: 0, bearing: 0 },
      viewport: { width: Math.ceil(rect.width), height: Math.ceil(rect.height) },
    };
  }

  /// A request or a view not yet asked for is pending.
  get pending() {
    if (this.inFlight || this.again) return true;
    const live = this.client.status === "live" || this.client.status === "resuming";
    return live && JSON.stringify(this.wanted()) !== this.sent;
  }

  /// Asks for what the map needs when it changed: one request at a time, the newest view
  /// winning. Until the member is live, the next join asks for it.
  update() {
    const want = this.wanted();
    if (!want) return;
    this.client.join.interest = want;
    if (this.client.status !== "live" && this.client.status !== "resuming") return;
    if (this.inFlight) { this.again = true; return; }
    const key = JSON.stringify(want);
    if (key === this.sent) return;
    this.sent = key;
    this.inFlight = true;
    const done = () => {
      this.inFlight = false;
      if (this.again) { this.again = false; this.update(); }
      this.onChange();
    };
    this.client.request("interest", want).then(() => { this.applied = want.mode; done(); }, (e) => {
      // Refused: asked again at the next change. Closed: the next join asks for it.
      if (e instanceof MeridianError) console.warn(`interest refused: ${e.message}`);
      this.sent = null;
      done();
    });
    this.onChange();
  }

  /// The session's annotation count changed (the server overview): small sessions are mirrored whole.
  sessionSize(count) {
    this.sized = true;
    const whole = this.whole ? count <= WHOLE_UP_TO * 1.1 : count <= WHOLE_UP_TO;
    if (whole === this.whole) return;
    this.whole = whole;
    this.update();
  }
}
