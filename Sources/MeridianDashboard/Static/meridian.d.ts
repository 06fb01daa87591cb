// Types of meridian.js, the browser client of Meridian Protocol v1 (Protocol/SPEC.md), for
// apps written in TypeScript or checked by it. Put it beside the module (or point `paths`
// at it) and import the module as usual:
//
//   import { MeridianClient, serverURL } from "/dashboard/meridian.js";
//   const client = new MeridianClient(serverURL(), { session: "demo", name: "Web", role: "editor" });
//   client.addEventListener("event", (e) => { if (e.detail.type === "drag") move(e.detail.id, e.detail.coordinate); });
//
// Section numbers (§) are those of the SPEC.

export {}; // only what is marked `export` below is the module's

// --- Value types (§8) ------------------------------------------------------------------------

/** Degrees (§8.1). */
export interface Coordinate { latitude: number; longitude: number; }
/** A camera as the server writes it: all four fields (§8.2). */
export interface Camera { center: Coordinate; zoom: number; pitch: number; bearing: number; }
/** A camera as a client sends it: `pitch` and `bearing` default to 0. */
export interface CameraInput { center: Coordinate; zoom: number; pitch?: number; bearing?: number; }
/** Points, each 1–100 000 (§8.3). */
export interface Viewport { width: number; height: number; }
/** Points, x right, y down (§8.4). */
export interface Offset { dx: number; dy: number; }
/** `#rgb`, `#rrggbb` or `#rrggbbaa` (§8.5). */
export type Color = string;
export type Role = "owner" | "editor" | "viewer";
export type DragState = "none" | "starting" | "dragging" | "canceling" | "ending";
export type DragPolicy = "exclusive" | "priority" | "last-writer-wins";
/** Why the server canceled a drag itself (§6.6). */
export type DragCancelReason = "lease_expired" | "holder_left" | "preempted" | "annotation_removed" | "annotation_changed" | "policy_changed";
export type MapLoadState = "loading" | "loaded" | "failed";
export type TrackingMode = "none" | "follow" | "followWithHeading" | "followWithCourse";
export type CameraTarget = "own" | "shared";
export interface Bounds { southWest: Coordinate; northEast: Coordinate; }

interface AnnotationCommon {
  id: string;
  title?: string;
  subtitle?: string;
  kind?: string;
}

/** An annotation as the server writes it: every field with a default written out (§8.6). */
export type Annotation = PointAnnotation | PolylineAnnotation | PolygonAnnotation;
export interface PointAnnotation extends AnnotationCommon {
  type: "point";
  coordinate: Coordinate;
  image?: string;
  zIndex: number; enabled: boolean; metadata: Record<string, unknown>;
  /** The seq of the event that last changed it (§6.3). */
  revision: number;
  centerOffset: Offset; calloutOffset: Offset;
  draggable: boolean; canShowCallout: boolean; scalesWithViewingDistance: boolean; rotatesToMatchCamera: boolean;
}
export interface PolylineAnnotation extends AnnotationCommon {
  type: "polyline";
  coordinates: Coordinate[];
  zIndex: number; enabled: boolean; metadata: Record<string, unknown>; revision: number;
  alpha: number; strokeColor?: Color; lineWidth: number;
}
export interface PolygonAnnotation extends AnnotationCommon {
  type: "polygon";
  coordinates: Coordinate[];
  holes: Coordinate[][];
  zIndex: number; enabled: boolean; metadata: Record<string, unknown>; revision: number;
  alpha: number; strokeColor?: Color; fillColor?: Color;
}

/** An annotation as `annotation.add` sends it: defaults may be left out, `revision` never given. */
export type AnnotationInput =
  | (Partial<Omit<PointAnnotation, "id" | "type" | "coordinate" | "revision">> & { id: string; type: "point"; coordinate: Coordinate })
  | (Partial<Omit<PolylineAnnotation, "id" | "type" | "coordinates" | "revision">> & { id: string; type: "polyline"; coordinates: Coordinate[] })
  | (Partial<Omit<PolygonAnnotation, "id" | "type" | "coordinates" | "revision">> & { id: string; type: "polygon"; coordinates: Coordinate[] });

