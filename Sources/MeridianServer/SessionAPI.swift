import MeridianAPI
import MeridianAuth
import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

/// The HTTP API (`Protocol/openapi.yaml`): list, read, create, configure and delete sessions,
/// their event logs and rates. Each hub has one, on its service thread, which asks the hub's
/// sessions through ``APISessions``. It never waits there: reads of sessions that are not
/// loaded go to a reader thread, and a change is answered 2xx only once the storage writer has
/// committed it. Requests for a session that is loading, or that an earlier create or delete is
/// still writing, wait behind that work and are then served in arrival order.
final class SessionAPI {
    private unowned let hub: any APISessions

    init(_ hub: any APISessions) { self.hub = hub }

    private var configuration: ServerConfiguration { hub.configuration }
    private var cluster: ClusterNode? { hub.place?.cluster }

    /// Answers a request under /api/sessions through `responder`; false for any other path.
    func answer(_ request: HTTPRequest, responder: HTTPResponder, on server: any Outbound) -> Bool {
        let api: APIRequest
        switch hub.gatekeeper.admitAPI(request) {
        case nil: return false
        case .failure(let denial)?:
            responder.respond(denial.response)
            return true
        case .success(let admitted)?:
            api = admitted
        }
        switch api {
        case .list: listSessions(responder, loaded: loadedRows())
        case .create(let id, let settings): create(id, settings: settings, responder, on: server)
        case .read(let id): readSession(id, responder)
        case .delete(let id): deleteSession(id, responder, on: server)
        case .configure(let id, let patch): configureSession(id, patch, responder, on: server)
        case .events(let id, let query):
            hub.eventLog.page(of: id, query, loaded: hub.host(id) != nil, store: hub.storage.current?.reader, responder)
        case .rates(let id): readRates(id, responder)
        }
        return true
    }

    /// The rows of the sessions loaded on this hub, as they are now: with the names of their
    /// listed participants and, once it has emitted an event since it was loaded, its last activity.
    func loadedRows() -> [String: JSONValue] {
        var rows: [String: JSONValue] = [:]
        for (id, host) in hub.sessions {
            var row: [String: JSONValue] = [
                "id": .string(id), "seq": .number(Double(host.session.seq)), "annotations": .number(Double(host.session.annotations.count)),
                "loaded": .bool(true), "members": .number(Double(host.memberCount)), "epoch": .string(host.session.epoch),
                "names": .array(host.session.visibleParticipants.prefix(OverviewEntry.maxNames).map { .string($0.name) }),
            ]
            if let last = host.eventLog?.lastActivityMs { row["lastActivity"] = .number(Double(last)) }
            rows[id] = .object(row)
        }
        return rows
    }

    /// Stored sessions read on a reader thread, merged there with the `loaded` ones (of every hub).
    /// A session's last activity is its last event while it is loaded, else its last stored change.
    func listSessions(_ responder: HTTPResponder, loaded: [String: JSONValue]) {
        guard let reader = hub.storage.current?.reader else { return responder.respond(APIResponse.storageDown("the store is not open")) }
        reader.read({ store throws(StorageError) in try store.list() }, completion: { result in
            switch result {
            case .failure(let error):
                responder.respond(APIResponse.storageDown(error.message))
            case .success(let stored):
                var rows = loaded
                for s in stored {
                    let written = s.writtenMs.map { JSONValue.number(Double($0)) }
                    guard case .object(var row)? = rows[s.id] else {
                        var row: [String: JSONValue] = ["id": .string(s.id), "seq": .number(Double(s.seq)),
                                                        "annotations": .number(Double(s.annotationCount)), "loaded": .bool(false), "members": .number(0)]
                        row["lastActivity"] = written
                        rows[s.id] = .object(row)
                        continue
                    }
                    // Loaded, and quiet since it was: its last activity is its last stored change.
                    if row["lastActivity"] == nil, let written {
                        row["lastActivity"] = written
                        rows[s.id] = .object(row)
                    }
                }
                responder.respond(APIResponse.json(200, .object(["sessions": .array(rows.sorted { $0.key < $1.key }.map(\.value))])))
            }
        })
    }

    private func readSession(_ id: String, _ responder: HTTPResponder) {
        if hub.waitBehindGate(id, { [unowned self] _ in self.readSession(id, responder) }) { return }
        if let host = hub.host(id) { return responder.respond(APIResponse.json(200, APIResponse.describe(host.session, loaded: true))) }
        guard let reader = hub.storage.current?.reader else { return responder.respond(APIResponse.storageDown("the store is not open")) }
        let limits = configuration.limits
        reader.read({ store throws(StorageError) in try store.load(id) }, completion: { result in
            switch result {
            case .failure(let error):
                responder.respond(APIResponse.storageDown(error.message))
            case .success(nil):
                responder.respond(APIResponse.error(404, "not_found", "no session \(id)"))
            case .success(let stored?):
                let session = Session(restoring: stored.record, epoch: stored.epoch, limits: limits)
                responder.respond(APIResponse.json(200, APIResponse.describe(session, loaded: false)))
            }
        })
    }

