import DequeModule
import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// What a ``WebSocketClientGroup`` is on its service thread: the lws context, the connections
/// and what they still have to write, the handler. Made on the service thread and confined to
/// it, it is not `Sendable`: the handler's callbacks get it (as a channel handler gets its
/// context), and other threads reach it only through ``WebSocketClientGroup/execute(_:)``. The
/// service thread holds it from the context's creation until after `lws_context_destroy`.
public final class ClientGroupLoop {
    /// A connection's state, held by reference: the read path reaches it once per read and
    /// changes it in place.
    final class Link {
        var wsi: OpaquePointer?
        /// Encoded frames (or the upgrade request) not yet written.
        var outgoing: [UInt8] = []
        var buffer = WriteBuffer(headroom: Int(mrd_lws_pre()))
        var reader = FrameReader()
        var peerClose: UInt16?
        /// A close frame is queued: nothing more is sent.
        var closing = false
        /// Hang up once the queue is written (after answering the server's close).
        var closeAfterWrite = false
        var opened = false
        /// With TLS (the ws role): whole messages not yet written, and the one being read.
        var messages = Deque<[UInt8]>()
        var partial: [UInt8] = []
        var closeCode: UInt16 = 1000

        init(reader: FrameReader) { self.reader = reader }
    }

    /// Bytes lws reads from a socket at once.
    static let readBufferSize = 64 * 1024

    /// The group this is the loop of: the handle to give other threads.
    public let group: WebSocketClientGroup
    /// The configuration the group was created with.
    public let configuration: ClientGroupConfiguration
    /// The handler the group was made with; nil once the loop has ended.
    var handler: (any ClientGroupHandler)?
    var context: OpaquePointer?
    /// The libev loop of the context (nil with poll): lws does not free a foreign loop.
    var libevLoop: UnsafeMutableRawPointer?
    var links: [Int: Link] = [:]
    let allocations = CAllocations()
    /// host, the RAW method, subprotocol, path and TLS server name as C strings, allocated once for every connect.
    var cStrings: (host: UnsafeMutablePointer<CChar>, raw: UnsafeMutablePointer<CChar>, protocolName: UnsafeMutablePointer<CChar>,
                   path: UnsafeMutablePointer<CChar>, serverName: UnsafeMutablePointer<CChar>?)?
    /// The source addresses as C strings, allocated with ``cStrings``.
    var sourceCStrings: [UnsafeMutablePointer<CChar>] = []
    /// Set when a connection is left in the middle of a frame by the current service call.
    var messageInFlight = false
    /// xorshift state for masking keys.
    var maskState = UInt64.random(in: 1...UInt64.max)

    init(group: WebSocketClientGroup, handler: (any ClientGroupHandler)?) {
        self.group = group
        self.configuration = group.configuration
        self.handler = handler
    }

    deinit {
        assert(context == nil, "ClientGroupLoop released while its context lives")
    }

    /// Open connections.
    public var connectionCount: Int { links.count }
}
