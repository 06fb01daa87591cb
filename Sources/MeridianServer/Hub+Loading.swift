import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

extension Hub {
    /// What a join gets: its session now, a wait (`retry` runs when the gate it waits behind
    /// is done), or a refusal.
    enum JoinTarget {
        case ready(SessionHost)
        case waiting
        case refused(SessionError)
        /// Another node owns the session: the join goes to it through hub `home` (the gateway).
        case elsewhere(home: Int)
    }

    /// The session a join goes into. A session that is not loaded is loaded on a reader
    /// thread; the join, and every request for the session that comes meanwhile, waits.
    /// `outcome` is that of the gate a retried join waited behind. Without `create` (a hidden
    /// join: watching never creates a session) a session neither loaded nor stored is refused.
    func joinTarget(
        _ id: String, create: Bool, connection: ConnectionID, after outcome: GateOutcome?, on server: any Outbound,
        retry: @escaping (GateOutcome) -> Void
    ) -> JoinTarget {
        if durability.gates[id] != nil {
            waitForJoin(id, connection: connection, on: server, retry: retry)
            return .waiting
        }
        if let host = sessions[id] { return .ready(host) }
        if let place, let gateway = place.relay.gateway, place.relay.home(of: id) == gateway { return .elsewhere(home: gateway) }
        switch outcome {
        case .elsewhere?:
            // Its owner was known at the load and is not any more (it changed meanwhile).
            return .refused(SessionError(.storageUnavailable, "session \(id) is moving between nodes; join again"))
        case .failed(let error)?:
            return .refused(SessionError(.storageUnavailable, "session \(id) cannot be loaded: \(error.message)"))
        case .full(let refusal)?:
            return .refused(refusal)
        case .absent?:
            guard create else {
                place?.cluster?.release(id)
                durability.fences[id] = nil
                return .refused(SessionError(.sessionNotFound, "no session \(id): a hidden join watches a session and never creates one"))
            }
            switch makeRoom(for: id, on: server) {
            case .refused(let refusal): return .refused(refusal)
            case .asking:
                waitForJoin(id, connection: connection, on: server, retry: retry)
                return .waiting
            case .made:
                let session = Session(id: id, epoch: Durability.newEpoch(), settings: configuration.sessionDefaults, limits: configuration.limits)
                return .ready(install(session, restored: false))
            }
        case .loaded?, .written?, .roomMade?, nil:
            switch makeRoom(for: id, on: server) {
            case .refused(let refusal): return .refused(refusal)
            case .asking: break
            case .made: if let refusal = startLoad(id, on: server) { return .refused(refusal) }
            }
            waitForJoin(id, connection: connection, on: server, retry: retry)
            return .waiting
        }
    }

    /// Starts loading `id` on a reader thread behind a new gate; nil, or why it cannot.
    func startLoad(_ id: String, on server: any Outbound) -> SessionError? {
        guard let reader = durability.slot.current?.reader else {
            return SessionError(.storageUnavailable, "session storage is not open")
        }
        durability.gates[id] = SessionGate(work: .loading)
        durability.loads += 1
        let epoch = Durability.newEpoch()
        let limits = configuration.limits
        reader.read(LoadResult.load(id, cluster: place?.cluster, hub: place?.hub ?? 0, epoch: epoch, limits: limits),
                    completion: returning(self, to: server) { hub, server, result in hub.finishLoad(id, result, on: server) })
        return nil
    }

    /// On the service thread: installs what was loaded, then lets the waiters go on in order.
    private func finishLoad(_ id: String, _ result: Result<LoadResult, StorageError>, on server: any Outbound) {
        guard let gate = durability.gates.removeValue(forKey: id) else { return }
        durability.loads -= 1
        let outcome: GateOutcome
        switch result {
        case .success(.read(_, let fence?)) where place?.cluster.map({ !$0.holds(id, fence: fence) }) ?? false:
            // The lease was given up while the session loaded: it is not this node's to serve.
            logger.warning("session lease lost while it loaded: not opened", metadata: ["session": "\(id)", "fence": "\(fence)"])
            outcome = .failed(.readFailed("the lease of session \(id) was lost while it loaded; join again"))
        case .success(.read(let loaded?, let fence)):
            durability.fences[id] = fence
            install(loaded.session, index: loaded.index, restored: true)
            outcome = .loaded
        case .success(.read(nil, let fence)):
            durability.fences[id] = fence
            outcome = .absent
        case .success(.elsewhere):
            outcome = .elsewhere
        case .failure(let error):
            durability.slot.note(.failure(error))
            logger.error("session load failed", metadata: ["session": "\(id)", "error": "\(error)"])
            outcome = .failed(error)
        }
        for waiter in gate.waiters { waiter(outcome) }
    }

