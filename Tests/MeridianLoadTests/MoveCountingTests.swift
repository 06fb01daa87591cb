import Foundation
import MeridianServer
import MeridianTesting
import Testing

@testable import MeridianLoad

@Suite("meridian load counts the drag moves a receiver never got")
struct MoveCountingTests {
    private func worker() -> LoadWorker { listenerWorker(draggers: 2) }

    private func receive(_ w: LoadWorker, _ text: String) {
        Array(text.utf8).withUnsafeBytes { w.receive(FrameScanner(bytes: $0), from: 5) }
    }

    private func drag(_ state: String, move: Int, id: String = "d1", transient: Bool = false) -> String {
        #"{"type":"drag","seq":7,"id":"\#(id)","participant":"p1","state":"\#(state)","coordinate":{"latitude":\#(MoveCounter.latitude(move: move)),"longitude":12.5}\#(transient ? #","transient":true"# : "")}"#
    }

    @Test func skippedMovesAndMovesMissedBeforeTheEndAreCounted() {
        let w = worker()
        // The starting event carries the annotation's old coordinate: its latitude is not a move number.
        receive(w, drag("starting", move: 60))
        receive(w, drag("dragging", move: 1))
        receive(w, drag("dragging", move: 2, transient: true))
        receive(w, drag("dragging", move: 5, transient: true))  // 3 and 4 conflated
        receive(w, drag("ending", move: 60))                     // 6 … 60 never came
        #expect(w.stats.movesReceived == 3)
        #expect(w.stats.movesConflated == 2 + 55)
    }

    @Test func aDragJoinedMidwayCountsOnlyFromItsFirstMoveAndDragsAreKeptApart() {
        let w = worker()
        receive(w, drag("dragging", move: 30, transient: true))  // joined mid-drag: nothing known before
        receive(w, drag("starting", move: 0, id: "d0"))
        receive(w, drag("dragging", move: 1, id: "d0"))
        receive(w, drag("dragging", move: 31, transient: true))
        receive(w, drag("dragging", move: 2, id: "d0", transient: true))
        receive(w, drag("ending", move: 31))
        receive(w, drag("ending", move: 3, id: "d0"))            // move 3 of d0 conflated
        // An annotation that is not one of the load tool's is ignored.
        receive(w, drag("dragging", move: 9, id: "flag", transient: true))
        #expect(w.stats.movesReceived == 4)
        #expect(w.stats.movesConflated == 1)
    }
}

@Suite("meridian load from several source addresses")
struct SourceAddressTests {
    private func run(port: Int, extra: [String]) throws -> [String: Any] {
        let (_, report) = try runLoad([
            "--port", String(port), "--clients", "20", "--draggers", "1", "--duration", "1.5",
            "--ramp-up", "0.3", "--settle", "0.2", "--json", "--quiet",
        ] + extra)
        return try #require(report, "no JSON report")
    }

    @Test func connectionsSpreadOverSourceAddressesPassAPerAddressLimit() throws {
        let server = try TestServer { $0.transport.maxConnectionsPerIP = 10 }
        defer { server.stop() }
        func int(_ r: [String: Any], _ key: String) -> Int { (r[key] as? NSNumber)?.intValue ?? -1 }

        let one = try run(port: server.port, extra: [])
        #expect(int(one, "connected") == 10, "one address: the server's limit of 10 per address holds")
        #expect(int(one, "connectFailures") == 10)

        let two = try run(port: server.port, extra: ["--source-addresses", "127.0.0.2, 127.0.0.3"])
        #expect(int(two, "connected") == 20)
        #expect(int(two, "connectFailures") == 0)
        #expect(int(two, "movesReceived") > 0, "moves are counted on a real server")
        #expect(int(two, "lost") == 0)
    }
}
