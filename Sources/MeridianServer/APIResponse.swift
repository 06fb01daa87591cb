import MeridianAPI
import MeridianCore
import MeridianProtocol
import MeridianTransport

/// The HTTP API's answers (Protocol/openapi.yaml): JSON bodies, the error body every refusal
/// carries (`error`, `message` and the `field` at fault), and a session as the API describes it.
enum APIResponse {
    /// A session as the API shows it: id, epoch, whether it is loaded, and its snapshot.
    static func describe(_ s: Session, loaded: Bool) -> JSONValue {
        .object(["id": .string(s.id), "epoch": .string(s.epoch), "loaded": .bool(loaded), "snapshot": ServerMessage.snapshot(s)])
    }

    /// `value` as the JSON body of a `status` answer.
    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, body: value.encoded)
    }

    /// The error body of a refusal: `code`, `message` and the `field` at fault, if one is.
    static func error(_ status: Int, _ code: String, _ message: String, field: String? = nil) -> HTTPResponse {
        var body: [String: JSONValue] = ["error": .string(code), "message": .string(message)]
        if let field { body["field"] = .string(field) }
        return json(status, .object(body))
    }

    /// A refusal of `APIRequest.decode`; a 405 lists the path's methods in `Allow`.
    static func error(_ refusal: APIRefusal) -> HTTPResponse {
        var response = error(refusal.status, refusal.code, refusal.message, field: refusal.field)
        if let allow = refusal.allow { response.headers.append(("allow", allow.joined(separator: ", "))) }
        return response
    }

    /// 503 `storage_unavailable`: the session store could not answer, and why.
    static func storageDown(_ message: String) -> HTTPResponse { error(503, "storage_unavailable", message) }
}
