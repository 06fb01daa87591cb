import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

/// The HTTP API (`Protocol/openapi.yaml`): list, read, create, configure and
/// delete sessions. Runs on the service thread; a change answers 2xx only
/// after it is committed.
extension Hub {
    func apiResponse(to request: HTTPRequest, on server: WebSocketServer) -> HTTPResponse? {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "", parts[1] == "api", parts[2] == "sessions" else { return nil }
        if let denial = authorizeAPI(request, parts) { return denial }
        switch (request.method, parts.count) {
        case ("GET", 3): return listSessions()
        case ("POST", 3): return createSession(request.body, on: server)
        case (_, 3): return Self.apiError(405, "method_not_allowed", "\(request.method) /api/sessions: use GET or POST")
        case ("GET", 4): return snapshot(of: parts[3])
        case ("DELETE", 4): return deleteSession(parts[3], on: server)
        case (_, 4): return Self.apiError(405, "method_not_allowed", "\(request.method) /api/sessions/{id}: use GET or DELETE")
        case ("PATCH", 5) where parts[4] == "settings": return configureSession(parts[3], request.body, on: server)
        case (_, 5) where parts[4] == "events":
            return request.method == "GET" ? eventLogResponse(parts[3], query: request.query)
                : Self.apiError(405, "method_not_allowed", "\(request.method) /api/sessions/{id}/events: use GET")
        case (_, 5) where parts[4] == "settings":
            return Self.apiError(405, "method_not_allowed", "\(request.method) /api/sessions/{id}/settings: use PATCH")
        default: return Self.apiError(404, "not_found", "no such path: \(request.path)")
        }
    }

    private func listSessions() -> HTTPResponse {
        guard let store = durability.slot.current?.store else { return Self.storageDown("the store is not open") }
        let stored: [StoredSessionSummary]
        do throws(StorageError) { stored = try store.list() } catch { return Self.storageDown(error.message) }
        var rows: [String: JSONValue] = [:]
        for s in stored {
            rows[s.id] = .object(["id": .string(s.id), "seq": .number(Double(s.seq)), "annotations": .number(Double(s.annotationCount)),
                                  "loaded": .bool(false), "members": .number(0)])
        }
        for (id, host) in sessions {
            rows[id] = .object(["id": .string(id), "seq": .number(Double(host.session.seq)),
                                "annotations": .number(Double(host.session.annotations.count)),
                                "loaded": .bool(true), "members": .number(Double(host.memberCount)), "epoch": .string(host.session.epoch)])
        }
        return Self.json(200, .object(["sessions": .array(rows.keys.sorted().map { rows[$0]! })]))
    }

    private func snapshot(of id: String) -> HTTPResponse {
        guard Self.isValidSessionID(id) else { return Self.badID() }
        if let host = sessions[id] { return Self.json(200, Self.describe(host.session, loaded: true)) }
        guard let store = durability.slot.current?.store else { return Self.storageDown("the store is not open") }
        do throws(StorageError) {
            guard let stored = try store.load(id) else { return Self.apiError(404, "not_found", "no session \(id)") }
            return Self.json(200, Self.describe(Session(restoring: stored.record, epoch: stored.epoch, limits: configuration.limits), loaded: false))
        } catch {
            return Self.storageDown(error.message)
        }
    }

    private func createSession(_ body: [UInt8], on server: WebSocketServer) -> HTTPResponse {
        guard case .object(let fields)? = JSONValue.parse(body) else {
            return Self.apiError(400, "invalid_message", "the body must be a JSON object {\"id\": …, \"settings\": {…}}")
        }
        if let extra = fields.keys.filter({ $0 != "id" && $0 != "settings" }).sorted().first {
            return Self.apiError(400, "invalid_field", "\(extra): unknown field", field: extra)
        }
        guard case .string(let id)? = fields["id"], Self.isValidSessionID(id) else { return Self.badID() }
        guard let store = durability.slot.current?.store else { return Self.storageDown("the store is not open") }
        do throws(StorageError) {
            let stored = sessions[id] == nil ? try store.load(id) : nil
            if sessions[id] != nil || stored != nil {
                return Self.apiError(409, "already_exists", "session \(id) already exists")
            }
        } catch {
            return Self.storageDown(error.message)
        }
        var rng = SystemRandomNumberGenerator()
        var session = Session(id: id, epoch: String(rng.next() as UInt64, radix: 16), settings: configuration.sessionDefaults, limits: configuration.limits)
        if let settings = fields["settings"] {
            switch patch(settings).flatMap({ session.reconfigure($0) }) {
            case .failure(let error): return Self.apiError(400, error.code.rawValue, error.message, field: error.field)
            case .success: break
            }
        }
        if let failure = commitNow(.update(SessionUpdate(record: session.record, epoch: session.epoch))) { return failure }
        logger.info("session created", metadata: ["session": "\(id)", "via": "http"])
        return Self.json(201, Self.describe(session, loaded: false))
    }

