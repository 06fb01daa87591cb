import MeridianAPI
import MeridianCore
import MeridianStorage
import MeridianTransport

/// `GET /api/sessions/{id}/events?after=&before=&since=&until=&order=&limit=`: a page of a
/// session's event log, oldest or newest first (Protocol/openapi.yaml).
extension EventLog {
    /// The page of `query` (`EventLogQuery.parse` checked it, and the id), read on a thread of
    /// `store`'s reader, never the service thread: a log in PostgreSQL can be slow or stalled.
    /// A session neither `loaded` nor stored is a 404 whatever its log still holds: a deleted
    /// session's log is removed after the delete is answered, by the log's writer thread.
    func page(of id: String, _ query: EventLogQuery, loaded: Bool, store: StorageReader?, _ responder: HTTPResponder) {
        guard let writer else {
            return responder.respond(APIResponse.error(404, "not_found", "the event log is turned off on this server (eventLogMaxEntries 0)"))
        }
        guard let store else { return responder.respond(APIResponse.storageDown("the store is not open")) }
        let range = EventLogRange(after: query.after, before: query.before ?? .max, since: query.since ?? .min,
                                  until: query.until ?? .max, newestFirst: query.newestFirst)
        let (log, limit) = (writer.store, query.limit)
        store.read({ sessions throws(StorageError) -> [EventLogEntry]? in
            if !loaded, try !sessions.contains(id) { return nil }
            return try log.entries(of: id, in: range, limit: limit + 1)
        }, completion: { result in
            switch result {
            case .failure(let error): responder.respond(APIResponse.storageDown(error.message))
            case .success(nil): responder.respond(APIResponse.error(404, "not_found", "no session \(id)"))
            case .success(let page?): responder.respond(Self.page(of: id, page, range, limit: limit))
            }
        })
    }

    /// `next` is where the following page starts: its `after` oldest first, its `before` newest
    /// first; on an empty page, the query's own `after`, or its `before` (0 when it gave none).
    private static func page(of id: String, _ page: [EventLogEntry], _ range: EventLogRange, limit: Int) -> HTTPResponse {
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
        let next = entries.last?.position ?? (range.newestFirst ? (range.before == .max ? 0 : range.before) : range.after)
        out.append(contentsOf: #"],"next":\#(next),"more":\#(more)}"#.utf8)
        return HTTPResponse(status: 200, body: out)
    }
}
