import Foundation
import MeridianAuth
import MeridianTransport
import Testing

@testable import MeridianServer

/// The binary form of the messages between cluster nodes.
@Suite struct ClusterWireTests {
    static let messages: [ClusterMessage] = [
        .request(origin: RemoteConnection(node: 3, connection: ConnectionID(tag: 1, serial: 42)), peer: "10.0.0.9",
                 grant: AccessGrant(participant: "alice", name: "Alice", sessions: "harbour-*", role: .editor, expires: Date(timeIntervalSince1970: 4_102_444_800.5)),
                 text: Array(#"{"type":"join","session":"harbour-1"}"#.utf8)),
        .request(origin: RemoteConnection(node: 1, connection: ConnectionID(rawValue: 7)), peer: "", grant: nil, text: []),
        .echo(origin: RemoteConnection(node: 2, connection: ConnectionID(rawValue: 9)), wire: [0x81, 2, 0x7B, 0x7D]),
        .closed(origin: RemoteConnection(node: 2, connection: ConnectionID(rawValue: 9)), code: 1001, reason: "going away"),
        .closed(origin: RemoteConnection(node: 2, connection: ConnectionID(rawValue: 9)), code: nil, reason: ""),
        .frame(wire: [0x81, 1, 0x41], shared: true, token: 99, supersedes: nil,
               targets: [FrameTarget(node: 2, members: [1, 2, 3].map(ConnectionID.init(rawValue:)), skip: ConnectionID(rawValue: 2)), FrameTarget(node: 5, members: [ConnectionID(rawValue: .max)], skip: nil)]),
        .frame(wire: [], shared: false, token: nil, supersedes: 7, targets: []),
        .close(ConnectionID(rawValue: 12), code: 4012, reason: "session moved"),
        .membership(ConnectionID(rawValue: 12), session: "harbour"),
        .membership(ConnectionID(rawValue: 12), session: nil),
        .subscribed(session: "harbour"),
        .unsubscribed(session: "quay"),
    ]

    @Test(arguments: messages)
    func everyMessageComesBackAsItWasSent(message: ClusterMessage) {
        let bytes = ClusterWire.encode(message, from: 17)
        let decoded = ClusterWire.decode(bytes)
        #expect(decoded?.node == 17)
        #expect(decoded?.message == message)
        // Cut short anywhere, or with a byte too many, it is no message at all.
        for cut in 0..<bytes.count { #expect(ClusterWire.decode(Array(bytes[..<cut])) == nil) }
        #expect(ClusterWire.decode(bytes + [0]) == nil)
    }

    @Test func anotherVersionIsRefused() {
        var bytes = ClusterWire.encode(.subscribed(session: "x"), from: 1)
        bytes[0] = ClusterWire.version + 1
        #expect(ClusterWire.decode(bytes) == nil)
    }

    /// A connection id goes on the wire as its 64 bits, big-endian, whatever its type in Swift.
    @Test func aConnectionIDIsItsEightBytesBigEndian() {
        let bytes = ClusterWire.encode(.close(ConnectionID(rawValue: 0x0102_0304_0506_0708), code: 4012, reason: ""), from: 1)
        // The version, the node's 4 bytes, the kind, then the id.
        #expect(Array(bytes[6..<14]) == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    @Test func tokensOfDifferentNodesDoNotCollide() {
        var seen: Set<UInt64> = []
        for node in 1...50 { for token: UInt64 in [1, 2, 1 << 56 | 1, 3 << 56 | 99] { seen.insert(ClusterGateway.token(token, from: node)) } }
        #expect(seen.count == 200)
    }
}