/** `annotation.update`'s `changes`: `null` clears the optional strings and colours. */
export interface AnnotationPatch {
  title?: string | null; subtitle?: string | null; kind?: string | null; image?: string | null;
  strokeColor?: Color | null; fillColor?: Color | null;
  zIndex?: number; enabled?: boolean; metadata?: Record<string, unknown>;
  coordinate?: Coordinate; centerOffset?: Offset; calloutOffset?: Offset;
  draggable?: boolean; canShowCallout?: boolean; scalesWithViewingDistance?: boolean; rotatesToMatchCamera?: boolean;
  coordinates?: Coordinate[]; holes?: Coordinate[][]; alpha?: number; lineWidth?: number;
}

/** A shared user location (§8.8). */
export interface UserLocation {
  coordinate: Coordinate;
  /** Metres. */
  accuracy: number;
  heading?: number;
  course?: number;
  tracking?: TrackingMode;
  authorization?: "full" | "reduced";
}

export type CalloutAnchor = { coordinate: Coordinate } | { annotation: string } | { participant: string };
export type CalloutAccessory =
  | "hidden"
  | { button: "detailDisclosure" | "infoLight" | "infoDark" | "contactAdd" }
  | { image: string };
/** The shared callout (§8.9). */
export interface Callout {
  title: string;
  detail?: string;
  image?: string;
  accessory?: CalloutAccessory;
  backgroundColor?: Color; titleColor?: Color; detailColor?: Color;
  anchor: CalloutAnchor;
}

/** Camera constraints (§8.10). */
export interface Constraints {
  bounds?: Bounds;
  minZoom?: number; maxZoom?: number; maxPitch?: number;
  policy?: "clamp" | "reject";
}
/** The session's settings as the server writes them (§8.11). */
export interface Settings {
  styleURL: string;
  tint: Color;
  dragPolicy: DragPolicy;
  leaseTimeoutMs: number;
  constraints: Constraints;
}

/** A listed participant and its presence (§8.7). */
export interface Participant {
  id: string;
  name: string;
  color: Color;
  role: Role;
  camera?: Camera;
  viewport?: Viewport;
  /** `"shared"` or a participant id. */
  following?: string;
  /** The id of the annotation it selects. */
  selection?: string;
  mapLoad?: { state: MapLoadState; message?: string };
  location?: UserLocation;
}

/** `{id, name}` of who holds a drag or the camera lease. */
export interface Holder { id: string; name: string; }

/** Viewport interest (§4.7). */
export interface Interest {
  mode: "everything" | "viewport";
  margin?: number;
  clusterBelow?: number;
  camera?: CameraInput;
  viewport?: Viewport;
  filter?: string;
}
/** The member's view as the server writes it (§7.2 `interest`). */
export interface View {
  area: Bounds | null;
  clusters: boolean;
  filter?: string;
  zoom: number;
}
export interface Cluster {
  /** The one annotation of a cluster of one. */
  annotation?: string;
  coordinate: Coordinate;
  count: number;
  splitZoom: number | null;
}

/** A drag in progress, as a snapshot lists it. */
export interface ActiveDrag { id: string; participant: string; state: "starting" | "dragging"; coordinate: Coordinate; }

/** The session a welcome describes (§7.2). */
export interface Snapshot {
  seq: number;
  settings: Settings;
  annotations: Annotation[];
  participants: Participant[];
  sharedCamera: Camera | null;
  cameraLease: string | null;
  callout: Callout | null;
  calloutBy: string | null;
  drags: ActiveDrag[];
}

// --- The mirrored state ----------------------------------------------------------------------

/** One participant's drag of an annotation, as `SessionState.drags` holds it. */
export interface DragEntry { state: Exclude<DragState, "none">; coordinate: Coordinate; }

