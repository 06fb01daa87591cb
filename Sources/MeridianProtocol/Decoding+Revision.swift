import MeridianCore

/// Annotation revisions on the wire: `ifRevision` in conditional requests, `revision` only
/// from the server.
extension Fields {
    /// The largest revision a client can send: seqs are integers JSON numbers keep exactly.
    static let maxRevision: UInt64 = 9_007_199_254_740_991

    /// A revision the server wrote (`ifRevision`, a stored `revision`): an integer from 1 to
    /// 2^53-1; nil when absent or `null`.
    func optionalRevision(_ key: String) throws(ProtocolError) -> UInt64? {
        guard let index = try lookup(key) else { return nil }
        let wanted = "an integer from 1 to \(Self.maxRevision): a revision the server sent"
        guard document.nodes[index].kind == .number else { throw .invalid(name(key), "must be \(wanted)") }
        let n = document.double(at: index)
        guard n.isFinite, n == n.rounded(), n >= 1, n <= Double(Self.maxRevision) else { throw .invalid(name(key), "must be \(wanted)") }
        return UInt64(n)
    }

    /// Annotations a client sends carry no `revision`: the server numbers every change itself.
    func refuseRevision(_ hint: String = "") throws(ProtocolError) {
        guard has("revision") else { return }
        throw .invalid(name("revision"), "set by the server (the seq of the annotation's latest change), never by a client\(hint)")
    }
}
