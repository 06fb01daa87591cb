/// What a simulated client does besides listening.
enum ClientRole {
    /// Runs starting / dragging… / ending cycles on annotation `d<annotation>`.
    case dragger(annotation: Int)
    /// Moves its own camera: begin, changing…, end.
    case cameraMover
    /// Selects and deselects annotations.
    case selector
    case listener
}

/// One simulated client's state, kept by its worker.
struct SimulatedClient {
    enum Phase { case waiting, connecting, joining, joined, leaving }
    enum DragPhase { case idle, awaitingGrant, moving(left: Int), ending }

    let index: Int
    let session: Int
    let role: ClientRole
    /// Its city on a big map (``Cities``): its rank in its session.
    var city = 0
    var phase = Phase.waiting
    var connectStartedAt: UInt64 = 0
    var joinSentAt: UInt64 = 0
    /// Last discrete seq seen (from the welcome, then events; on a big map also `skipped` markers
    /// and `interest` messages).
    var seq: UInt64 = 0
    var hasSeq = false
    /// `seq` came from an `interest` message, which a discrete event of that same seq may follow
    /// (the drag that brought an annotation into the area).
    var seqMayRepeat = false
    var drag = DragPhase.idle
    var nextActionAt: UInt64 = 0
    /// Its first grant has come (with ``LoadConfiguration/stagger``, its phase is set then).
    var granted = false
    var cameraStep = 0
    var ready = false
    var nextRef = 1
    /// Per dragged annotation of the session (`d<N>` at index N): the number of the last move
    /// received in its current drag, 0 right after `starting`, -1 when unknown (joined mid-drag).
    var movesSeen: [Int32] = []

    init(index: Int, session: Int, role: ClientRole) {
        self.index = index
        self.session = session
        self.role = role
    }

    var isActor: Bool {
        if case .listener = role { return false }
        return true
    }
}

/// Request kinds, in the low 4 bits of integer refs so answers are matched without a table.
enum RefKind: Int {
    case join = 1, annotationAdd, dragStart, dragMove, dragEnd, camera, select, seed

    static func of(_ ref: UInt64) -> RefKind? { RefKind(rawValue: Int(ref & 15)) }
}
