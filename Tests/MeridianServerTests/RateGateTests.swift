import MeridianProtocol
import Testing

@testable import MeridianServer

/// A connection's rate limit without a hub or a socket, on a clock the test moves.
@Suite("Rate gate")
struct RateGateTests {
    /// Two requests at once, then one every 100 ms.
    static let limit = RateLimit(perSecond: 10, burst: 2)

    static func request(_ json: String) throws -> ClientRequest { try ClientRequest.decode(Array(json.utf8)).get() }
    static func ping(_ ref: Int) throws -> ClientRequest { try request(#"{"type":"ping","ref":\#(ref)}"#) }
    static func camera(_ ref: Int, own: Bool = false) throws -> ClientRequest {
        try request(#"{"type":"camera.changing","ref":\#(ref),"target":"\#(own ? "own" : "shared")","camera":{"center":{"latitude":1,"longitude":2},"zoom":3}}"#)
    }
    static func drag(_ ref: Int, _ id: String) throws -> ClientRequest {
        try request(#"{"type":"drag","ref":\#(ref),"id":"\#(id)","state":"dragging","coordinate":{"latitude":1,"longitude":2}}"#)
    }

    @Test func theBurstIsServedAndTheNextRequestRefusedWithTheTimeToItsToken() throws {
        var gate = RateGate()
        #expect(gate.admit(try Self.ping(1), limit: Self.limit, at: .zero) == .now)
        #expect(gate.admit(try Self.ping(2), limit: Self.limit, at: .zero) == .now)
        #expect(gate.admit(try Self.ping(3), limit: Self.limit, at: .zero) == .refused(retryAfterMs: 100))
        #expect(gate.admit(try Self.ping(4), limit: Self.limit, at: .milliseconds(60)) == .refused(retryAfterMs: 40))
        #expect(gate.admit(try Self.ping(5), limit: Self.limit, at: .milliseconds(100)) == .now)
    }

    @Test func overTheLimitAMoveWaitsAndTheNextOfItsKindReplacesIt() throws {
        var gate = RateGate()
        _ = gate.admit(try Self.ping(1), limit: Self.limit, at: .zero)
        _ = gate.admit(try Self.ping(2), limit: Self.limit, at: .zero)
        #expect(gate.admit(try Self.camera(3), limit: Self.limit, at: .zero) == .waits(replacing: nil))
        #expect(gate.admit(try Self.drag(4, "pin"), limit: Self.limit, at: .zero) == .waits(replacing: nil))
        #expect(gate.admit(try Self.camera(5, own: true), limit: Self.limit, at: .zero) == .waits(replacing: nil))
        // The same kind: the newer replaces the older, which keeps no place in the line.
        #expect(gate.admit(try Self.camera(6), limit: Self.limit, at: .zero) == .waits(replacing: try Self.camera(3)))
        #expect(gate.admit(try Self.drag(7, "quay"), limit: Self.limit, at: .zero) == .waits(replacing: nil))
        #expect(gate.waiting.map(\.request.ref) == [try Self.drag(4, "pin"), try Self.camera(5, own: true), try Self.camera(6), try Self.drag(7, "quay")].map(\.ref))
    }

    @Test func whileMovesWaitOtherRequestsAreRefusedAndWaitingOnesGoInOrderAsTokensCome() throws {
        var gate = RateGate()
        _ = gate.admit(try Self.ping(1), limit: Self.limit, at: .zero)
        _ = gate.admit(try Self.ping(2), limit: Self.limit, at: .zero)
        _ = gate.admit(try Self.camera(3), limit: Self.limit, at: .zero)
        _ = gate.admit(try Self.drag(4, "pin"), limit: Self.limit, at: .zero)
        // A token has come, but the moves before it come first: the ping is refused.
        guard case .refused = gate.admit(try Self.ping(5), limit: Self.limit, at: .milliseconds(150)) else { return #expect(Bool(false)) }
        #expect(gate.release(limit: Self.limit, at: .milliseconds(150)) == [try Self.camera(3)])
        #expect(gate.release(limit: Self.limit, at: .milliseconds(199)).isEmpty)
        #expect(gate.release(limit: Self.limit, at: .milliseconds(250)) == [try Self.drag(4, "pin")])
        #expect(gate.waiting.isEmpty)
        #expect(gate.admit(try Self.ping(6), limit: Self.limit, at: .milliseconds(350)) == .now)
    }

    @Test func requestsThatAreNotMovesNeverWait() throws {
        let never = [
            try Self.ping(1),
            try Self.request(#"{"type":"camera.end","ref":2,"target":"shared","camera":{"center":{"latitude":1,"longitude":2},"zoom":3}}"#),
            try Self.request(#"{"type":"drag","ref":3,"id":"pin","state":"ending","coordinate":{"latitude":1,"longitude":2}}"#),
            try Self.request(#"{"type":"join","ref":4,"session":"s","name":"n","role":"editor"}"#),
        ]
        for request in never { #expect(RateGate.kind(of: request) == nil, "\(request.typeName)") }
        #expect(RateGate.kind(of: try Self.drag(5, "pin")) == "drag:pin")
    }
}
