import MeridianCore

/// Where a reconnecting client left off.
public struct ResumePoint: Hashable, Sendable {
    /// The session epoch the client last saw (SPEC §3): a seq means something only under it.
    public var epoch: String
    /// The highest seq the client processed (from a discrete event, an `ack` or the `welcome`).
    public var seq: UInt64
    /// The point `seq` of epoch `epoch`.
    public init(epoch: String, seq: UInt64) {
        self.epoch = epoch
        self.seq = seq
    }
}

/// What a `join` asks for. With a bearer token the token decides the
/// participant id and the most the role may be; without one (`--auth none`)
/// `name` and `role` are required.
public struct JoinParameters: Hashable, Sendable {
    /// The display name (1–64 characters): required without a token; with one, the token's `name` comes first.
    public var name: String?
    /// The role asked for: required without a token; with one, at most the token's (default: the token's).
    public var role: Role?
    /// nil when the request did not say.
    public var hidden: Bool?
    /// The participant's colour; nil: the next one of the server's 12-colour palette.
    public var color: Color?
    /// The bearer token from the join's `token` field (SPEC §5.1), when it had one.
    public var token: String?
    /// nil when the request did not say (everything).
    public var interest: Interest?
    /// The participant id the client had on an earlier connection (its undo history follows).
    public var previousParticipant: String?
    /// The client takes a move of its session to another node of a cluster in place (a `moved`
    /// message, then the answer to the server's join on its behalf) rather than a 4012 close.
    public var handover: Bool

    /// Join parameters as given; a field left out is one the join did not say.
    public init(
        name: String? = nil, role: Role? = nil, hidden: Bool? = nil, color: Color? = nil, token: String? = nil, interest: Interest? = nil,
        previousParticipant: String? = nil, handover: Bool = false
    ) {
        self.name = name
        self.role = role
        self.hidden = hidden
        self.color = color
        self.token = token
        self.interest = interest
        self.previousParticipant = previousParticipant
        self.handover = handover
    }
}

/// A decoded client request.
public struct ClientRequest: Hashable, Sendable {
    /// The client-chosen reference echoed in the answer (a string or an integer, as written).
    public var ref: RequestRef
    /// What the request asks for.
    public var body: Body
    /// The request as the client sent it, kept only where it may travel on as it is (to the
    /// node of a cluster that owns its session); nil otherwise.
    public var text: [UInt8]?

    /// A request with `ref` and `body`; `text` is the request as sent, for one that may be forwarded unchanged.
    public init(ref: RequestRef, body: Body, text: [UInt8]? = nil) {
        self.ref = ref
        self.body = body
        self.text = text
    }

    /// The request types of Protocol v1 (SPEC §6): the connection's own, and the session commands.
    public enum Body: Hashable, Sendable {
        /// Join `session` with these parameters, resuming from the point given, if any (SPEC §5, §4.4).
        case join(session: String, JoinParameters, resume: ResumePoint?)
        /// A fresh bearer token for the joined participant, before the current one expires.
        case refreshToken(String)
        /// Leave the session the connection is in.
        case leave
        /// Ask for an `ack` carrying the session's current seq (0 when not joined).
        case ping
        /// Subscribe this connection to the server's `overview` messages.
        /// `token` is needed when the server checks tokens and the handshake carried none.
        case overviewWatch(token: String?)
        /// Replaces the member's interest (what of the session's annotations it receives).
        case interest(Interest)
        /// A session command (cameras, annotations, selection, callout, drags, presence, settings, undo and redo).
        case command(Command)
    }

    /// The request's type name, for logs and metrics.
    public var typeName: String {
        switch body {
        case .join: "join"
        case .refreshToken: "token.refresh"
        case .leave: "leave"
        case .ping: "ping"
        case .overviewWatch: "overview.watch"
        case .interest: "interest"
        case .command(let c): c.name
        }
    }
}

extension ClientRequest {
    /// Decodes one text frame. On failure the error carries whatever `ref`
    /// could be read, so the answer can still name the request.
    public static func decode(_ bytes: [UInt8]) -> Result<ClientRequest, ProtocolError> {
        bytes.withUnsafeBytes { decode($0) }
    }

