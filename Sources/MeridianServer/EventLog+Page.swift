import MeridianAPI
import MeridianCore
import MeridianStorage
import MeridianTransport

/// `GET /api/sessions/{id}/events?after=POSITION&limit=N`: a page of a session's
/// event log, oldest first (Protocol/openapi.yaml).
extension EventLog {
    /// The page of `query` (`EventLogQuery.parse` checked it, and the id). An empty page is a 404
    /// when `exists` (asked only then) says there is no such session.
    func page(of id: String, _ query: EventLogQuery, exists: () throws(StorageError) -> Bool) -> HTTPResponse {
        let (after, limit) = (query.after, query.limit)
        guard let writer else {
            return APIResponse.error(404, "not_found", "the event log is turned off on this server (eventLogMaxEntries 0)")
        }
        let page: [EventLogEntry]
        do throws(StorageError) {
            page = try writer.store.entries(of: id, after: after, limit: limit + 1)
            // An empty page of a session that is neither loaded nor stored: there is no such session
            // (a deleted one's log went with it), whatever `after` says.
            if page.isEmpty, try !exists() {
                return APIResponse.error(404, "not_found", "no session \(id)")
            }
        } catch {
            return APIResponse.storageDown(error.message)
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

}
