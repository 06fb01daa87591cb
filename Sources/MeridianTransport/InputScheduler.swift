/// The order in which connections with received messages waiting are served, when the server
/// has more input than it handles in one turn of its loop: deficit round robin (each connection
/// a `quantum` of work per visit, in turn), with a list of *sparse* connections served first
/// (those that send little and just got something to say: a well-behaved member's `ping` or
/// edit), the "new flows" of FQ-CoDel (RFC 8290 §4.2). A connection that sends without pause
/// gets its share and no more, and cannot delay a sparse one by more than the message being
/// handled. Pure bookkeeping by ``ConnectionID``: the server keeps the messages, decides which
/// connection is sparse, and asks which to serve next.
struct InputScheduler {
    private struct Flow {
        var deficit: Int
        var sparse: Bool
    }

    /// Work a connection may do per visit, in units of ``cost(ofMessageBytes:)``.
    let quantum: Int
    /// Connections with input waiting, by id; a connection is in exactly one of the lists
    /// while it has an entry here.
    private var flows: [ConnectionID: Flow] = [:]
    private var sparseFlows = IDQueue()
    private var busyFlows = IDQueue()

    init(quantum: Int) {
        precondition(quantum > 0)
        self.quantum = quantum
    }

    /// True when no connection has input waiting.
    var isEmpty: Bool { flows.isEmpty }

    /// Connections with input waiting.
    var count: Int { flows.count }

    /// Whether `id` has input waiting (is in a list).
    func isWaiting(_ id: ConnectionID) -> Bool { flows[id] != nil }

    /// The work of handling one message of `bytes`: 1, and 1 more per 4 KiB, so that a
    /// connection sending large messages gets fewer per turn.
    static func cost(ofMessageBytes bytes: Int) -> Int { 1 + bytes >> 12 }

    /// `id` got input to serve. One not waiting yet joins the sparse list when `sparse`, else
    /// the end of the busy list; one already waiting keeps its place.
    mutating func arrived(_ id: ConnectionID, sparse: Bool) {
        guard flows[id] == nil else { return }
        flows[id] = Flow(deficit: quantum, sparse: sparse)
        if sparse { sparseFlows.append(id) } else { busyFlows.append(id) }
    }

    /// The connection to serve one message of next (nil: none waits), and whether it is served
    /// as sparse. Call ``served(_:cost:more:)`` once that message is handled.
    mutating func next() -> (id: ConnectionID, sparse: Bool)? {
        while true {
            if let id = sparseFlows.first {
                guard var flow = flows[id] else { sparseFlows.removeFirst(); continue }
                if flow.deficit <= 0 {
                    // Used its turn ahead of the others: it waits with them from now on.
                    flow.deficit += quantum
                    flow.sparse = false
                    flows[id] = flow
                    sparseFlows.removeFirst()
                    busyFlows.append(id)
                    continue
                }
                return (id, true)
            }
            guard let id = busyFlows.first else { return nil }
            guard var flow = flows[id] else { busyFlows.removeFirst(); continue }
            if flow.deficit <= 0 {
                flow.deficit += quantum
                flows[id] = flow
                busyFlows.removeFirst()
                busyFlows.append(id)
                continue
            }
            return (id, false)
        }
    }

    /// A message of `id` (the one ``next()`` named) was handled at `cost`; `more`: it has more
    /// waiting. One with nothing left leaves the lists until it gets input again.
    mutating func served(_ id: ConnectionID, cost: Int, more: Bool) {
        guard var flow = flows[id] else { return }
        if more {
            flow.deficit -= cost
            flows[id] = flow
            return
        }
        flows[id] = nil
        if flow.sparse {
            if sparseFlows.first == id { sparseFlows.removeFirst() }
        } else if busyFlows.first == id {
            busyFlows.removeFirst()
        }
    }

    /// `id` will not be served as sparse any more (it used what it may send ahead of others):
    /// it goes on at the end of the busy list.
    mutating func demote(_ id: ConnectionID) {
        guard var flow = flows[id], flow.sparse else { return }
        flow.sparse = false
        flows[id] = flow
        if sparseFlows.first == id { sparseFlows.removeFirst() } else { sparseFlows.remove(id) }
        busyFlows.append(id)
    }

    /// `id` is gone (closed, or its input dropped): forgotten, wherever it waits.
    mutating func remove(_ id: ConnectionID) {
        // Left in its list and skipped there: ids are never reused.
        flows[id] = nil
    }
}

/// A FIFO of connection ids: an array and the index of its head, compacted when the consumed
/// part is the larger.
struct IDQueue {
    private var ids: [ConnectionID] = []
    private var head = 0

    var first: ConnectionID? { head < ids.count ? ids[head] : nil }
    var isEmpty: Bool { head == ids.count }

    mutating func append(_ id: ConnectionID) { ids.append(id) }

    /// The first id, removed; nil when empty.
    mutating func popFirst() -> ConnectionID? {
        guard let id = first else { return nil }
        removeFirst()
        return id
    }

    mutating func removeFirst() {
        head += 1
        if head == ids.count {
            ids.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > ids.count {
            ids.removeFirst(head)
            head = 0
        }
    }

    /// Removes `id` wherever it is (a linear search: rare).
    mutating func remove(_ id: ConnectionID) {
        guard let index = ids[head...].firstIndex(of: id) else { return }
        ids.remove(at: index)
    }
}