    /// `GET /api/sessions/{id}/rates`: the last minute of an open session's rates (on the hub that
    /// holds it); a stored session that is not open has none yet; no such session is 404.
    private func readRates(_ id: String, _ responder: HTTPResponder) {
        if hub.waitBehindGate(id, { [unowned self] _ in self.readRates(id, responder) }) { return }
        if let host = hub.host(id) { return responder.respond(APIResponse.json(200, host.rates.json(session: id))) }
        guard let reader = hub.storage.current?.reader else { return responder.respond(APIResponse.storageDown("the store is not open")) }
        reader.read({ store throws(StorageError) in try store.contains(id) }, completion: { result in
            switch result {
            case .failure(let error): responder.respond(APIResponse.storageDown(error.message))
            case .success(false): responder.respond(APIResponse.error(404, "not_found", "no session \(id)"))
            case .success(true): responder.respond(APIResponse.json(200, RateHistory().json(session: id)))
            }
        })
    }

    /// Creates `id` under its gate: whether it exists is read on a reader thread, then the new
    /// record goes to the writer; joins and API calls for `id` wait until it is committed.
    private func create(_ id: String, settings: SettingsPatch?, _ responder: HTTPResponder, on server: any Outbound) {
        if hub.waitBehindGate(id, { [unowned self] _ in self.create(id, settings: settings, responder, on: server) }) { return }
        if hub.host(id) != nil { return responder.respond(APIResponse.error(409, "already_exists", "session \(id) already exists")) }
        guard let reader = hub.storage.current?.reader else { return responder.respond(APIResponse.storageDown("the store is not open")) }
        hub.openWriteGate(id)
        reader.read(UnloadedWrite.lookup(id, cluster: cluster, hub: hub.place?.hub ?? 0), completion: returning(self, to: server) { api, server, result in
            api.create(id, found: result, settings: settings, responder, on: server)
        })
    }

    private func create(
        _ id: String, found: Result<UnloadedWrite, StorageError>, settings: SettingsPatch?, _ responder: HTTPResponder, on server: any Outbound
    ) {
        let fence: UInt64?
        switch found {
        case .failure(let error):
            hub.endWrite(id)
            return responder.respond(APIResponse.storageDown(error.message))
        case .success(.elsewhere):
            hub.endWrite(id)
            return responder.respond(APIResponse.error(409, "already_exists", "session \(id) already exists (loaded on \(ownerName(of: id)))"))
        case .success(.read(true, _)):
            finishUnloadedWrite(id)
            return responder.respond(APIResponse.error(409, "already_exists", "session \(id) already exists"))
        case .success(.read(false, let leased)):
            fence = leased
        }
        var session = Session(id: id, epoch: Durability.newEpoch(), settings: configuration.sessionDefaults, limits: configuration.limits)
        if let settings, case .failure(let error) = session.reconfigure(settings) {
            finishUnloadedWrite(id)
            return responder.respond(APIResponse.error(400, error.code.rawValue, error.message, field: error.field))
        }
        var update = SessionUpdate(record: session.record, epoch: session.epoch)
        update.fence = fence
        hub.writes.commitUnloaded(.update(update), on: server) { [unowned self] result in
            self.finishUnloadedWrite(id)
            guard case .success = result else { return responder.respond(self.writeFailed(result)) }
            self.hub.logger.info("session created", metadata: ["session": "\(id)", "via": "http"])
            responder.respond(APIResponse.json(201, APIResponse.describe(session, loaded: false)))
        }
    }

    /// After an HTTP API write of a session not loaded here: its gate opens, and in a cluster
    /// the lease taken for the write is given up (unless the session was loaded meanwhile).
    private func finishUnloadedWrite(_ id: String) {
        if hub.host(id) == nil { cluster?.release(id) }
        hub.endWrite(id)
    }

    private func ownerName(of id: String) -> String {
        cluster?.gateway.owner(of: id).map { "node \($0)" } ?? "another node of the cluster"
    }

