import MeridianCore

/// The JSON form storage keeps annotations, callouts and settings in: the
/// same shapes as Protocol v1 (`Protocol/schema`), so stored data can be read
/// with the protocol's documentation and tools.
public enum StoredForm {
    public static func encode(_ a: Annotation) -> [UInt8] { Wire.annotation(a).encoded }
    public static func encode(_ c: Callout) -> [UInt8] { Wire.callout(c).encoded }
    public static func encode(_ s: SessionSettings) -> [UInt8] { Wire.settings(s).encoded }

    public static func annotation(_ bytes: [UInt8]) throws(ProtocolError) -> Annotation {
        try fields(bytes, "annotation").annotation("annotation")
    }

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

    private static func fields(_ bytes: [UInt8], _ key: String) throws(ProtocolError) -> Fields {
        guard let json = JSONValue.parse(bytes) else { throw ProtocolError(.invalidMessage, "stored \(key) is not valid JSON") }
        return try Fields(.object([key: json]), path: "")
    }
}
