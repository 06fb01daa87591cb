import Foundation
import MeridianServer
import MeridianTesting
import Testing

@testable import MeridianLoad

@Suite("meridian load on a big map, in-process against a real server")
struct BigMapLoadTests {
    /// 4 clients, each in its own city; the first two drag their city's annotation; 40 seeded
    /// annotations, 10 around each city.
    private func run(_ interest: LoadInterest) throws -> LoadReport {
        let server = try TestServer()
        defer { server.stop() }
        var c = LoadConfiguration()
        c.port = server.port
        c.clients = 4
        c.draggers = 2
        c.contention = 0
        c.annotations = 40
        c.interest = interest
        c.rampUp = 0.2
        c.settle = 0.5
        c.duration = 1.5
        c.progress = false
        return try LoadRunner.run(c)
    }

    @Test func eachClientReceivesTheMovesAndAnnotationsOfItsOwnCityOnly() throws {
        let viewport = try run(.viewport)
        #expect(viewport.interest == "viewport")
        #expect(viewport.connected == 4)
        #expect(viewport.errors.isEmpty, "errors: \(viewport.errors)")
        #expect(viewport.lost == 0)
        #expect(viewport.duplicates == 0)
        #expect(viewport.outOfOrder == 0)
        #expect(viewport.movesSent > 50)
        // No client received a move from another city, and each move reached one client: the
        // dragger whose city it is in.
        #expect(viewport.movesOutsideCity == 0)
        #expect(abs(viewport.deliveriesPerMove - 1) < 0.1, "deliveries per move \(viewport.deliveriesPerMove)")
        // Each welcome held its city's 10 seeded annotations and no other.
        #expect(viewport.welcomeAnnotations == 40)
        #expect(viewport.welcomeAnnotationsOutsideCity == 0)
        #expect(viewport.joinRequestMs.count == 4)
        #expect(viewport.joinRequestMs.max > 0)

        let everything = try run(.everything)
        #expect(everything.interest == "everything")
        #expect(everything.connected == 4)
        #expect(everything.lost == 0)
        #expect(everything.movesSent > 50)
        // Every client receives every move.
        #expect(abs(everything.deliveriesPerMove - 4) < 0.4, "deliveries per move \(everything.deliveriesPerMove)")
        #expect(viewport.deliveriesPerMove < everything.deliveriesPerMove)
    }

    @Test func viewportInterestRefusesMoreMovesPerDragThanACityHolds() throws {
        var c = LoadConfiguration()
        c.interest = .viewport
        c.movesPerDrag = MoveCoding.maxCityMoves + 1
        #expect(throws: LoadError.self) { try LoadRunner.run(c) }
    }
}
