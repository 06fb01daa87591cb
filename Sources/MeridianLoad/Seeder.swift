import Foundation
import MeridianClientTransport

/// Fills each session with `count` annotations before the simulated clients join
/// (for the join storm: a large snapshot; for a big map: annotations around every city). One
/// editor connection per session, adds pipelined up to ``window`` unanswered.
final class Seeder: ClientGroupHandler, @unchecked Sendable {
    let configuration: LoadConfiguration
    let cities: Cities
    var group: WebSocketClientGroup!
    var sent: [Int: Int] = [:]
    var answered: [Int: Int] = [:]
    let done = NSCondition()
    var finished = 0
    var failure: String?
    static let window = 256

    init(configuration: LoadConfiguration) {
        self.configuration = configuration
        cities = Cities(configuration)
        group = WebSocketClientGroup(
            host: configuration.host, port: configuration.port, coalescing: configuration.coalescing, handler: self)
    }

    /// Seeds every session; throws if a connection fails or `timeout` passes.
    func run(timeout: TimeInterval = 300) throws {
        try group.start()
        defer { group.stop() }
        group.execute { [self] in for s in 0..<configuration.sessions { group.connect(s) } }
        let deadline = Date(timeIntervalSinceNow: timeout)
        done.lock()
        defer { done.unlock() }
        while finished < configuration.sessions && failure == nil {
            if !done.wait(until: deadline) { throw LoadError.seedingFailed("timed out") }
        }
        if let failure { throw LoadError.seedingFailed(failure) }
    }

    private func fail(_ reason: String) {
        done.withLock { failure = reason; done.broadcast() }
    }

    private func pump(_ s: Int) {
        while sent[s, default: 0] < configuration.annotations, sent[s, default: 0] - answered[s, default: 0] < Self.window {
            let n = sent[s, default: 0]
            sent[s] = n + 1
            let (lat, lon) = location(n)
            let id = isDragged(n) ? #""id":"d\#(n)","draggable":true"# : #""id":"s\#(n)""#
            group.send(Array(#"{"type":"annotation.add","ref":\#(n),"annotation":{\#(id),"type":"point","title":"seed \#(n)","coordinate":{"latitude":\#(lat),"longitude":\#(lon)}}}"#.utf8), to: s)
        }
    }

    /// On a big map the first seed of each dragger's city (seed `n` lies in city `n` for `n` below
    /// the number of cities) is that dragger's annotation `d<n>`: the seeds can fill a session to
    /// its annotation limit and still leave the draggers theirs.
    private func isDragged(_ n: Int) -> Bool {
        configuration.interest == .viewport && n < min(configuration.draggers, cities.count)
    }

    /// Where annotation `n` goes: on a grid over the world, or around city `n % count` (``Cities``).
    private func location(_ n: Int) -> (Double, Double) {
        guard configuration.interest == .viewport else { return (Double(n % 170) - 85, Double(n / 170 % 360) - 180) }
        let p = cities.seedLocation(n, of: configuration.annotations)
        return (p.latitude, p.longitude)
    }

    func group(_ group: WebSocketClientGroup, didOpen id: Int) {
        group.send(Array(#"{"type":"join","ref":"join","session":"load-\#(id)","name":"seeder-\#(id)","role":"editor"\#(configuration.tokenField(configuration.clients + id))}"#.utf8), to: id)
    }

    func group(_ group: WebSocketClientGroup, didReceive message: UnsafeRawBufferPointer, from id: Int) {
        let m = FrameScanner(bytes: message)
        if m.typeIs("welcome") {
            pump(id)
        } else if m.typeIs("ack") || m.typeIs("error") {
            if m.typeIs("error"), let code = m.string(after: .code), code != "already_exists" {
                fail("annotation.add refused: \(code)")
                return
            }
            answered[id, default: 0] += 1
            if answered[id]! == configuration.annotations {
                done.withLock { finished += 1; done.broadcast() }
            } else {
                pump(id)
            }
        }
    }

    func group(_ group: WebSocketClientGroup, didClose id: Int, code: UInt16?, failed: Bool) {
        if answered[id, default: 0] < configuration.annotations {
            fail("seeding connection \(id) closed (\(code.map(String.init) ?? "no code"))")
        }
    }

    func groupTick(_ group: WebSocketClientGroup) {}
}

/// Why a run could not be carried out.
public struct LoadError: Error, CustomStringConvertible {
    public let description: String
    static func seedingFailed(_ detail: String) -> LoadError { LoadError(description: "seeding failed: \(detail)") }
    static func startFailed(_ detail: String) -> LoadError { LoadError(description: "could not start: \(detail)") }
}
