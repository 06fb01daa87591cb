import MeridianSync
import Foundation
import MeridianClientTransport

/// Fills each session with `count` annotations before the simulated clients join
/// (for the join storm: a large snapshot; for a big map: annotations around every city). One
/// editor connection per session, adds pipelined up to ``SeedingHandler/window`` unanswered.
struct Seeder {
    let configuration: LoadConfiguration

    /// Seeds every session; throws if a connection fails, if no seeding connection hears
    /// anything for `stall` (a handshake the server dropped without a word), or if `timeout` passes.
    func run(timeout: TimeInterval = 300, stall: Duration = .seconds(30)) throws {
        let progress = SeedingProgress()
        let group = WebSocketClientGroup(
            configuration: {
                var group = ClientGroupConfiguration(host: configuration.host, port: configuration.port, coalescing: configuration.coalescing)
                group.tls = configuration.tls
                return group
            }(),
            handler: SeedingHandler(configuration: configuration, progress: progress, stall: stall))
        try group.start()
        defer { group.stop() }
        let sessions = configuration.sessions
        group.execute { loop in for s in 0..<sessions { loop.connect(s) } }
        try progress.wait(forSessions: sessions, until: DispatchTime.now() + timeout)
    }
}

/// How far seeding got: sessions finished and the first failure, under a mutex, written by the
/// group's thread and waited for by the seeder's caller (woken by a semaphore at each change).
final class SeedingProgress: Sendable {
    private struct State {
        var finished = 0
        var failure: String?
    }

    private let state = Locked(State())
    private let changed = DispatchSemaphore(value: 0)

    func finishedOne() {
        state.withLock { $0.finished += 1 }
        changed.signal()
    }

    func fail(_ reason: String) {
        state.withLock { $0.failure = reason }
        changed.signal()
    }

    /// Returns once `sessions` sessions are seeded; throws on a failure or at `deadline`.
    func wait(forSessions sessions: Int, until deadline: DispatchTime) throws {
        while true {
            let (finished, failure) = state.withLock { ($0.finished, $0.failure) }
            if let failure { throw LoadError.seedingFailed(failure) }
            if finished >= sessions { return }
            if changed.wait(timeout: deadline) == .timedOut {
                // A change may have come with the deadline.
                let (finished, failure) = state.withLock { ($0.finished, $0.failure) }
                if let failure { throw LoadError.seedingFailed(failure) }
                if finished >= sessions { return }
                throw LoadError.seedingFailed("timed out")
            }
        }
    }
}

/// The seeding connections, one per session, on the seeder's group thread.
final class SeedingHandler: ClientGroupHandler {
    let configuration: LoadConfiguration
    let cities: Cities
    let progress: SeedingProgress
    var sent: [Int: Int] = [:]
    var answered: [Int: Int] = [:]
    static let window = 256
    /// How long the seeding may hear nothing at all before it fails, and when it last heard.
    let stall: Duration
    private var lastHeard = ContinuousClock.now
    private var stalled = false

    init(configuration: LoadConfiguration, progress: SeedingProgress, stall: Duration) {
        self.configuration = configuration
        self.progress = progress
        self.stall = stall
        cities = Cities(configuration)
    }

    private func pump(_ s: Int, on group: ClientGroupLoop) {
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

    func group(_ group: ClientGroupLoop, didOpen id: Int) {
        lastHeard = .now
        group.send(Array(#"{"type":"join","ref":"join","session":"load-\#(id)","name":"seeder-\#(id)","role":"editor"\#(configuration.tokenField(configuration.clients + id))}"#.utf8), to: id)
    }

    func group(_ group: ClientGroupLoop, didReceive message: UnsafeRawBufferPointer, from id: Int) {
        lastHeard = .now
        let m = FrameScanner(bytes: message)
        if m.typeIs("welcome") {
            pump(id, on: group)
        } else if m.typeIs("ack") || m.typeIs("error") {
            if m.typeIs("error"), let code = m.string(after: .code), code != "already_exists" {
                progress.fail("annotation.add refused: \(code)")
                return
            }
            answered[id, default: 0] += 1
            if answered[id]! == configuration.annotations {
                progress.finishedOne()
            } else {
                pump(id, on: group)
            }
        }
    }

    func group(_ group: ClientGroupLoop, didClose id: Int, code: UInt16?, failed: Bool) {
        if answered[id, default: 0] < configuration.annotations {
            progress.fail("seeding connection \(id) closed (\(code.map(String.init) ?? "no code"))")
        }
    }

    func groupTick(_ group: ClientGroupLoop) {
        guard !stalled, ContinuousClock.now - lastHeard > stall else { return }
        stalled = true
        progress.fail("no seeding connection heard anything for \(stall)")
    }
}

/// Why a run could not be carried out.
public struct LoadError: Error, CustomStringConvertible {
    /// What went wrong, as the command line prints it.
    public let description: String
    static func seedingFailed(_ detail: String) -> LoadError { LoadError(description: "seeding failed: \(detail)") }
    static func startFailed(_ detail: String) -> LoadError { LoadError(description: "could not start: \(detail)") }
}