    @discardableResult
    private func install(_ session: Session, index: SpatialIndex<String>? = nil, restored: Bool) -> SessionHost {
        let host = SessionHost(session: session, historySize: configuration.historySize, writes: writes, index: index)
        host.fence = durability.fences[session.id]
        host.eventLog = SessionLog(writer: eventLog.writer, checkpointEvery: configuration.eventLog.checkpointEvery)
        sessions[session.id] = host
        logger.info("session opened", metadata: [
            "session": "\(session.id)", "epoch": "\(session.epoch)", "restored": "\(restored)",
            "annotations": "\(session.annotations.count)", "seq": "\(session.seq)",
        ])
        return host
    }

    /// Whether one more session fits, for `id`.
    enum Room {
        /// It fits (the longest-idle empty session of this hub may have been unloaded for it).
        case made
        /// This hub has no idle session to unload: the other hubs are asked, behind a gate on
        /// `id` that ends with ``GateOutcome/roomMade`` or ``GateOutcome/full(_:)``.
        case asking
        case refused(SessionError)
    }

    /// Makes room for one more session (`id`) when the server holds its limit (loads in flight
    /// count as loaded): the longest-idle empty session of this hub is unloaded, else, the limit
    /// being the server's, another hub is asked to unload its own (Hub+Relay).
    func makeRoom(for id: String, on server: any Outbound) -> Room {
        guard let refusal = capacityRefusal() else { return .made }
        if unloadLongestIdle(on: server) { return .made }
        guard let place, place.relay.hubs > 1, place.loads.total(except: place.hub).loaded > 0 else { return .refused(refusal) }
        // The others in a fixed order, from the next hub on.
        let others = (1..<place.relay.hubs).map { (place.hub + $0) % place.relay.hubs }
        durability.gates[id] = SessionGate(work: .evicting(asking: others[0], next: Array(others.dropFirst())))
        place.relay.post(.evict(for: id, from: place.hub), to: others[0])
        return .asking
    }

    /// Nil when one more session fits, else the refusal: the server holds its limit.
    func capacityRefusal() -> SessionError? {
        let limit = configuration.storage.maxLoadedSessions
        // The limit is the server's: the other threads' sessions count too.
        let elsewhere = place.map { $0.loads.total(except: $0.hub) } ?? (loaded: 0, loading: 0)
        let loads = durability.loads + elsewhere.loading, held = sessions.count + elsewhere.loaded + loads
        guard held >= limit else { return nil }
        let loading = loads > 0 ? " (\(loads) of them loading)" : ""
        return SessionError(.capacityExceeded, "the server holds \(held) sessions\(loading), its limit; try again later")
    }

    /// At the hub that asked for room for `id`: hub `hub`'s answer. Room made, or no hub left to
    /// ask: the gate ends and what waits behind it goes on (a join tries again, or is refused).
    func roomAnswer(for id: String, freed: Bool, from hub: Int) {
        guard case .evicting(let asking, var next)? = durability.gates[id]?.work, asking == hub, let place else { return }
        if !freed, !next.isEmpty {
            let following = next.removeFirst()
            durability.gates[id]?.work = .evicting(asking: following, next: next)
            return place.relay.post(.evict(for: id, from: place.hub), to: following)
        }
        guard let gate = durability.gates.removeValue(forKey: id) else { return }
        let outcome: GateOutcome
        if freed {
            outcome = .roomMade
        } else {
            outcome = .full(capacityRefusal() ?? SessionError(.capacityExceeded, "the server holds as many sessions as it may; try again later"))
        }
        for waiter in gate.waiters { waiter(outcome) }
    }

    /// The join waits behind the session's gate; requests its connection sends meanwhile are held.
    private func waitForJoin(_ id: String, connection: ConnectionID, on server: any Outbound, retry: @escaping (GateOutcome) -> Void) {
        let ticket = durability.nextLoadTicket
        durability.nextLoadTicket += 1
        update(connection, .waitingForLoad(ticket: ticket), on: server)
        _ = durability.wait(behind: id) { [unowned self] outcome in
            // A connection that closed, or waits for a later load, is skipped.
            guard self.connections[connection]?.loadTicket == ticket else { return }
            self.update(connection, .loaded(ticket: ticket), on: server)
            retry(outcome)
            self.update(connection, .loadAnswered, on: server)
        }
    }
}
