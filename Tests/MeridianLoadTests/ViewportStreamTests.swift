import Foundation
import Testing

@testable import MeridianLoad

@Suite("meridian load follows a viewport client's filtered stream")
struct ViewportStreamTests {
    /// A worker with one joined client (5, in city 0) at seq 10, whose window covers now.
    private func worker(_ interest: LoadInterest) -> LoadWorker {
        let w = listenerWorker(draggers: 1, interest: interest)
        w.clients[5]!.seq = 10
        w.clients[5]!.hasSeq = true
        return w
    }

    private func receive(_ w: LoadWorker, _ text: String) {
        Array(text.utf8).withUnsafeBytes { w.receive(FrameScanner(bytes: $0), from: 5) }
    }

    /// A move of `d0` around city 0, as the server relays it.
    private func move(_ w: LoadWorker, seq: Int, number: Int, transient: Bool) -> String {
        let coding = w.moveCodings[0]
        let lat = coding.latitude(move: number), lon = coding.longitude(sentAt: LoadClock.nowMicros())
        return #"{"type":"drag","seq":\#(seq),"id":"d0","participant":"p1","state":"dragging","coordinate":{"latitude":\#(lat),"longitude":\#(lon)}\#(transient ? #","transient":true"# : "")}"#
    }

    /// A discrete event no viewport filters.
    private func presence(seq: Int) -> String { #"{"type":"presence","seq":\#(seq),"joined":[],"left":[]}"# }

    @Test func skippedMarkersInterestMessagesAndFilteredEventsAreNotLosses() {
        let w = worker(.viewport)
        receive(w, #"{"type":"skipped","seq":14}"#)
        receive(w, presence(seq: 15))
        // A drag brings d0 into the area: the interest message, then the drag's first move, both at seq 17.
        receive(w, #"{"type":"interest","seq":17,"view":{"area":null,"clusters":false,"zoom":12},"complete":false,"entered":[],"left":[],"drags":[]}"#)
        receive(w, move(w, seq: 17, number: 1, transient: false))
        // Discrete events 18…20 were about other cities: a transient move ahead of them is no loss.
        receive(w, move(w, seq: 20, number: 2, transient: true))
        receive(w, #"{"type":"clusters","seq":20,"view":{"area":null,"clusters":true,"zoom":3},"clusters":[]}"#)
        receive(w, #"{"type":"skipped","seq":21}"#)
        receive(w, presence(seq: 22))
        #expect(w.stats.lost == 0)
        #expect(w.stats.duplicates == 0)
        #expect(w.stats.outOfOrder == 0)
        #expect(w.stats.movesReceived == 2)
        #expect(w.stats.movesDelivered == 2, "both moves were sent inside the window")
        #expect(w.stats.movesOutsideCity == 0)
        #expect(w.clients[5]!.seq == 22)
        #expect(w.stats.messagesIn == 8, "interest, skipped and clusters messages count as received")
        #expect(w.stats.deliveries == 4, "but not as events")

        // A hole no marker covers is a loss; the same discrete event twice a duplicate.
        receive(w, presence(seq: 25))
        receive(w, presence(seq: 25))
        #expect(w.stats.lost == 2)
        #expect(w.stats.duplicates == 1)
    }

    @Test func withEverythingInterestATransientEventAheadIsALoss() {
        let w = worker(.everything)
        receive(w, move(w, seq: 13, number: 1, transient: true))
        #expect(w.stats.lost == 3)
    }
}
