import Logging
import MeridianCore
import MeridianStorage

/// What the HTTP API (``SessionAPI``) asks of the hub whose sessions it serves: the sessions
/// loaded there, their gates, loads, writes and leases. Everything runs on the hub's thread.
protocol APISessions: AnyObject {
    var configuration: ServerConfiguration { get }
    var logger: Logger { get }
    var metrics: HubMetrics { get }
    var gatekeeper: Gatekeeper { get }
    var eventLog: EventLog { get }
    var place: HubPlace? { get }
    /// The sessions loaded on this hub.
    var sessions: [String: SessionHost] { get }
    /// The store, opened or not.
    var storage: StorageSlot { get }
    var writes: SessionWrites { get }
    /// The session `id` if it is loaded here.
    func host(_ id: String) -> SessionHost?
    /// Makes `retry` run when the session's gate is done; false if there is none.
    func waitBehindGate(_ id: String, _ retry: @escaping (GateOutcome) -> Void) -> Bool
    /// Opens a gate on `id` for an API write: joins and API calls for it wait until ``endWrite(_:)``.
    func openWriteGate(_ id: String)
    func endWrite(_ id: String)
    /// Starts loading `id` (making room for it), behind a gate on it; the refusal when it cannot.
    func load(_ id: String, on server: any Outbound) -> SessionError?
    /// Gives up this node's lease on `id`, which is not loaded here (a load found nothing).
    func release(_ id: String)
    /// `id` was deleted: it leaves memory, and its event log goes.
    func forget(_ id: String)
}

extension Hub: APISessions {
    var storage: StorageSlot { durability.slot }

    func host(_ id: String) -> SessionHost? { sessions[id] }

    func waitBehindGate(_ id: String, _ retry: @escaping (GateOutcome) -> Void) -> Bool {
        durability.wait(behind: id, retry)
    }

    func openWriteGate(_ id: String) {
        durability.gates[id] = SessionGate(work: .writing)
    }

    func endWrite(_ id: String) {
        for waiter in durability.endGate(id) { waiter(.written) }
    }

    func load(_ id: String, on server: any Outbound) -> SessionError? {
        switch makeRoom(for: id, on: server) {
        case .refused(let refusal): refusal
        case .asking: nil
        case .made: startLoad(id, on: server)
        }
    }

    func release(_ id: String) {
        place?.cluster?.release(id)
        durability.fences[id] = nil
    }

    func forget(_ id: String) {
        eventLog.writer?.forget(session: id)
        sessions[id] = nil
        durability.fences[id] = nil
        place?.cluster?.release(id)
        durability.emptySince[id] = nil
        writes.forget(id)
        logger.info("session deleted", metadata: ["session": "\(id)", "via": "http"])
    }
}
