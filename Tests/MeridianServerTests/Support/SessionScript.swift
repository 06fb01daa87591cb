@testable import MeridianClient
import MeridianCore
import Testing

/// Random requests for a session, and a mirror of it built from what a member receives.
enum SessionScript {
    /// Answers and area messages: everything a member receives that is not an event.
    static let eventTypes: Set<String> = ["welcome", "ack", "error", "live", "interest", "skipped", "clusters"]

    /// Applies every event of `messages` to `mirror` in order and appends it to `stream`.
    static func apply(_ messages: [JSONValue], to mirror: inout SessionState, stream: inout [JSONValue]) throws {
        for m in messages where !eventTypes.contains(m["type"]?.string ?? "") {
            guard case .event(let e) = try IncomingMessage.decode(String(decoding: m.encoded, as: UTF8.self)) else { continue }
            let result = mirror.apply(e)
            #expect(result == .applied, "\(m): \(result)")
            stream.append(m)
        }
    }

    static func request(step: Int, _ rng: inout SplitMix) -> (String, [String: JSONValue]) {
        let id = JSONValue.string("a\(rng.below(8))")
        let coordinate: JSONValue = ["latitude": .number(Double(rng.below(170)) - 85), "longitude": .number(Double(rng.below(360)) - 180)]
        switch rng.below(10) {
        case 0, 1:
            return ("annotation.add", ["annotation": ["type": "point", "id": id, "coordinate": coordinate, "draggable": .bool(rng.below(4) > 0)]])
        case 2:
            return ("annotation.update", ["id": id, "changes": ["title": .string("t\(step)")]])
        case 3:
            return ("annotation.remove", ["id": id])
        case 4:
            return ("drag", ["id": id, "state": "starting"])
        case 5, 6:
            return ("drag", ["id": id, "state": "dragging", "coordinate": coordinate])
        case 7:
            return ("drag", ["id": id, "state": rng.below(2) == 0 ? "ending" : "canceling"])
        case 8:
            return rng.below(2) == 0 ? ("select", ["id": id]) : ("deselect", [:])
        default:
            return ("camera.end", ["target": "own", "camera": ["center": coordinate, "zoom": .number(Double(rng.below(18)))]])
        }
    }
}

/// A small seeded generator, so a failing seed can be run again.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
