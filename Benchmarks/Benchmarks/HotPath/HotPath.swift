import Benchmark
import Logging
import MeridianCore
import MeridianProtocol
import MeridianServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// One drag move (a later, transient move of a granted drag) through the public entry points of
// the hot path: decode the request, apply it to the session, encode the event, encode the ack;
// then all four together; then one move end to end through a running server.

/// The move request as the load tool sends it (150 bytes of JSON).
let moveRequest = Array(#"{"type":"drag","ref":4242,"id":"d0","state":"dragging","coordinate":{"latitude":45.123456,"longitude":12.654321}}"#.utf8)

/// A session with one editor holding a drag on `d0` past its first move, and the editor's id.
func draggingSession() -> (Session, ParticipantID) {
    var session = Session(id: "bench", epoch: "e1")
    guard case .success(let (pid, _)) = session.join(JoinRequest(name: "editor", role: .editor), at: .zero) else {
        fatalError("join refused")
    }
    let setup = [
        #"{"type":"annotation.add","ref":1,"annotation":{"id":"d0","type":"point","draggable":true,"coordinate":{"latitude":1,"longitude":2}}}"#,
        #"{"type":"drag","ref":2,"id":"d0","state":"starting"}"#,
        #"{"type":"drag","ref":3,"id":"d0","state":"dragging","coordinate":{"latitude":1.5,"longitude":2.5}}"#,
    ]
    for text in setup {
        guard case .success(let request) = ClientRequest.decode(Array(text.utf8)), case .command(let command) = request.body,
              case .success = session.apply(command, from: pid, at: .zero) else { fatalError("setup refused: \(text)") }
    }
    return (session, pid)
}

func decodedMove() -> (RequestRef, Command) {
    guard case .success(let request) = ClientRequest.decode(moveRequest), case .command(let command) = request.body else {
        fatalError("the move does not decode")
    }
    return (request.ref, command)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        timeUnits: .nanoseconds,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000)

    Benchmark("decode: ClientRequest.decode of one drag move") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(ClientRequest.decode(moveRequest))
        }
    }

    Benchmark("apply: Session.apply of one drag move") { benchmark in
        var (session, pid) = draggingSession()
        let (_, command) = decodedMove()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(session.apply(command, from: pid, at: .zero))
        }
    }

    Benchmark("encode: ServerMessage.event of one drag move") { benchmark in
        var (session, pid) = draggingSession()
        let (_, command) = decodedMove()
        guard case .success(let accepted) = session.apply(command, from: pid, at: .zero), let event = accepted.events.first else {
            fatalError("the move is refused")
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(ServerMessage.event(event))
        }
    }

    Benchmark("ack: ServerMessage.ack of one drag move") { benchmark in
        let (ref, _) = decodedMove()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(ServerMessage.ack(ref: ref, seq: 123_456))
        }
    }

    Benchmark("decode + apply + encode + ack of one drag move") { benchmark in
        var (session, pid) = draggingSession()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            guard case .success(let request) = ClientRequest.decode(moveRequest), case .command(let command) = request.body,
                  case .success(let accepted) = session.apply(command, from: pid, at: .zero) else { fatalError("refused") }
            for event in accepted.events { blackHole(ServerMessage.event(event)) }
            blackHole(ServerMessage.ack(ref: request.ref, seq: session.seq))
        }
    }

    // A running server (in this process, its own service thread) and one editor on a blocking
    // loopback socket: each iteration writes one masked move frame and reads until its ack.
    // It covers the whole inbound path (socket read, lws framing, decode, the hub, apply, the
    // event's fan-out to the one member, ack) plus two loopback socket hops and the wake-ups.
    Benchmark("end to end: one drag move through a running server, write to ack", configuration: .init(maxDuration: .seconds(5))) { benchmark in
        var configuration = ServerConfiguration()
        configuration.transport.port = 0
        configuration.rateLimit = RateLimit(perSecond: 1e9, burst: 1_000_000_000)
        var logger = Logger(label: "meridian.bench")
        logger.logLevel = .critical
        let server = MeridianServer(configuration: configuration, logger: logger)
        let port = try server.start()
        defer { server.stop() }
        let client = try EditorSocket(port: port)
        defer { client.close() }
        try client.request(#"{"type":"join","ref":1,"session":"bench","name":"editor","role":"editor"}"#, answer: "welcome")
        try client.request(#"{"type":"annotation.add","ref":2,"annotation":{"id":"d0","type":"point","draggable":true,"coordinate":{"latitude":1,"longitude":2}}}"#, answer: "ack")
        try client.request(#"{"type":"drag","ref":3,"id":"d0","state":"starting"}"#, answer: "ack")
        try client.request(#"{"type":"drag","ref":4,"id":"d0","state":"dragging","coordinate":{"latitude":1.5,"longitude":2.5}}"#, answer: "ack")
        let frame = EditorSocket.maskedTextFrame(moveRequest)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try client.send(frame)
            try client.readUntil("ack")
        }
        benchmark.stopMeasurement()
    }
}

/// A minimal blocking WebSocket client over a loopback TCP socket (enough for the benchmark).
final class EditorSocket {
    struct Failure: Error, CustomStringConvertible { var description: String }

    let fd: Int32
    var buffer: [UInt8] = []

    init(port: Int) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect: errno \(errno)") }
        try send(Array((
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Protocol: meridian.v1\r\n\r\n").utf8))
        while true {
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                guard buffer.starts(with: Array("HTTP/1.1 101".utf8)) else { throw Failure(description: "upgrade refused") }
                buffer.removeSubrange(..<end.upperBound)
                return
            }
            try fill()
        }
    }

    static func maskedTextFrame(_ payload: [UInt8]) -> [UInt8] {
        let mask: [UInt8] = [0x1b, 0x2c, 0x3d, 0x4e]
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        }
        frame += mask
        for (i, byte) in payload.enumerated() { frame.append(byte ^ mask[i & 3]) }
        return frame
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, 0) }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += n
        }
    }

    func request(_ text: String, answer: String) throws {
        try send(Self.maskedTextFrame(Array(text.utf8)))
        try readUntil(answer)
    }

    /// Reads server frames until a text message of type `type` (`{"type":"…"`) has arrived.
    func readUntil(_ type: String) throws {
        let prefix = Array(#"{"type":"\#(type)""#.utf8)
        while true {
            while let (payload, length) = nextFrame() {
                let found = buffer[payload...].starts(with: prefix)
                buffer.removeSubrange(..<(payload + length))
                if found { return }
            }
            try fill()
        }
    }

    /// The payload offset and length of the first whole frame in the buffer (server frames are unmasked).
    private func nextFrame() -> (Int, Int)? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7f), offset = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = (2..<10).reduce(0) { $0 << 8 | Int(buffer[$1]) }
            offset = 10
        }
        return buffer.count >= offset + length ? (offset, length) : nil
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        guard n > 0 else { throw Failure(description: "connection closed (errno \(errno))") }
        buffer += chunk[..<n]
    }

    func close() { _ = Glibc.close(fd) }
}
