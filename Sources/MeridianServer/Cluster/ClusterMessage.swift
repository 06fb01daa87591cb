import Foundation
import MeridianAuth
import MeridianTransport

/// A connection of another node, as the owner of its session knows it.
struct RemoteConnection: Hashable, Sendable {
    var node: Int
    var connection: ConnectionID
}

/// The members of one node a frame is for (but `skip`).
struct FrameTarget: Equatable, Sendable {
    var node: Int
    var members: [ConnectionID]
    var skip: ConnectionID?
}

/// What the nodes of a cluster send each other through Redis: the cross-host part of the relay
/// (``RelayMessage``). An edge node sends its members' requests to the session's owner; the
/// owner sends back the frames, closes and membership of those members. Connection ids are
/// always the edge node's own; the owner knows the edge's members by ``RemoteConnection``.
enum ClusterMessage: Equatable, Sendable {
    /// Edge to owner: a request of `origin`, as the client sent it (the owner decodes it again).
    case request(origin: RemoteConnection, peer: String, grant: AccessGrant?, text: [UInt8])
    /// Edge to owner and back: a frame the edge answered with itself (a refused request), sent
    /// through the owner so that it follows the answers to the connection's earlier requests.
    case echo(origin: RemoteConnection, wire: [UInt8])
    /// Edge to owner: the connection is gone.
    case closed(origin: RemoteConnection, code: UInt16?, reason: String)
    /// Owner to edges: frame bytes for members of one or more nodes (published once on the
    /// session's channel, each node taking its own target; or to one node's inbox). A transient
    /// frame carries its token, and the token of the earlier frame it supersedes.
    case frame(wire: [UInt8], shared: Bool, token: UInt64?, supersedes: UInt64?, targets: [FrameTarget])
    /// Edge to owner: this node hears the session's channel now (it has members in the session),
    /// or stopped: the owner publishes the session's frames for it there, or to its inbox.
    case subscribed(session: String)
    case unsubscribed(session: String)
    /// Owner to edge: close a member's connection.
    case close(ConnectionID, code: UInt16, reason: String)
    /// Owner to edge: the member's session after its join, leave or replacement (nil: none).
    case membership(ConnectionID, session: String?)
}

/// The binary form of a ``ClusterMessage``, prefixed by the sender's node number: a version
/// byte, a kind byte, then fixed-width big-endian integers and length-prefixed bytes.
enum ClusterWire {
    static let version: UInt8 = 1

    static func encode(_ message: ClusterMessage, from node: Int) -> [UInt8] {
        var w = Writer()
        w.u8(version)
        w.u32(UInt32(node))
        switch message {
        case .request(let origin, let peer, let grant, let text):
            w.u8(1); w.origin(origin); w.string(peer)
            if let grant {
                w.u8(1); w.string(grant.participant); w.optional(grant.name); w.string(grant.sessions); w.string(grant.role.rawValue)
                w.u64(grant.expires.timeIntervalSince1970.bitPattern)
            } else {
                w.u8(0)
            }
            w.data(text)
        case .echo(let origin, let wire):
            w.u8(2); w.origin(origin); w.data(wire)
        case .closed(let origin, let code, let reason):
            w.u8(3); w.origin(origin); w.u8(code == nil ? 0 : 1); w.u16(code ?? 0); w.string(reason)
        case .frame(let wire, let shared, let token, let supersedes, let targets):
            w.u8(4); w.u8(shared ? 1 : 0); w.optional(token); w.optional(supersedes)
            w.u32(UInt32(targets.count))
            for target in targets {
                w.u32(UInt32(target.node)); w.optional(target.skip?.rawValue)
                w.u32(UInt32(target.members.count))
                for member in target.members { w.id(member) }
            }
            w.data(wire)
        case .close(let connection, let code, let reason):
            w.u8(5); w.id(connection); w.u16(code); w.string(reason)
        case .membership(let connection, let session):
            w.u8(6); w.id(connection); w.optional(session)
        case .subscribed(let session):
            w.u8(7); w.string(session)
        case .unsubscribed(let session):
            w.u8(8); w.string(session)
        }
        return w.bytes
    }

