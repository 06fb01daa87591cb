import Foundation
import MeridianClient
import MeridianCore
import MeridianTesting
import Testing

@Suite("Client library against the real server")
struct ConvergenceTests {
    @Test(arguments: [1, 4]) func twoClientsConvergeAfterInterleavedEdits(threads: Int) async throws {
        let server = try TestServer.overWire { $0.threads = threads }
        defer { server.stop() }
        let alice = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Alice"))
        let bob = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Bob"))
        let aliceLog = Recorder(), bobLog = Recorder()
        alice.delegate = aliceLog
        bob.delegate = bobLog
        defer { alice.close(); bob.close() }
        try alice.connect()
        let bobWelcome = try bob.connect()
        #expect(bobWelcome.resumed == false)
        #expect(bob.state?.participants.count == 2)

        // Both edit at once: each adds, updates and selects; Bob drags one of Alice's points.
        async let aliceEdits: Void = {
            for i in 0..<20 {
                try await alice.send(.annotationAdd(point("a\(i)", Double(i), 1)))
                try await alice.send(.annotationUpdate(id: "a\(i)", changes: ["subtitle": .string("by alice")]))
                try await alice.send(.cameraChanging(camera: Camera(center: Coordinate(latitude: 1, longitude: Double(i)), zoom: 5)))
            }
            try await alice.send(.select(id: "a3"))
            try await alice.send(.calloutShow(.object(["title": .string("hi"), "anchor": .object(["annotation": .string("a3")])])))
        }()
        async let bobEdits: Void = {
            for i in 0..<20 {
                try await bob.send(.annotationAdd(point("b\(i)", 2, Double(i))))
                if i % 5 == 4 { try await bob.send(.annotationRemove(id: "b\(i - 1)")) }
            }
        }()
        try await aliceEdits
        try await bobEdits
        try await bob.send(.drag(id: "a0", state: .starting))
        try await bob.send(.drag(id: "a0", state: .dragging, coordinate: Coordinate(latitude: 10, longitude: 10)))
        try await bob.send(.drag(id: "a0", state: .dragging, coordinate: Coordinate(latitude: 11, longitude: 11)))
        try await bob.send(.drag(id: "a0", state: .ending))
        try await bob.send(.select(id: "b0"))
        let last = try await alice.send(.ping).seq

        let bothCaughtUp = { (c: MeridianClient) in { (_: [ClientUpdate]) in (c.state?.seq ?? 0) >= last } }
        #expect(aliceLog.wait(bothCaughtUp(alice)))
        #expect(bobLog.wait(bothCaughtUp(bob)))
        let a = try #require(alice.state), b = try #require(bob.state)
        #expect(a == b)
        #expect(a.annotations.count == 36)
        #expect(a.annotations["a0"]?.coordinateOf == Coordinate(latitude: 11, longitude: 11))
        #expect(a.drags.isEmpty)
        #expect(a.callout != nil)
        // Each saw the other's selection through the SDK-named update.
        #expect(aliceLog.updates.contains(.didSelectAnnotation(participant: bobWelcome.participant, annotation: "b0", showsCallout: true)))
        #expect(bobLog.updates.contains { if case .dragStateDidChange(let d) = $0 { d.state == .none } else { false } })
    }

    @Test func refusedRequestThrowsTheServersError() async throws {
        let server = try TestServer.overWire()
        defer { server.stop() }
        let viewer = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "V", role: .viewer))
        defer { viewer.close() }
        try viewer.connect()
        do {
            try await viewer.send(.annotationAdd(point("x", 0, 0)))
            Issue.record("a viewer's annotation.add was accepted")
        } catch let error as ClientError {
            #expect(error.code == "forbidden")
        }
        do {
            try await viewer.send(.select(id: "missing"))
            Issue.record("select of a missing annotation was accepted")
        } catch let error as ClientError {
            #expect(error.code == "not_found")
        }
    }
}

extension JSONValue {
    var coordinateOf: Coordinate? {
        guard case .object(let o) = self, case .object(let c)? = o["coordinate"],
              case .number(let lat)? = c["latitude"], case .number(let lon)? = c["longitude"] else { return nil }
        return Coordinate(latitude: lat, longitude: lon)
    }
}