/** A session as the client mirrors it (`client.state`, `emptyState()`, `stateFromSnapshot()`). */
export interface SessionState {
  session: string | null;
  epoch: string | null;
  /** This connection's participant id. */
  participant: string | null;
  /** The seq of the last discrete event applied. */
  seq: number;
  settings: Settings | null;
  /** By id; a dragged point is at its live coordinate. */
  annotations: Map<string, Annotation>;
  /** Listed participants by id, in join order. */
  participants: Map<string, Participant>;
  sharedCamera: Camera | null;
  cameraLease: string | null;
  callout: Callout | null;
  calloutBy: string | null;
  /** Annotation id -> (participant id -> its drag), drags in progress only. */
  drags: Map<string, Map<string, DragEntry>>;
  /** With viewport interest: the view as the server last wrote it. */
  view: View | null;
  /** While the view clusters: the latest `clusters` message. */
  clusters: { seq: number; view: View; clusters: Cluster[] } | null;
}

// --- Server messages (§7) --------------------------------------------------------------------

export type LeaveReason = "left" | "disconnected" | "slow_consumer" | "replaced";

export interface ParticipantJoinedEvent { type: "participant.joined"; seq: number; participant: Participant; }
export interface ParticipantLeftEvent { type: "participant.left"; seq: number; participant: string; reason: LeaveReason; }
export interface PresenceEvent { type: "presence"; seq: number; joined: Participant[]; left: { participant: string; reason: LeaveReason }[]; }
export interface CameraBeginEvent { type: "camera.begin"; seq: number; target: CameraTarget; participant: string; animated: boolean; viewport?: Viewport; }
export interface CameraChangingEvent { type: "camera.changing"; seq: number; transient: true; target: CameraTarget; participant: string; camera: Camera; viewport?: Viewport; }
export interface CameraEndEvent { type: "camera.end"; seq: number; target: CameraTarget; participant: string; camera: Camera; animated: boolean; viewport?: Viewport; }
export interface CameraLeaseEvent { type: "camera.lease"; seq: number; holder: string | null; reason: "acquired" | "taken_over" | "released" | "holder_left"; }
export interface FollowEvent { type: "follow"; seq: number; participant: string; target: string | null; }
export interface AnnotationAddedEvent { type: "annotation.added"; seq: number; annotation: Annotation; }
export interface AnnotationUpdatedEvent { type: "annotation.updated"; seq: number; annotation: Annotation; }
export interface AnnotationRemovedEvent { type: "annotation.removed"; seq: number; id: string; }
export interface SelectionEvent { type: "selection"; seq: number; participant: string; annotation: string | null; showsCallout: boolean; }
export interface CalloutShownEvent { type: "callout.shown"; seq: number; callout: Callout; by: string; }
export interface CalloutHiddenEvent { type: "callout.hidden"; seq: number; reason: "hidden" | "annotation_removed" | "annotation_changed" | "participant_left" | "location_cleared"; }
export interface CalloutTappedEvent { type: "callout.tapped"; seq: number; part: "body" | "accessory"; by: string; anchor: CalloutAnchor; }
/** A step of someone's drag (§6.6): moves after the first `dragging` are transient. */
export interface AnnotationDragEvent {
  type: "drag"; seq: number; transient?: boolean;
  id: string; participant: string; state: DragState;
  /** The annotation's coordinate after the step. */
  coordinate: Coordinate;
  /** With `ending`: the annotation's revision after the commit. */
  revision?: number;
  /** With a cancellation the server made itself. */
  reason?: DragCancelReason;
}
export interface MapLoadEvent { type: "map.load"; seq: number; participant: string; state: MapLoadState; message?: string; }
export interface LocationEvent { type: "location"; seq: number; transient?: boolean; participant: string; location: UserLocation | null; }
export interface SettingsEvent { type: "settings"; seq: number; settings: Settings; }
export type UndoableChange = "annotation.add" | "annotation.update" | "annotation.remove" | "drag";
export interface ChangeUndoneEvent { type: "change.undone"; seq: number; participant: string; annotation: string; change: UndoableChange; }
export interface ChangeRedoneEvent { type: "change.redone"; seq: number; participant: string; annotation: string; change: UndoableChange; }

/** Every session event (§7.4), discrete and transient: what `applyEvent` applies. */
export type SessionEvent =
  | ParticipantJoinedEvent | ParticipantLeftEvent | PresenceEvent
  | CameraBeginEvent | CameraChangingEvent | CameraEndEvent | CameraLeaseEvent | FollowEvent
  | AnnotationAddedEvent | AnnotationUpdatedEvent | AnnotationRemovedEvent
  | SelectionEvent | CalloutShownEvent | CalloutHiddenEvent | CalloutTappedEvent
  | AnnotationDragEvent | MapLoadEvent | LocationEvent | SettingsEvent | ChangeUndoneEvent | ChangeRedoneEvent;

