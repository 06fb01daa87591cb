@testable import MeridianClient
import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// Random sessions across the nodes of a cluster in memory (``MemoryCluster``): members on every
/// node send random requests that cross on the broker, while nodes are stalled (their messages
/// held by the broker) and healed at random. Whatever the interleaving, every request is answered,
/// every member sees the owner's one stream, and every mirror equals a fresh snapshot.
@Suite("Cluster nodes in memory, random")
struct InMemoryClusterPropertyTests {
    @Test(arguments: 1...8 as ClosedRange<UInt64>)
    func membersOnEveryNodeSeeOneStreamWhateverTheBrokerHoldsBack(seed: UInt64) throws {
        let cluster = try MemoryCluster(nodes: 3)
        var rng = SplitMix(seed: seed)
        let session = "cluster-\(seed)"
        // Connection ids are per node (two nodes may hand out the same one): members are kept by index.
        var members: [(node: Int, connection: ConnectionID)] = []
        var mirrors: [SessionState] = []
        for (i, name) in ["Ann", "Ben", "Cy", "Dee", "Eli", "Fay"].enumerated() {
            // The first joins at the node the seed picks: that node owns the session.
            let node = (i + Int(seed)) % 3
            let c = cluster.nodes[node].connect(to: 0)
            let welcome = try cluster.request("join", ["session": .string(session), "name": .string(name), "role": "editor"], on: node, from: c)
            mirrors.append(SessionState(snapshot: try #require(welcome["snapshot"], "\(welcome)")))
            members.append((node, c))
        }
        var streams = [[JSONValue]](repeating: [], count: members.count)
        for (i, (node, c)) in members.enumerated() { try SessionScript.apply(cluster.nodes[node].drain(c), to: &mirrors[i], stream: &streams[i]) }
        streams = [[JSONValue]](repeating: [], count: members.count)

        var refs: [(node: Int, connection: ConnectionID, ref: String)] = []
        var stalled: Set<Int> = []
        for step in 0..<300 {
            let (node, c) = members[rng.below(members.count)]
            let (type, fields) = SessionScript.request(step: step, &rng)
            refs.append((node, c, cluster.nodes[node].post(type, fields, from: c)))
            switch rng.below(12) {
            case 0:
                let node = rng.below(3)
                cluster.clients[node].stall()
                stalled.insert(node)
            case 1, 2:
                if !stalled.isEmpty {
                    let node = stalled.sorted()[rng.below(stalled.count)]
                    cluster.clients[node].heal()
                    stalled.remove(node)
                }
            case 3, 4, 5:
                cluster.settle()
            default:
                break
            }
        }
        for node in stalled { cluster.clients[node].heal() }
        for (node, c, ref) in refs {
            let answer = try cluster.answer(ref, on: node, to: c)
            #expect(["ack", "error"].contains(answer["type"]?.string ?? ""), "\(answer)")
        }
        for (i, (node, c)) in members.enumerated() { try SessionScript.apply(cluster.nodes[node].drain(c), to: &mirrors[i], stream: &streams[i]) }

        let reference = streams[0]
        #expect(reference.count > 50, "too few events to show anything: \(reference.count)")
        for (i, (node, _)) in members.enumerated().dropFirst() {
            #expect(streams[i] == reference, "a member on node \(node + 1) saw another stream (seed \(seed))")
        }
        for node in 0..<3 {
            let late = cluster.nodes[node].connect(to: 0)
            let welcome = try cluster.request("join", ["session": .string(session), "name": "Gus", "role": "viewer", "hidden": true], on: node, from: late)
            let fresh = SessionState(snapshot: try #require(welcome["snapshot"], "\(welcome)"))
            for (i, (at, c)) in members.enumerated() {
                try SessionScript.apply(cluster.nodes[at].drain(c), to: &mirrors[i], stream: &streams[i])
                #expect(mirrors[i] == fresh, "the mirror of a member on node \(at + 1) differs from a fresh snapshot at node \(node + 1) (seed \(seed))")
            }
        }
    }
}
