import Testing
@testable import MeridianCore

/// SPEC §5: above `presenceBatchAbove` participants, joins and leaves wait for `flushPresence`
/// and go out as one discrete `presence` event.
@Suite struct PresenceBatchTests {
    func session(batchAbove: Int) -> Session {
        var limits = SessionLimits()
        limits.presenceBatchAbove = batchAbove
        return Session(id: "s", epoch: "e", limits: limits)
    }

    func join(_ s: inout Session, _ name: String, hidden: Bool = false) throws -> (ParticipantID, [Emitted]) {
        try s.join(JoinRequest(name: name, role: .editor, hidden: hidden), at: .zero).get()
    }

    @Test func smallSessionsAnnounceEachJoinAndLeave() throws {
        var s = session(batchAbove: 100)
        let (a, events) = try join(&s, "A")
        #expect(events.map(\.event) == [.participantJoined(s.participants[a]!)])
        #expect(s.leave(a, reason: "left", at: .zero).map(\.event) == [.participantLeft(a, reason: "left")])
        #expect(s.flushPresence().isEmpty)
    }

    @Test func aboveTheThresholdJoinsAndLeavesWaitForOneEvent() throws {
        var s = session(batchAbove: 1)
        let (a, first) = try join(&s, "A")
        #expect(first.count == 1, "the first participant is announced at once: 1 is not above 1")
        let seq = s.seq
        let (b, second) = try join(&s, "B")
        let (c, third) = try join(&s, "C")
        #expect(second.isEmpty && third.isEmpty)
        #expect(s.seq == seq, "a batched join does not advance seq")
        #expect(s.visibleParticipants.map(\.id) == [a, b, c], "a snapshot lists them already")
        #expect(s.leave(a, reason: "disconnected", at: .zero).isEmpty)
        let flushed = s.flushPresence()
        #expect(flushed.map(\.seq) == [seq + 1])
        #expect(flushed.map(\.event) == [.presence(
            joined: [s.participants[b]!, s.participants[c]!],
            left: [PresenceLeave(participant: a, reason: "disconnected")])])
        #expect(s.flushPresence().isEmpty, "nothing waits after a flush")
    }

    @Test func someoneWhoJoinsAndLeavesBeforeTheFlushIsOnlyInLeft() throws {
        var s = session(batchAbove: 1)
        _ = try join(&s, "A")
        let (b, _) = try join(&s, "B")
        _ = s.leave(b, reason: "left", at: .zero)
        #expect(s.flushPresence().map(\.event) == [.presence(joined: [], left: [PresenceLeave(participant: b, reason: "left")])])
    }

    @Test func hiddenMembersAreNeverAnnounced() throws {
        var s = session(batchAbove: 1)
        _ = try join(&s, "A")
        _ = try join(&s, "B")
        let (d, events) = try join(&s, "Dashboard", hidden: true)
        #expect(events.isEmpty)
        #expect(s.flushPresence().allSatisfy { e in
            if case .presence(let joined, _) = e.event { return !joined.contains { $0.id == d } }
            return true
        })
    }

    @Test func fallingBackBelowTheThresholdAnnouncesWhatWaitsFirst() throws {
        var s = session(batchAbove: 2)
        _ = try join(&s, "A")
        _ = try join(&s, "B")
        let (c, _) = try join(&s, "C")  // 3 > 2: waits
        let out = s.leave(c, reason: "left", at: .zero)  // 3 before leaving: waits too
        #expect(out.isEmpty)
        _ = s.leave(s.joinOrder[0], reason: "left", at: .zero)  // 2 left: not above 2, announced at once
        #expect(s.pendingJoins.isEmpty && s.pendingLeaves.isEmpty)
    }
}