/** To hidden members (dashboards): someone's drag was refused with `drag_conflict` (§7.5). */
export interface DragRefusedMessage { type: "drag.refused"; seq: number; transient: true; id: string; participant: string; holder: string | null; }

export interface OverviewSession {
  session: string; seq: number;
  participants: number; dashboards: number; annotations: number; drags: number;
  messagesPerSecond: number; deliveriesPerSecond: number;
  names: string[];
  /** Milliseconds since 1970 UTC. */
  lastActivity: number | null;
  node?: string;
}
/** The server overview (§7.5), about once a second to `overview.watch` subscribers. */
export interface OverviewMessage { type: "overview"; connections: number; sessions: OverviewSession[]; }

export interface WelcomeMessage {
  type: "welcome"; ref: number;
  session: string; epoch: string; participant: string; seq: number;
  resumed: boolean;
  resumedFrom?: number;
  interest?: View;
  /** When not resumed. */
  snapshot?: Snapshot;
}
/** What entered and left the member's area (§7.6). */
export interface InterestMessage {
  type: "interest"; seq: number; view: View; complete: boolean;
  entered: Annotation[]; left: string[]; drags: ActiveDrag[];
}
export interface ClustersMessage { type: "clusters"; seq: number; view: View; clusters: Cluster[]; }

/** An accepted request's answer (§7.1). */
export interface Ack {
  type: "ack"; ref: number; seq: number;
  /** The applied camera, when it differs from the one sent. */
  camera?: Camera;
  conflated?: true;
}

export type ErrorCode =
  | "invalid_message" | "unknown_type" | "invalid_field" | "not_joined" | "already_joined" | "forbidden"
  | "not_found" | "already_exists" | "limit_exceeded" | "illegal_drag_transition" | "not_draggable"
  | "drag_conflict" | "being_dragged" | "revision_conflict" | "not_selectable" | "callout_not_allowed"
  | "camera_lease_held" | "camera_lease_required" | "camera_out_of_bounds" | "storage_unavailable"
  | "capacity_exceeded" | "unauthorized" | "token_expired" | "rate_limited" | "session_not_found";
/** A refusal (§7.1, codes §9). */
export interface ErrorMessage {
  type: "error";
  ref: number | null;
  code: ErrorCode;
  message: string;
  field?: string;
  holder?: Holder;
  revision?: number;
  annotation?: Annotation;
  retryAfterMs?: number;
}

// --- Requests (§6) ---------------------------------------------------------------------------

/** The fields of each request a joined client sends with `request` (all but `type` and `ref`). */
export interface RequestFields {
  "leave": {};
  "ping": {};
  "token.refresh": { token: string };
  "interest": Interest;
  "overview.watch": { token?: string };
  "camera.begin": { target?: CameraTarget; animated?: boolean; viewport?: Viewport };
  "camera.changing": { target?: CameraTarget; camera: CameraInput; viewport?: Viewport };
  "camera.end": { target?: CameraTarget; camera: CameraInput; animated?: boolean; viewport?: Viewport };
  "camera.lease.acquire": { force?: boolean };
  "camera.lease.release": {};
  "follow": { target: string | null };
  "annotation.add": { annotation: AnnotationInput };
  "annotation.update": { id: string; changes: AnnotationPatch; ifRevision?: number };
  "annotation.remove": { id: string; ifRevision?: number };
  "select": { id: string };
  "deselect": {};
  "callout.show": { callout: Callout };
  "callout.hide": {};
  "callout.tap": { part: "body" | "accessory" };
  /** `coordinate`: required for `dragging`, optional for `ending`; `ifRevision` only with `starting`. */
  "drag": { id: string; state: "starting" | "dragging" | "ending" | "canceling"; coordinate?: Coordinate; ifRevision?: number };
  "map.load": { state: MapLoadState; message?: string };
  "location": { location: UserLocation | null };
  "session.configure": { settings: { styleURL?: string; tint?: Color; dragPolicy?: DragPolicy; leaseTimeoutMs?: number; constraints?: Constraints | null } };
  "undo": {};
  "redo": {};
}
export type RequestType = keyof RequestFields;
/** `request`'s fields argument: optional when the request has no required field. */
export type RequestArguments<K extends RequestType> = {} extends RequestFields[K] ? [fields?: RequestFields[K]] : [fields: RequestFields[K]];
/** The requests `requestIfUnchanged` makes conditional (`ifRevision` is added from the state). */
export type ConditionalRequestType = "annotation.update" | "annotation.remove" | "drag";