    /// Settings change: applied and broadcast at once, answered once committed. A session that
    /// is not loaded is loaded first (on a reader thread), as for a join.
    private func configureSession(
        _ id: String, _ patch: SettingsPatch, _ responder: HTTPResponder, after outcome: GateOutcome? = nil, on server: any Outbound
    ) {
        if hub.waitBehindGate(id, { [unowned self] outcome in self.configureSession(id, patch, responder, after: outcome, on: server) }) { return }
        guard let host = hub.host(id) else {
            switch outcome {
            case .absent?:
                hub.release(id)
                return responder.respond(APIResponse.error(404, "not_found", "no session \(id)"))
            case .failed(let error)?: return responder.respond(APIResponse.storageDown(error.message))
            case .full(let refusal)?: return responder.respond(APIResponse.error(503, refusal.code.rawValue, refusal.message))
            case .elsewhere?:
                let owner = cluster?.gateway.owner(of: id).map { "node \($0)" } ?? "another node"
                return responder.respond(APIResponse.error(409, "owned_elsewhere", "session \(id) is loaded on \(owner) of the cluster: change its settings there"))
            case .loaded?, .written?, .roomMade?, nil:
                if let refusal = hub.load(id, on: server) {
                    return responder.respond(APIResponse.error(503, refusal.code.rawValue, refusal.message))
                }
                _ = hub.waitBehindGate(id, { [unowned self] outcome in self.configureSession(id, patch, responder, after: outcome, on: server) })
                return
            }
        }
        host.announcePresence(on: server)
        switch host.session.reconfigure(patch) {
        case .failure(let error):
            responder.respond(APIResponse.error(400, error.code.rawValue, error.message, field: error.field))
        case .success(let events):
            host.broadcast(events, on: server)
            let s = host.session
            let answer = APIResponse.json(200, APIResponse.describe(s, loaded: true))
            let change = SessionChange.update(SessionUpdate(
                id: s.id, epoch: s.epoch, seq: s.seq, settings: s.settings, callout: s.callout,
                upserted: s.drags.keys.sorted().compactMap { s.committedAnnotation($0) }))
            hub.writes.submit(change, of: id, ack: nil, on: server) { [unowned self] result in
                responder.respond(result.isSuccess ? answer : self.writeFailed(result))
            }
        }
    }

    private func deleteSession(_ id: String, _ responder: HTTPResponder, on server: any Outbound) {
        if hub.waitBehindGate(id, { [unowned self] _ in self.deleteSession(id, responder, on: server) }) { return }
        if let host = hub.host(id) {
            guard host.isEmpty else {
                return responder.respond(APIResponse.error(409, "session_in_use", "session \(id) has \(host.memberCount) connected members"))
            }
            // Joins of `id` wait until the delete is committed; they then find nothing stored.
            hub.openWriteGate(id)
            hub.writes.submit(.delete(id: id), of: id, ack: nil, on: server) { [unowned self] result in
                if result.isSuccess { self.hub.forget(id) }
                self.hub.endWrite(id)
                responder.respond(result.isSuccess ? HTTPResponse(status: 204, body: []) : self.writeFailed(result))
            }
            return
        }
        guard let reader = hub.storage.current?.reader else { return responder.respond(APIResponse.storageDown("the store is not open")) }
        hub.openWriteGate(id)
        reader.read(UnloadedWrite.lookup(id, cluster: cluster, hub: hub.place?.hub ?? 0), completion: returning(self, to: server) { api, server, result in
            api.delete(id, found: result, responder, on: server)
        })
    }

    private func delete(_ id: String, found: Result<UnloadedWrite, StorageError>, _ responder: HTTPResponder, on server: any Outbound) {
        switch found {
        case .failure(let error):
            hub.endWrite(id)
            responder.respond(APIResponse.storageDown(error.message))
        case .success(.elsewhere):
            hub.endWrite(id)
            responder.respond(APIResponse.error(409, "owned_elsewhere", "session \(id) is loaded on \(ownerName(of: id)): delete it there"))
        case .success(.read(false, _)):
            finishUnloadedWrite(id)
            responder.respond(APIResponse.error(404, "not_found", "no session \(id)"))
        case .success(.read(true, let fence)):
            hub.writes.commitUnloaded(.delete(id: id, fence: fence), on: server) { [unowned self] result in
                if result.isSuccess {
                    self.hub.eventLog.writer?.forget(session: id)
                    self.hub.logger.info("session deleted", metadata: ["session": "\(id)", "via": "http"])
                }
                self.finishUnloadedWrite(id)
                responder.respond(result.isSuccess ? HTTPResponse(status: 204, body: []) : self.writeFailed(result))
            }
        }
    }

    private func writeFailed(_ result: Result<Void, StorageError>) -> HTTPResponse {
        hub.metrics.error(.storageUnavailable)
        guard case .failure(let error) = result else { return APIResponse.storageDown("storage write failed") }
        return APIResponse.storageDown(error.message)
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
