import MeridianCore

/// The JSON form storage keeps annotations, callouts and settings in: the
/// same shapes as Protocol v1 (`Protocol/schema`), so stored data can be read
/// with the protocol's documentation and tools.
public enum StoredForm {
    /// An annotation as stored: the protocol's annotation object (SPEC §8.6), its `revision` included.
    public static func encode(_ a: Annotation) -> [UInt8] { encoded { $0.annotation(a) } }
    /// A callout as stored: the protocol's callout object (SPEC §8.9).
    public static func encode(_ c: Callout) -> [UInt8] { encoded { $0.callout(c) } }
    /// Session settings as stored: the protocol's settings object (SPEC §8.11).
    public static func encode(_ s: SessionSettings) -> [UInt8] { encoded { $0.settings(s) } }

    private static func encoded(_ write: (inout JSONOutput) -> Void) -> [UInt8] {
        var out = JSONOutput()
        write(&out)
        return out.bytes
    }

    /// A stored annotation. One stored before annotations had revisions gets `revisionIfAbsent`
    /// (the stores pass their record's seq: no change of it can be later).
    public static func annotation(_ bytes: [UInt8], revisionIfAbsent: UInt64) throws(ProtocolError) -> Annotation {
        try fields(bytes, "annotation").annotation("annotation", storedRevision: max(revisionIfAbsent, 1))
    }

    /// A stored callout; throws a ``ProtocolError`` if the bytes are not valid JSON or not a valid callout.
    public static func callout(_ bytes: [UInt8]) throws(ProtocolError) -> Callout {
        try fields(bytes, "callout").callout("callout")
    }

    /// Settings; fields absent from the JSON take the defaults of ``SessionSettings``.
    public static func settings(_ bytes: [UInt8]) throws(ProtocolError) -> SessionSettings {
        try settings(fields(bytes, "settings").object("settings"))
    }

    /// A settings change as JSON (the fields of `session.configure`'s `settings`), e.g. from an HTTP request body.
    public static func settingsPatch(_ value: JSONValue, path: String = "settings") throws(ProtocolError) -> SettingsPatch {
        try ClientRequest.settingsPatch(Fields(value, path: path))
    }

    static func settings(_ f: Fields) throws(ProtocolError) -> SessionSettings {
        let p = try ClientRequest.settingsPatch(f)
        let d = SessionSettings()
        return SessionSettings(
            styleURL: p.styleURL ?? d.styleURL, tint: p.tint ?? d.tint, dragPolicy: p.dragPolicy ?? d.dragPolicy,
            leaseTimeout: p.leaseTimeout ?? d.leaseTimeout, constraints: p.constraints ?? d.constraints)
    }

    /// A document `{key: <bytes>}` read as the fields of a request would be.
    private static func fields(_ bytes: [UInt8], _ key: String) throws(ProtocolError) -> Fields {
        var wrapped = JSONOutput()
        wrapped.raw("{")
        wrapped.string(key)
        wrapped.raw(":")
        wrapped.raw(bytes)
        wrapped.raw("}")
        guard case .success(let document) = JSONDocument.parseCopy(wrapped.bytes) else {
            throw ProtocolError(.invalidMessage, "stored \(key) is not valid JSON")
        }
        return try Fields(document: document, node: 0, path: "")
    }
}