// --- Events of the classes ---------------------------------------------------------------------

/**
 * `status` of a connection: `connecting`, `live`, `resuming` (missed events follow), `disconnected`,
 * `reconnecting`, `closed`, `suspended` (the page was hidden), `no-session` (a hidden join of a
 * session that does not exist; retried), `refused` (the join or `overview.watch` was refused).
 * After a close whose code says not to reconnect (SPEC §10) the connection stays closed:
 * `replaced` (4010: a newer connection of the same participant is live), `stopped` (1002, 1003,
 * 1007, 1009, 4009: the client broke the protocol), `token-expired` (4401 and no new token).
 */
export type ConnectionStatus =
  | "idle" | "connecting" | "live" | "resuming" | "disconnected" | "reconnecting"
  | "closed" | "suspended" | "no-session" | "refused" | "replaced" | "stopped" | "token-expired";

/** What a client does after a close code (SPEC §10, "Client should"). */
export type CloseAdvice = "reconnect" | "reconnect-now" | "renew-token" | "replaced" | "fix-client" | "give-up";

/** The `detail` of a `state` event: what changed. */
export type StateChange =
  | { reset: boolean }
  | { live: true }
  | { event: SessionEvent }
  | { interest: InterestMessage }
  | { clusters: ClustersMessage };

export interface MeridianClientEventMap {
  "status": CustomEvent<ConnectionStatus>;
  "welcome": CustomEvent<WelcomeMessage>;
  /** Every server event after it is applied, and `drag.refused` (hidden members). */
  "event": CustomEvent<SessionEvent | DragRefusedMessage>;
  "state": CustomEvent<StateChange>;
  "refused": CustomEvent<DragRefusedMessage>;
  /** An error that answers no pending request (a refused join among them). */
  "error": CustomEvent<ErrorMessage>;
  "interest": CustomEvent<InterestMessage>;
  "clusters": CustomEvent<ClustersMessage>;
  "overview": CustomEvent<OverviewMessage>;
}

export interface MeridianOverviewEventMap {
  "status": CustomEvent<ConnectionStatus>;
  "overview": CustomEvent<OverviewMessage>;
  /** `overview.watch` was refused. */
  "refused": CustomEvent<MeridianError>;
}

// --- Values ------------------------------------------------------------------------------------

/** The WebSocket subprotocol. */
export declare const SUBPROTOCOL: "meridian.v1";
/** Every close code the server sends, with what a client does after it (SPEC §10). */
export declare const CLOSE_CODES: Readonly<Record<number, CloseAdvice>>;
/** The advice of `CLOSE_CODES` for `code`: `reconnect` for any other code (1006 among them). */
export declare function closeAdvice(code: number): CloseAdvice;

/** The WebSocket URL of the server that served the page, with the page's `#token=` as `?access_token=`. */
export declare function serverURL(location?: Pick<Location, "protocol" | "host" | "hash">): string;
/** The bearer token of the page's fragment (`#token=…`), else null. */
export declare function pageToken(location?: Pick<Location, "hash">): string | null;
/** `url` with `access_token` set to `token` (unchanged when there is none). */
export declare function withToken(url: string, token?: string | null): string;

/** A refusal: rejects the promise of `request` (§7.1). */
export declare class MeridianError extends Error {
  constructor(message: Pick<ErrorMessage, "code" | "message"> & Partial<ErrorMessage>);
  code: ErrorCode;
  field: string | undefined;
  /** Who holds the drag or the camera lease. */
  holder: Holder | undefined;
  /** With `revision_conflict`: the annotation's current revision and the annotation as it is now. */
  revision: number | undefined;
  annotation: Annotation | undefined;
}

