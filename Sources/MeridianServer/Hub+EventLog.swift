import MeridianCore
import MeridianStorage
import MeridianTransport

/// `GET /api/sessions/{id}/events?after=POSITION&limit=N`: a page of a session's
/// event log, oldest first (Protocol/openapi.yaml).
extension Hub {
    static let eventLogPageLimit = 1_000

    func eventLogResponse(_ id: String, query: String) -> HTTPResponse {
        guard Self.isValidSessionID(id) else { return Self.badID() }
        var after: Int64 = 0
        var limit = 100
        // lws hands over the arguments joined by "," (it splits them at "&"); both are accepted.
        for pair in query.split(whereSeparator: { $0 == "&" || $0 == "," }) {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            let value = kv.count == 2 ? kv[1] : ""
            switch kv[0] {
            case "after":
                guard let n = Int64(value), n >= 0 else {
                    return Self.apiError(400, "invalid_field", "after: a position (integer ≥ 0) from an earlier page", field: "after")
                }
                after = n
            case "limit":
                guard let n = Int(value), (1...Self.eventLogPageLimit).contains(n) else {
                    return Self.apiError(400, "invalid_field", "limit: an integer from 1 to \(Self.eventLogPageLimit)", field: "limit")
                }
                limit = n
            default:
                return Self.apiError(400, "invalid_field", "\(kv[0]): unknown parameter (use after and limit)", field: kv[0])
            }
        }
        guard let writer = eventLog.writer else {
            return Self.apiError(404, "not_found", "the event log is turned off on this server (eventLogMaxEntries 0)")
        }
        let page: [EventLogEntry]
        do throws(StorageError) {
            page = try writer.store.entries(of: id, after: after, limit: limit + 1)
            if page.isEmpty, after == 0, sessions[id] == nil, try durability.slot.current?.store.load(id) == nil {
                return Self.apiError(404, "not_found", "no session \(id)")
            }
        } catch {
            return Self.storageDown(error.message)
        }
        let more = page.count > limit
        let entries = page.prefix(limit)
        var out = Array(#"{"session":"#.utf8)
        JSONWriter.write(.string(id), into: &out)
        out.append(contentsOf: #","entries":["#.utf8)
        for (i, e) in entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"position":\#(e.position),"time":\#(e.timeMs),"epoch":"#.utf8)
            JSONWriter.write(.string(e.epoch), into: &out)
            out.append(contentsOf: #","seq":\#(e.seq),"\#(e.kind == .event ? "event" : "snapshot")":"#.utf8)
            out.append(contentsOf: e.body)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #"],"next":\#(entries.last?.position ?? after),"more":\#(more)}"#.utf8)
        return HTTPResponse(status: 200, body: out)
    }

    /// When each loaded session last emitted an event, for the overview.
    func lastActivityMs(of host: SessionHost) -> Int64? {
        host.eventLog?.lastActivityMs
    }
}
