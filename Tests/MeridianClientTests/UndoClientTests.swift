import Foundation
@testable import MeridianClient
import MeridianCore
import MeridianTesting
import Testing

@Suite("Undo and redo in the client")
struct UndoClientTests {
    @Test func anUndoAfterTheClientReconnectedRevertsTheChangeItMadeBefore() async throws {
        // A client that stops reading cannot answer keepalive pings: the server drops it, and
        // it reconnects as a new participant that names its earlier id.
        let server = try TestServer.overWire {
            $0.transport.pingInterval = .seconds(1)
            $0.transport.idleTimeout = .seconds(2)
        }
        defer { server.stop() }
        let watcher = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Watcher"))
        let watcherLog = Recorder()
        watcher.delegate = watcherLog
        let box = TransportBox(port: server.port)
        let editor = MeridianClient(
            configuration: ClientConfiguration(session: "s", name: "Editor", reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(200))),
            transport: { box.make() })
        let editorLog = Recorder()
        editor.delegate = editorLog
        defer { watcher.close(); editor.close() }
        try watcher.connect()
        let first = try editor.connect()

        try await editor.send(.annotationAdd(point("pin", 0, 0)))
        try await editor.send(.annotationUpdate(id: "pin", changes: ["title": .string("Renamed")]))
        let transport = try #require(box.current)
        transport.pauseReading()
        try await nudge(watcher)
        #expect(watcherLog.wait(timeout: 30) { updates in
            updates.contains { if case .participantLeft(let id, _) = $0 { id == first.participant } else { false } }
        }, "the server did not drop the silent client")
        transport.resumeReading()
        #expect(editorLog.wait(timeout: 30) { $0.contains { if case .didConnect(let w) = $0 { w.participant != first.participant } else { false } } })

        // The new connection's participant undoes the rename the old one made; everyone sees it.
        let undone = try await editor.send(.undo)
        #expect(watcherLog.waitForEvents { events in
            events.contains { $0.seq == undone.seq - 1 && $0.event == .undone(participant: editor.welcome?.participant ?? "", annotation: "pin", change: "annotation.update", redo: false) }
                && events.contains { $0.seq == undone.seq }
        })
        #expect(watcher.state?.annotations["pin"]?["title"] == .string("pin"))
        let redone = try await editor.send(.redo)
        #expect(watcherLog.waitForEvents { $0.contains { $0.seq == redone.seq } })
        #expect(watcher.state?.annotations["pin"]?["title"] == .string("Renamed"))
    }
}
