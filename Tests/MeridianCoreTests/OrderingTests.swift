import Testing
@testable import MeridianCore

@Suite struct OrderingTests {
    @Test func discreteEventsAreNumberedContiguouslyTransientOnesCarryTheCurrentSeq() throws {
        var w = World(Session(id: "s", epoch: "e", seq: 41))
        var log: [Emitted] = []
        func record(_ r: ApplyResult) { if case .success(let a) = r { log += a.events } }
        guard case .success(let (o, joined)) = w.session.join(JoinRequest(name: "O", role: .owner), at: .zero) else { return }
        log += joined
        let (e, joined2) = try w.session.join(JoinRequest(name: "E", role: .editor), at: .zero).get()
        log += joined2
        let commands: [(Command, ParticipantID)] = [
            (.addAnnotation(pin("a")), o),
            (.addAnnotation(pin("a")), o), // refused
            (.camera(.own, .begin(animated: true), viewport: nil), e),
            (.camera(.own, .changing(cam(1, 1)), viewport: nil), e),
            (.camera(.own, .changing(cam(2, 2)), viewport: nil), e),
            (.camera(.own, .end(cam(3, 3), animated: true), viewport: nil), e),
            (.drag(annotation: "a", state: .starting, coordinate: nil), e),
            (.drag(annotation: "a", state: .ending, coordinate: nil), e), // refused
            (.drag(annotation: "a", state: .dragging, coordinate: C(1, 1)), e),
            (.drag(annotation: "a", state: .dragging, coordinate: C(2, 2)), e),
            (.location(UserLocation(coordinate: C(1, 1), accuracy: 3)), o),
            (.select(annotation: "zz"), o), // refused
            (.drag(annotation: "a", state: .ending, coordinate: nil), e),
            (.select(annotation: "a"), o),
        ]
        var refusals = 0
        for (command, pid) in commands {
            let seqBefore = w.session.seq
            let r = w.session.apply(command, from: pid, at: .zero)
            if case .failure = r {
                refusals += 1
                #expect(w.session.seq == seqBefore, "refused \(command.name) consumed a seq")
            }
            record(r)
        }
        log += w.session.leave(e, reason: "bye", at: .zero)
        #expect(refusals == 3)

        var last: UInt64 = 41
        for emitted in log {
            if emitted.isTransient {
                #expect(emitted.seq == last, "\(emitted.event)")
            } else {
                #expect(emitted.seq == last + 1, "\(emitted.event)")
                last = emitted.seq
            }
        }
        #expect(w.session.seq == last)
        #expect(log.filter(\.isTransient).count == 4)
        // join, join, add, begin, end, starting, first move, ending, none, select, left
        #expect(log.filter { !$0.isTransient }.count == 11)
        #expect(last == 52)
    }

    @Test func expiryAndLeavingAreNumberedToo() throws {
        var (w, _, e, _) = try trio()
        try w.add(pin("a"), by: e)
        try w.drag("a", .starting, by: e)
        let seq = w.session.seq
        let expired = w.session.expireDrags(at: .seconds(60))
        #expect(expired.map(\.seq) == [seq + 1, seq + 2])
        #expect(w.session.expireDrags(at: .seconds(120)).isEmpty)
        #expect(w.session.seq == seq + 2)
        #expect(w.session.leave(e, reason: "x", at: .zero).map(\.seq) == [seq + 3])
        #expect(w.session.leave(e, reason: "x", at: .zero).isEmpty)
    }
}