/** A state with nothing in it. */
export declare function emptyState(): SessionState;
/** The session state a snapshot describes (also used to replay an event log). */
export declare function stateFromSnapshot(snapshot: Snapshot, ids?: { session?: string | null; epoch?: string | null; participant?: string | null }): SessionState;
/** Applies an `interest` message to a state. */
export declare function applyInterest(state: SessionState, message: InterestMessage): void;
/** Applies one server event (discrete or transient) to a state. */
export declare function applyEvent(state: SessionState, message: SessionEvent): void;

/** One WebSocket that reconnects by itself with backoff (the base of both clients; not exported). */
declare abstract class Connection extends EventTarget {
  constructor(url: string, options?: { renewToken?: (() => Promise<string | null> | string | null) | null });
  /** The WebSocket URL; its `access_token` is replaced by a token `renewToken` gives. */
  readonly url: string;
  /** After a 4401 close: a new bearer token for the next join, or null to stay closed (`token-expired`). */
  renewToken: (() => Promise<string | null> | string | null) | null;
  /** The code and advice of the server's last close (null before any, and after `connect`). */
  closeCode: number | null;
  closeAdvice: CloseAdvice | null;
  status: ConnectionStatus;
  socket: WebSocket | null;
  /** `performance.now()` when the last frame arrived. */
  receivedAt?: number;
  protected nextRef: number;
  protected pending: Map<number, { resolve: (ack: Ack) => void; reject: (error: Error) => void; type: string }>;
  protected backoff: number;
  protected closed: boolean;
  protected suspended: boolean;
  protected timer: ReturnType<typeof setTimeout> | null;
  /** Opens the connection (and reconnects whenever it drops, until `close`). */
  connect(): this;
  close(): void;
  /** Sends a request; resolves with its ack, rejects with a MeridianError (or an Error when not connected). */
  request<K extends RequestType>(type: K, ...fields: RequestArguments<K>): Promise<Ack>;
}

/** A session member with a mirror of the session state. */
export declare class MeridianClient extends Connection {
  constructor(url: string, options: {
    session: string;
    /** Required without a token. */
    name?: string;
    /** Required without a token; with one, at most the token's role. */
    role?: Role;
    hidden?: boolean;
    color?: Color;
    interest?: Interest;
    /** After a 4401 close: a new bearer token (set as the URL's `access_token`), or null to stay closed. */
    renewToken?: () => Promise<string | null> | string | null;
  });
  /** What every join (the reconnects' included) sends; set `join.interest` for later joins. */
  join: { session: string; name?: string; role?: Role; hidden: boolean; color?: Color; interest?: Interest };
  readonly state: SessionState;
  /** The interest the last join asked for. */
  joinedInterest: Interest | null;
  /** The seq of an `interest` message that raised `state.seq`. */
  announcedSeq: number | null;
  protected missingRetry: number;
  /** The revision of annotation `id` as this client last saw it. */
  revisionOf(id: string): number | undefined;
  /** `request` made conditional on the annotation `fields.id` being still at the revision this client saw. */
  requestIfUnchanged<K extends ConditionalRequestType>(type: K, fields: RequestFields[K]): Promise<Ack>;
  /** Reverts this participant's own last change (§6.9). */
  undo(): Promise<Ack>;
  /** Makes the last undone change again. */
  redo(): Promise<Ack>;
  addEventListener<K extends keyof MeridianClientEventMap>(type: K, listener: (this: MeridianClient, event: MeridianClientEventMap[K]) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof MeridianClientEventMap>(type: K, listener: (this: MeridianClient, event: MeridianClientEventMap[K]) => void, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}

/** The server overview (`overview.watch`); resubscribes after reconnecting. */
export declare class MeridianOverview extends Connection {
  addEventListener<K extends keyof MeridianOverviewEventMap>(type: K, listener: (this: MeridianOverview, event: MeridianOverviewEventMap[K]) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof MeridianOverviewEventMap>(type: K, listener: (this: MeridianOverview, event: MeridianOverviewEventMap[K]) => void, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}