    /// Decodes one text frame from bytes that need to stay valid only during the call.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<ClientRequest, ProtocolError> {
        let document: JSONDocument
        switch JSONDocument.parse(bytes) {
        case .success(let d): document = d
        case .failure(let error):
            return .failure(ProtocolError(.invalidMessage, "not valid JSON (\(error.reason) at byte \(error.offset); NaN and Infinity are not JSON)"))
        }
        guard document.nodes[0].kind == .object else {
            return .failure(ProtocolError(.invalidMessage, "a request must be a JSON object"))
        }
        do throws(ProtocolError) {
            let f = try Fields(document: document, node: 0, path: "")
            let ref = try readRef(f)
            let type = try f.string("type")
            let body = try decodeBody(type, f)
            try f.finish()
            return .success(ClientRequest(ref: ref, body: body))
        } catch {
            var error = error
            // The raw ref, whatever it is, so the client can match the answer.
            if let index = document.member("ref", of: 0) {
                error.ref = RequestRef(text: document.text(of: index))
            }
            return .failure(error)
        }
    }

    /// A string of 1-64 bytes, or a number with an integral value written in at most 64
    /// bytes; kept as written.
    private static func readRef(_ f: Fields) throws(ProtocolError) -> RequestRef {
        guard let index = try f.lookup("ref") else {
            throw .invalid("ref", "required: a string (1-64 bytes) or an integer that the answer will carry")
        }
        let document = f.document
        let text = document.text(of: index)
        switch document.nodes[index].kind {
        case .string:
            let length = document.string(at: index).utf8.count
            guard length >= 1 && length <= 64 else { break }
            return RequestRef(text: text)
        case .number where text.count <= 64:
            let isIntegral = document.nodes[index].flags & JSONDocument.Flag.integerLiteral != 0
                || document.double(at: index) == document.double(at: index).rounded()
            guard isIntegral else { break }
            return RequestRef(text: text)
        default:
            break
        }
        throw .invalid("ref", "must be a string (1-64 bytes) or an integer")
    }

    private static func decodeBody(_ type: String, _ f: Fields) throws(ProtocolError) -> Body {
        // A switch over strings compares them one by one: the most frequent request first.
        if type == "drag" { return .command(try decodeDrag(f)) }
        switch type {
        case "join":
            var resume: ResumePoint?
            if let r = try f.optionalObject("resume") {
                guard let seq = try r.optionalInt("seq"), seq >= 0 else { throw .invalid("resume.seq", "required: a non-negative integer") }
                resume = ResumePoint(epoch: try r.string("epoch"), seq: UInt64(seq))
                try r.finish()
            }
            var interest: Interest?
            if let i = try f.optionalObject("interest") {
                interest = try decodeInterest(i)
                try i.finish()
            }
            let parameters = JoinParameters(
                name: try f.optionalString("name"), role: try f.optionalEnumeration("role", Role.self),
                hidden: try f.optionalBool("hidden"), color: try f.optionalColor("color"), token: try f.optionalString("token"),
                interest: interest, previousParticipant: try f.optionalString("previousParticipant"),
                handover: try f.optionalBool("handover") ?? false)
            return .join(session: try f.string("session"), parameters, resume: resume)
        case "token.refresh": return .refreshToken(try f.string("token"))
        case "leave": return .leave
        case "ping": return .ping
        case "overview.watch": return .overviewWatch(token: try f.optionalString("token"))
        case "interest": return .interest(try decodeInterest(f))
        default: return .command(try decodeCommand(type, f))
        }
    }

    private static func decodeCommand(_ type: String, _ f: Fields) throws(ProtocolError) -> Command {
        switch type {
        case "camera.begin", "camera.changing", "camera.end":
            let target: CameraTarget = switch try f.optionalEnumeration("target", TargetName.self) ?? .own {
            case .own: .own
            case .shared: .shared
            }
            let phase: CameraPhase = switch type {
            case "camera.begin": .begin(animated: try f.optionalBool("animated") ?? false)
            case "camera.changing": .changing(try f.camera("camera"))
            default: .end(try f.camera("camera"), animated: try f.optionalBool("animated") ?? false)
            }
            return .camera(target, phase, viewport: try f.optionalViewport("viewport"))
        case "camera.lease.acquire": return .acquireCameraLease(force: try f.optionalBool("force") ?? false)
        case "camera.lease.release": return .releaseCameraLease
        case "follow":
            guard f.has("target") else { throw .invalid("target", "required: \"shared\", a participant id, or null") }
            let target: FollowTarget? = switch try f.optionalString("target") {
            case nil: nil
            case "shared": .shared
            case let pid?: .participant(pid)
            }
            return .follow(target)
        case "annotation.add": return .addAnnotation(try f.annotation("annotation"))
        case "annotation.update":
            return .updateAnnotation(id: try f.string("id"), try f.patch("changes"), ifRevision: try f.optionalRevision("ifRevision"))
        case "annotation.remove": return .removeAnnotation(id: try f.string("id"), ifRevision: try f.optionalRevision("ifRevision"))
        case "select": return .select(annotation: try f.string("id"))
        case "deselect": return .deselect
        case "callout.show": return .showCallout(try f.callout("callout"))
        case "callout.hide": return .hideCallout
        case "callout.tap": return .tapCallout(try f.enumeration("part", Callout.Part.self))
        case "drag": return try decodeDrag(f)
        case "map.load":
            return .mapLoad(MapLoad(state: try f.enumeration("state", MapLoadState.self), message: try f.optionalString("message")))
        case "location":
            guard f.has("location") else { throw .invalid("location", "required: a location object, or null to stop sharing") }
            return .location(try f.location("location"))
        case "session.configure": return .configure(try settingsPatch(try f.object("settings")))
        case "undo": return .undo
        case "redo": return .redo
        default:
            throw ProtocolError(.unknownType, "unknown request type \"\(type)\"", field: "type")
        }
    }

    private static func decodeDrag(_ f: Fields) throws(ProtocolError) -> Command {
        let id = try f.string("id")
        let state = try f.enumeration("state", DragState.self)
        let coordinate = try f.optionalCoordinate("coordinate")
        // Only a starting drag is conditional: moves, the hot path, never look for ifRevision.
        guard state == .starting else {
            try f.finish(reasons: Self.notStarting)
            return .drag(annotation: id, state: state, coordinate: coordinate)
        }
        return .drag(annotation: id, state: state, coordinate: coordinate, ifRevision: try f.optionalRevision("ifRevision"))
    }

    private static let notStarting = ["ifRevision": "only a drag's starting takes ifRevision"]

    /// An interest's fields (in a join's `interest` object, or the `interest` request itself).
    private static func decodeInterest(_ f: Fields) throws(ProtocolError) -> Interest {
        Interest(
            mode: try f.enumeration("mode", Interest.Mode.self),
            margin: try f.optionalDouble("margin") ?? Interest.defaultMargin,
            clusterBelow: try f.optionalInt("clusterBelow"),
            camera: f.has("camera") ? try f.camera("camera") : nil,
            viewport: try f.optionalViewport("viewport"),
            filter: try filter(f))
    }

    /// The interest's `filter`, compiled; a filter that does not compile is `invalid_field`
    /// naming it, with the position of the problem.
    private static func filter(_ f: Fields) throws(ProtocolError) -> AnnotationFilter? {
        guard let text = try f.optionalString("filter") else { return nil }
        do throws(AnnotationFilter.Error) {
            return try AnnotationFilter(text)
        } catch {
            throw .invalid(f.name("filter"), error.description)
        }
    }

    private enum TargetName: String, CaseIterable { case own, shared }

    static func settingsPatch(_ f: Fields) throws(ProtocolError) -> SettingsPatch {
        var p = SettingsPatch()
        p.styleURL = try f.optionalString("styleURL")
        p.tint = try f.optionalColor("tint")
        p.dragPolicy = try f.optionalEnumeration("dragPolicy", DragPolicy.self)
        if let ms = try f.optionalInt("leaseTimeoutMs") { p.leaseTimeout = .milliseconds(ms) }
        if f.has("constraints") { p.constraints = try f.constraints("constraints") ?? CameraConstraints() }
        try f.finish()
        return p
    }
}