    private func configureSession(_ id: String, _ body: [UInt8], on server: WebSocketServer) -> HTTPResponse {
        guard Self.isValidSessionID(id) else { return Self.badID() }
        guard let json = JSONValue.parse(body) else { return Self.apiError(400, "invalid_message", "the body must be a JSON object of settings") }
        let host: SessionHost
        if let loaded = sessions[id] {
            host = loaded
        } else {
            guard let store = durability.slot.current?.store else { return Self.storageDown("the store is not open") }
            do throws(StorageError) {
                guard try store.load(id) != nil else { return Self.apiError(404, "not_found", "no session \(id)") }
            } catch {
                return Self.storageDown(error.message)
            }
            switch openSession(id, on: server) {
            case .success(let h): host = h
            case .failure(let error): return Self.apiError(503, error.code.rawValue, error.message)
            }
        }
        switch patch(json).flatMap({ host.session.reconfigure($0) }) {
        case .failure(let error):
            return Self.apiError(400, error.code.rawValue, error.message, field: error.field)
        case .success(let events):
            host.broadcast(events, on: server)
            let s = host.session
            if let failure = commitNow(.update(SessionUpdate(id: s.id, epoch: s.epoch, seq: s.seq, settings: s.settings, callout: s.callout,
                                                             upserted: s.drags.keys.sorted().compactMap { s.committedAnnotation($0) }))) {
                durability.needsFullWrite.insert(id)
                return failure
            }
            return Self.json(200, Self.describe(s, loaded: true))
        }
    }

    private func deleteSession(_ id: String, on server: WebSocketServer) -> HTTPResponse {
        guard Self.isValidSessionID(id) else { return Self.badID() }
        if let host = sessions[id] {
            guard host.isEmpty else {
                return Self.apiError(409, "session_in_use", "session \(id) has \(host.memberCount) connected members")
            }
        } else {
            guard let store = durability.slot.current?.store else { return Self.storageDown("the store is not open") }
            do throws(StorageError) {
                guard try store.load(id) != nil else { return Self.apiError(404, "not_found", "no session \(id)") }
            } catch {
                return Self.storageDown(error.message)
            }
        }
        if let failure = commitNow(.delete(id: id)) { return failure }
        eventLog.writer?.forget(session: id)
        sessions[id] = nil
        durability.emptySince[id] = nil
        durability.needsFullWrite.remove(id)
        logger.info("session deleted", metadata: ["session": "\(id)", "via": "http"])
        return HTTPResponse(status: 204, body: [])
    }

    /// Commits one change behind everything already queued, waiting for it:
    /// an API call answers 2xx only once its change is durable.
    private func commitNow(_ change: SessionChange) -> HTTPResponse? {
        guard let opened = durability.slot.current else { return Self.storageDown("the store is not open") }
        do throws(StorageError) {
            if let writer = opened.writer {
                writer.flush()
            }
            try opened.store.commit([change])
            return nil
        } catch {
            metrics.error(.storageUnavailable)
            return Self.storageDown(error.message)
        }
    }

    private func patch(_ json: JSONValue) -> Result<SettingsPatch, SessionError> {
        do throws(ProtocolError) {
            return .success(try StoredForm.settingsPatch(json))
        } catch {
            return .failure(SessionError(error.code, error.message, field: error.field))
        }
    }

    static func describe(_ s: Session, loaded: Bool) -> JSONValue {
        .object(["id": .string(s.id), "epoch": .string(s.epoch), "loaded": .bool(loaded), "snapshot": ServerMessage.snapshot(s)])
    }

    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, body: value.encoded)
    }

    static func apiError(_ status: Int, _ code: String, _ message: String, field: String? = nil) -> HTTPResponse {
        var body: [String: JSONValue] = ["error": .string(code), "message": .string(message)]
        if let field { body["field"] = .string(field) }
        return json(status, .object(body))
    }

    static func storageDown(_ message: String) -> HTTPResponse { apiError(503, "storage_unavailable", message) }
    static func badID() -> HTTPResponse {
        apiError(400, "invalid_field", "id: 1-128 characters of A-Z a-z 0-9 . _ -", field: "id")
    }
}
