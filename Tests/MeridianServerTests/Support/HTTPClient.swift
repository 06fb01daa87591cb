import Foundation
import MeridianCore
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 client over a POSIX socket, for the API: a request can be sent now and its
/// answer read later, so a test can look at what happens meanwhile.
final class HTTPClient {
    struct Failure: Error, CustomStringConvertible { var description: String }

    private let fd: Int32
    private var buffered: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw Failure(description: "connect")
        }
    }

    deinit { Glibc.close(fd) }

    /// One request and its answer.
    static func call(port: Int, _ method: String, _ path: String, _ body: JSONValue? = nil) throws -> (status: Int, body: JSONValue?) {
        let client = try HTTPClient(port: port)
        try client.send(method, path, body)
        return try client.response()
    }

    func send(_ method: String, _ path: String, _ body: JSONValue? = nil) throws {
        let payload = body?.encoded ?? []
        let head = "\(method) \(path) HTTP/1.1\r\nHost: test\r\nContent-Length: \(payload.count)\r\n\r\n"
        let bytes = Array(head.utf8) + payload
        guard Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw Failure(description: "send") }
    }

    /// Whether an answer (or the end of the connection) can be read now.
    var answered: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return !buffered.isEmpty || poll(&entry, 1, 0) > 0
    }

    /// One request and its answer's body as text (for /metrics).
    static func text(port: Int, _ path: String) throws -> String {
        let client = try HTTPClient(port: port)
        try client.send("GET", path)
        return String(decoding: try client.responseBytes().body, as: UTF8.self)
    }

    /// Reads one answer: its status and JSON body (nil when empty).
    func response() throws -> (status: Int, body: JSONValue?) {
        let (status, body) = try responseBytes()
        return (status, body.isEmpty ? nil : JSONValue.parse(body))
    }

    /// Reads one answer: its status and body.
    func responseBytes() throws -> (status: Int, body: [UInt8]) {
        let separator = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = buffered.indices.dropLast(3).first { Array(buffered[$0..<$0 + 4]) == separator }
            if headerEnd == nil { try fill() }
        }
        let lines = String(decoding: buffered[..<headerEnd!], as: UTF8.self).split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        let start = headerEnd! + 4
        while buffered.count < start + length { try fill() }
        let body = Array(buffered[start..<start + length])
        buffered.removeFirst(start + length)
        return (status, body)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw Failure(description: "the connection closed, or no answer within 10 s") }
        buffered.append(contentsOf: chunk[0..<count])
    }
}
