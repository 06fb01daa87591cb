import MeridianClient
import MeridianCore

/// Paces a map's requests to what the session admits (protocol §5.2): the steps of a gesture
/// (`camera.changing`, a drag's `dragging`) go out at most one per `interval`, and a step that
/// must wait is replaced by the next step of the same gesture, so only the latest position is
/// sent. Every other request goes out at once. A gesture's last request (`camera.end`, a drag's
/// `ending`) carries its final position, so a step still waiting for that gesture is dropped:
/// the last position is never lost, and never sent after the end.
///
/// A pure value; the binding feeds it the time.
public struct GesturePacer: Sendable {
    /// The shortest time between two steps sent.
    public let interval: Duration
    private var waiting: [Key: SessionRequest] = [:]
    /// Gestures with a waiting step, the longest waiting first.
    private var order: [Key] = []
    private var lastStep: ContinuousClock.Instant?

    enum Key: Hashable, Sendable {
        case camera(CameraTarget)
        case drag(String)
    }

    /// A pacer sending at most `stepsPerSecond` gesture steps a second.
    public init(stepsPerSecond: Double) {
        interval = .seconds(1 / stepsPerSecond)
    }

    /// What to send now for `request` made at `now`.
    public mutating func offer(_ request: SessionRequest, at now: ContinuousClock.Instant) -> [SessionRequest] {
        if let key = Self.step(request) {
            if waiting[key] == nil, lastStep.map({ now - $0 >= interval }) ?? true {
                lastStep = now
                return [request]
            }
            if waiting.updateValue(request, forKey: key) == nil { order.append(key) }
            return []
        }
        if let key = Self.end(request), waiting.removeValue(forKey: key) != nil {
            order.removeAll { $0 == key }
        }
        return [request]
    }

    /// The step due at `now`, if one waits and its time has come.
    public mutating func due(at now: ContinuousClock.Instant) -> [SessionRequest] {
        guard let key = order.first, let next = nextDue, now >= next else { return [] }
        order.removeFirst()
        lastStep = now
        return [waiting.removeValue(forKey: key)!]
    }

    /// When the next waiting step is due; nil when none waits.
    public var nextDue: ContinuousClock.Instant? {
        guard !order.isEmpty else { return nil }
        return lastStep.map { $0 + interval }
    }

    /// The gesture a step belongs to; nil for requests that are not steps.
    static func step(_ r: SessionRequest) -> Key? {
        switch r {
        case .cameraChanging(let target, _): .camera(target)
        case .drag(let id, .dragging, _, _): .drag(id)
        default: nil
        }
    }

    /// The gesture a request ends; nil for others.
    static func end(_ r: SessionRequest) -> Key? {
        switch r {
        case .cameraEnd(let target, _, _): .camera(target)
        case .drag(let id, .ending, _, _), .drag(let id, .canceling, _, _): .drag(id)
        default: nil
        }
    }
}