    /// The sender and its message, or nil for bytes that are not one (another version, cut short).
    static func decode(_ bytes: [UInt8]) -> (node: Int, message: ClusterMessage)? {
        var r = Reader(bytes: bytes)
        guard r.u8() == version, let node = r.u32(), let kind = r.u8() else { return nil }
        let message: ClusterMessage?
        switch kind {
        case 1:
            guard let origin = r.origin(), let peer = r.string(), let hasGrant = r.u8() else { return nil }
            var grant: AccessGrant?
            if hasGrant == 1 {
                guard let participant = r.string(), let name = r.optionalString(), let sessions = r.string(),
                      let role = r.string().flatMap(TokenRole.init(rawValue:)), let expires = r.u64()
                else { return nil }
                grant = AccessGrant(participant: participant, name: name, sessions: sessions, role: role,
                                    expires: Date(timeIntervalSince1970: Double(bitPattern: expires)))
            }
            message = r.data().map { .request(origin: origin, peer: peer, grant: grant, text: $0) }
        case 2:
            guard let origin = r.origin() else { return nil }
            message = r.data().map { .echo(origin: origin, wire: $0) }
        case 3:
            guard let origin = r.origin(), let hasCode = r.u8(), let code = r.u16(), let reason = r.string() else { return nil }
            message = .closed(origin: origin, code: hasCode == 1 ? code : nil, reason: reason)
        case 4:
            guard let shared = r.u8(), let token = r.optionalU64(), let supersedes = r.optionalU64(),
                  let count = r.u32(), Int(count) <= bytes.count / 5 else { return nil }
            var targets: [FrameTarget] = []
            for _ in 0..<count {
                guard let node = r.u32(), let skip = r.optionalU64(), let members = r.u32(), Int(members) <= bytes.count / 8 else { return nil }
                var target = FrameTarget(node: Int(node), members: [], skip: skip.map(ConnectionID.init(rawValue:)))
                target.members.reserveCapacity(Int(members))
                for _ in 0..<members {
                    guard let member = r.id() else { return nil }
                    target.members.append(member)
                }
                targets.append(target)
            }
            message = r.data().map { .frame(wire: $0, shared: shared == 1, token: token, supersedes: supersedes, targets: targets) }
        case 5:
            guard let connection = r.id(), let code = r.u16(), let reason = r.string() else { return nil }
            message = .close(connection, code: code, reason: reason)
        case 6:
            guard let connection = r.id(), let session = r.optionalString() else { return nil }
            message = .membership(connection, session: session)
        case 7:
            message = r.string().map { .subscribed(session: $0) }
        case 8:
            message = r.string().map { .unsubscribed(session: $0) }
        default:
            return nil
        }
        guard let message, r.atEnd else { return nil }
        return (Int(node), message)
    }

    private struct Writer {
        var bytes: [UInt8] = []
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func u16(_ v: UInt16) { bytes.append(UInt8(v >> 8)); bytes.append(UInt8(v & 0xFF)) }
        mutating func u32(_ v: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((v >> UInt32(shift)) & 0xFF)) } }
        mutating func u64(_ v: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((v >> UInt64(shift)) & 0xFF)) } }
        mutating func data(_ v: [UInt8]) { u32(UInt32(v.count)); bytes.append(contentsOf: v) }
        mutating func string(_ v: String) { data(Array(v.utf8)) }
        mutating func optional(_ v: String?) { u8(v == nil ? 0 : 1); if let v { string(v) } }
        mutating func optional(_ v: UInt64?) { u8(v == nil ? 0 : 1); if let v { u64(v) } }
        mutating func id(_ v: ConnectionID) { u64(v.rawValue) }
        mutating func origin(_ v: RemoteConnection) { u32(UInt32(v.node)); id(v.connection) }
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0
        var atEnd: Bool { at == bytes.count }

        mutating func u8() -> UInt8? {
            guard at < bytes.count else { return nil }
            defer { at += 1 }
            return bytes[at]
        }
        mutating func u16() -> UInt16? { fixed(2).map { UInt16(truncatingIfNeeded: $0) } }
        mutating func u32() -> UInt32? { fixed(4).map { UInt32(truncatingIfNeeded: $0) } }
        mutating func u64() -> UInt64? { fixed(8) }
        mutating func id() -> ConnectionID? { u64().map(ConnectionID.init(rawValue:)) }
        private mutating func fixed(_ count: Int) -> UInt64? {
            guard bytes.count - at >= count else { return nil }
            defer { at += count }
            return bytes[at..<at + count].reduce(0) { $0 << 8 | UInt64($1) }
        }
        mutating func data() -> [UInt8]? {
            guard let count = u32().map(Int.init), bytes.count - at >= count else { return nil }
            defer { at += count }
            return Array(bytes[at..<at + count])
        }
        mutating func string() -> String? {
            data().flatMap { String(validating: $0, as: UTF8.self) }
        }
        mutating func optionalString() -> String?? {
            guard let flag = u8() else { return nil }
            if flag == 0 { return .some(nil) }
            return string().map { .some($0) }
        }
        mutating func optionalU64() -> UInt64?? {
            guard let flag = u8() else { return nil }
            if flag == 0 { return .some(nil) }
            return u64().map { .some($0) }
        }
        mutating func origin() -> RemoteConnection? {
            guard let node = u32(), let connection = id() else { return nil }
            return RemoteConnection(node: Int(node), connection: connection)
        }
    }
}
