import MeridianCore
import MeridianProtocol

/// The JSON bodies of the API: a create's `{id, settings?}` and a settings change.
public enum APIBody {
    /// `POST /api/sessions`: `{"id": …, "settings": {…}}` (settings optional).
    public static func create(_ body: [UInt8]) -> Result<(id: String, settings: SettingsPatch?), APIRefusal> {
        guard case .object(let fields)? = JSONValue.parse(body) else {
            return .failure(APIRefusal(400, "invalid_message", "POST /api/sessions: the body must be a JSON object {\"id\": …, \"settings\": {…}}"))
        }
        if let extra = fields.keys.filter({ $0 != "id" && $0 != "settings" }).sorted().first {
            return .failure(.invalid(extra, "\(quoted(extra)): unknown field (a create has id and settings)"))
        }
        let id: String
        switch fields["id"] {
        case .string(let s)?: id = s
        case nil: return .failure(.invalid("id", "id: required"))
        case let other?: return .failure(.invalid("id", "id: must be a string, got \(kind(other))"))
        }
        guard SessionID.isValid(id) else { return .failure(SessionID.refusal(id)) }
        guard let settings = fields["settings"] else { return .success((id, nil)) }
        return settingsChange(settings, path: "settings").map { (id, $0) }
    }

    /// `PATCH /api/sessions/{id}/settings`: the body is the settings change itself.
    public static func settings(_ body: [UInt8]) -> Result<SettingsPatch, APIRefusal> {
        guard let json = JSONValue.parse(body) else {
            return .failure(APIRefusal(400, "invalid_message", "PATCH /api/sessions/{id}/settings: the body must be a JSON object of settings"))
        }
        return settingsChange(json, path: "settings")
    }

    /// The fields whose value is a string or a number (openapi.yaml's `SettingsChange`):
    /// `null` is refused there, while `constraints: null` removes the constraints.
    static let notNullable = ["styleURL", "tint", "dragPolicy", "leaseTimeoutMs"]

    /// `styleURL`'s maxLength in openapi.yaml.
    public static let maxStyleURLLength = 2_048

    /// A settings change, fields named `path.key` in errors. Where the WebSocket protocol takes
    /// `null` as an absent field (SPEC, conventions), the API refuses it: a `null` that does
    /// nothing is more likely a client's mistake than its intent.
    static func settingsChange(_ value: JSONValue, path: String) -> Result<SettingsPatch, APIRefusal> {
        guard case .object(let fields) = value else {
            return .failure(.invalid(path, "\(path): must be a JSON object of settings, got \(kind(value))"))
        }
        if let key = notNullable.first(where: { fields[$0] == .null }) {
            return .failure(.invalid("\(path).\(key)", "\(path).\(key): must not be null (leave the field out to keep the current value)"))
        }
        if let constraints = fields["constraints"], constraints != .null, let inner = firstNull(in: constraints, path: "\(path).constraints") {
            return .failure(.invalid(inner, "\(inner): must not be null (leave the field out for none)"))
        }
        // openapi.yaml's maxLength counts code points; the session's own check counts what a
        // reader sees as one character (SPEC conventions), so "\r\n" or a combining accent
        // would let a longer URL through. Both hold here: the document's count is the stricter.
        if case .string(let url)? = fields["styleURL"], url.unicodeScalars.count > maxStyleURLLength {
            return .failure(.invalid("\(path).styleURL", "\(path).styleURL: at most \(maxStyleURLLength) characters (Unicode code points), got \(url.unicodeScalars.count)"))
        }
        do throws(ProtocolError) {
            return .success(try StoredForm.settingsPatch(value, path: path))
        } catch {
            return .failure(APIRefusal(400, error.code.rawValue, error.message, field: error.field))
        }
    }

    /// The dotted path of the first `null` inside `value` (keys in sorted order), if any.
    static func firstNull(in value: JSONValue, path: String) -> String? {
        switch value {
        case .null: return path
        case .object(let fields):
            for (key, field) in fields.sorted(by: { $0.key < $1.key }) {
                if let found = firstNull(in: field, path: "\(path).\(key)") { return found }
            }
            return nil
        case .array(let items):
            for (i, item) in items.enumerated() {
                if let found = firstNull(in: item, path: "\(path)[\(i)]") { return found }
            }
            return nil
        default: return nil
        }
    }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
