import Foundation
@testable import MeridianClient
import MeridianCore
import MeridianTesting
import Testing

func temporaryFile(_ name: String) throws -> URL {
    try TestScratch.directory("offline").appendingPathComponent(name)
}

@Suite("Edits made while disconnected")
struct OfflineEditTests {
    @Test func editsWaitWhileOfflineAndSettleInOrderAfterTheReconnect() async throws {
        let server = try TestServer.overWire {
            $0.transport.pingInterval = .seconds(1)
            $0.transport.idleTimeout = .seconds(2)
        }
        defer { server.stop() }
        let file = try temporaryFile("queue.json")
        defer { try? FileManager.default.removeItem(at: file) }
        let watcher = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Watcher"))
        let watcherLog = Recorder()
        watcher.delegate = watcherLog
        let board = TransportBox(port: server.port)
        let editor = MeridianClient(
            configuration: ClientConfiguration(
                session: "s", name: "Editor", reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(200)),
                offline: OfflineQueuePolicy(limit: 4, file: file)),
            transport: { board.make() })
        let editorLog = Recorder()
        editor.delegate = editorLog
        defer { watcher.close(); editor.close() }
        try watcher.connect()
        let first = try editor.connect()
        for id in ["a", "b", "c"] { try await editor.send(.annotationAdd(point(id, 0, 0))) }
        #expect(watcherLog.waitForEvents { $0.filter { if case .annotationAdded = $0.event { true } else { false } }.count == 3 })

        // The truck enters a tunnel: the server drops it, and every reconnect is refused.
        board.online = false
        let transport = try #require(board.current)
        transport.pauseReading()
        try await nudge(watcher)
        #expect(watcherLog.wait(timeout: 30) { $0.contains { if case .participantLeft(let id, _) = $0 { id == first.participant } else { false } } })
        transport.resumeReading()
        #expect(editorLog.wait(timeout: 30) { $0.contains { if case .didDisconnect = $0 { true } else { false } } })

        // Edits made meanwhile wait, each conditional on the revision the editor had seen.
        let seenB = try #require(editor.state?.revision(of: "b"))
        let renameA = try editor.submit(.annotationUpdate(id: "a", changes: ["title": .string("mine")]))
        let renameB = try editor.submit(.annotationUpdate(id: "b", changes: ["title": .string("mine")]))
        let removeC = try editor.submit(.annotationRemove(id: "c"))
        let addD = try editor.submit(.annotationAdd(point("d", 1, 1)))
        #expect(renameB.request == .annotationUpdate(id: "b", changes: ["title": .string("mine")], ifRevision: seenB))
        #expect(throws: ClientError.queueFull(4)) { try editor.submit(.annotationRemove(id: "a")) }
        #expect(throws: ClientError.notQueueable("select")) { try editor.submit(.select(id: "a")) }
        #expect(editor.pendingEdits == [renameA, renameB, removeC, addD])
        // They are in the queue's file.
        #expect(OfflineEditTests.queued(in: file) == [renameA, renameB, removeC, addD])

        // Meanwhile a colleague renames b and removes c.
        let theirs = try await watcher.send(.annotationUpdate(id: "b", changes: ["title": .string("theirs")]))
        try await watcher.send(.annotationRemove(id: "c"))

        // Out of the tunnel: the client reconnects and the edits settle, in order.
        board.online = true
        #expect(editorLog.wait(timeout: 30) { updates in updates.filter { if case .editSettled = $0 { true } else { false } }.count == 4 })
        let settled = editorLog.updates.compactMap { if case .editSettled(let edit, let outcome) = $0 { (edit, outcome) } else { nil } }
        #expect(settled.map(\.0) == [renameA, renameB, removeC, addD])
        if case .applied = settled[0].1 {} else { Issue.record("renaming a: \(settled[0].1)") }
        if case .conflict(let conflict) = settled[1].1 {
            #expect(conflict.revision == theirs.seq)
            #expect(conflict.annotation["title"] == .string("theirs"))
        } else {
            Issue.record("renaming b: \(settled[1].1)")
        }
        if case .refused(let error) = settled[2].1 { #expect(error.code == "not_found") } else { Issue.record("removing c: \(settled[2].1)") }
        if case .applied = settled[3].1 {} else { Issue.record("adding d: \(settled[3].1)") }
        #expect(editor.pendingEdits.isEmpty)
        #expect(OfflineEditTests.queued(in: file) == [])

        // The session has the edits that applied and the colleague's where they conflicted.
        let last = try await watcher.send(.ping).seq
        #expect(watcherLog.waitForEvents { $0.contains { !$0.isTransient && $0.seq >= last } })
        let titles = watcher.state?.annotations.mapValues { $0["title"] }
        #expect(titles == ["a": .string("mine"), "b": .string("theirs"), "d": .string("d")])
    }

    @Test func editsKeptInTheQueueFileAreSentByTheNextClient() async throws {
        let server = try TestServer.overWire()
        defer { server.stop() }
        let file = try temporaryFile("queue.json")
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = ClientConfiguration(session: "s", name: "Field", offline: OfflineQueuePolicy(file: file))
        // The app starts without a connection, makes two edits and is closed.
        let before = MeridianClient(over: server, configuration: configuration)
        let add = try before.submit(.annotationAdd(point("cone", 2, 3)))
        let rename = try before.submit(.annotationUpdate(id: "cone", changes: ["title": .string("Cone 7")]))
        before.close()

        // The next start reads them back and sends them once it is connected.
        let after = MeridianClient(over: server, configuration: configuration)
        let log = Recorder()
        after.delegate = log
        defer { after.close() }
        #expect(after.pendingEdits == [add, rename])
        try after.connect()
        #expect(log.wait { $0.filter { if case .editSettled(_, .applied) = $0 { true } else { false } }.count == 2 })
        #expect(log.waitForEvents { _ in after.state?.annotations["cone"]?["title"] == .string("Cone 7") })
        // New edits are numbered after the ones read back.
        #expect(try after.submit(.annotationRemove(id: "cone")).id == rename.id + 1)
    }

    static func queued(in file: URL) -> [OfflineEdit] { MeridianClient.loadEdits(from: file).edits }
}
