import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// Calls the server's tick from its sul timer.
private func tickCallback(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let user = mrd_timer_from_sul(sul)?.pointee.user else { return }
    Unmanaged<WebSocketServer>.fromOpaque(user).takeUnretainedValue().tick()
}

extension WebSocketServer {
    /// The body of the service thread: create the context, serve until drained, destroy it.
    func runServiceLoop() {
        serviceThread = pthread_self()
        guard let context = makeContext() else {
            allocations.freeAll()
            let tls = configuration.usesTLS ? " (or the TLS certificate and key were refused)" : ""
            let error = TransportError.bindFailed(
                "could not create a listening context on \(configuration.host):\(configuration.port)\(tls)")
            finish(with: .failed(error))
            return
        }
        self.context = context
        let port = Int(lws_get_vhost_listen_port(lws_get_vhost_by_name(context, Self.vhostName)))
        guard port > 0 else {
            lws_context_destroy(context)
            self.context = nil
            allocations.freeAll()
            finish(with: .failed(.bindFailed("no listening port on \(configuration.host):\(configuration.port)")))
            return
        }

        let timer = allocations.zeroed(mrd_timer.self)
        timer.pointee.user = retainedSelf?.toOpaque()
        tickTimer = timer
        scheduleTick()

        lock.lock()
        wakeableContext = context
        state = .running(port: port)
        lock.broadcast()
        lock.unlock()

        while !exitLoop {
            drainPendingWork()
            if exitLoop || lws_service(context, 0) < 0 { break }
        }

        // No other thread may touch the context from here on.
        lock.lock()
        wakeableContext = nil
        lock.unlock()
        mrd_timer_cancel(timer)
        // Delivers LWS_CALLBACK_CLOSED for connections still open (handler sees didClose).
        lws_context_destroy(context)
        releaseEventLoop(of: context)
        self.context = nil
        tickTimer = nil
        allocations.freeAll()
        connections.removeAll()
        httpExchanges.removeAll()
        httpBodies.removeAll()
        admitted.removeAll()
        finish(with: .finished)
    }

    /// Publishes the final state, drops the handler and the self-retain that lws held.
    private func finish(with final: LifecycleState) {
        handler = nil
        lock.lock()
        state = final
        pendingWork.removeAll()
        lock.broadcast()
        lock.unlock()
        retainedSelf?.release()
        retainedSelf = nil
    }

    func drainPendingWork() {
        lock.lock()
        let work = pendingWork
        pendingWork.removeAll(keepingCapacity: true)
        lock.unlock()
        for body in work { body() }
    }

    func scheduleTick() {
        guard let context, let tickTimer else { return }
        mrd_timer_schedule(context, tickTimer, tickCallback, lws_usec_t(configuration.tickInterval.microseconds))
    }

    func tick() {
        tickNow = now
        reportServerCloses()
        if let handler { handler.transportTick(self) }
        closeSlowConsumers()
        releaseIdleBuffers()
        if draining, connections.isEmpty || now >= drainDeadline {
            requestLoopExit()
            return
        }
        scheduleTick()
    }

    /// Stops accepting, closes every WebSocket with 1001, and lets the loop end when they are
    /// gone or the grace period is over.
    func beginDrain() {
        guard !draining else { return }
        draining = true
        drainDeadline = now + configuration.shutdownGrace
        for connection in connections.all {
            close(connection, code: 1001, reason: "server shutting down")
        }
        if connections.isEmpty { requestLoopExit() }
    }

    /// Ends the service loop after the current `lws_service`. Timers run before lws polls, so
    /// without the wake-up the poll could sleep until some unrelated lws timeout.
    func requestLoopExit() {
        exitLoop = true
        if let context { lws_cancel_service(context) }
    }

    func makeContext() -> OpaquePointer? {
        configureLWSLogging()

        let protocols = allocations.zeroed(lws_protocols.self, count: 3)
        protocols[0].name = UnsafePointer(allocations.string("http"))
        protocols[0].callback = serverCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[0].id = ProtocolID.http
        protocols[1].name = UnsafePointer(allocations.string(configuration.subprotocol))
        protocols[1].callback = serverCallback
        protocols[1].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[1].rx_buffer_size = 2 * 1024
        protocols[1].id = ProtocolID.webSocket
        // At least our largest regular write, so lws does not cut it into smaller sends.
        protocols[1].tx_packet_size = Self.writeChunk + headroom

        let retry = allocations.zeroed(lws_retry_bo_t.self)
        let ping = configuration.pingInterval.clampedSeconds
        retry.pointee.secs_since_valid_ping = ping
        retry.pointee.secs_since_valid_hangup = max(configuration.idleTimeout.clampedSeconds, ping &+ 1)

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        info.protocols = UnsafePointer(protocols)
        info.vhost_name = UnsafePointer(allocations.string(Self.vhostName))
        info.retry_and_idle_policy = UnsafePointer(retry)
        info.user = retainedSelf?.toOpaque()
        info.count_threads = 1
        info.pt_serv_buf_size = 16 * 1024
        // No LWS_SERVER_OPTION_VALIDATE_UTF8: the server checks UTF-8 itself (InboundCheck).
        info.options = 0
        // A client must finish its TCP/TLS setup and its HTTP request within this; lws drops
        // it otherwise (slowloris). timeout_secs_ah_idle bounds holding a header table.
        let handshakeSeconds = UInt32(clamping: max(configuration.handshakeTimeout.clampedSeconds, 1))
        info.timeout_secs = handshakeSeconds
        info.timeout_secs_ah_idle = handshakeSeconds
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsPrivateKeyPath {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = UnsafePointer(allocations.string(certificate))
            info.ssl_private_key_filepath = UnsafePointer(allocations.string(key))
            // HTTP/1.1 only: a WebSocket over HTTP/2 (RFC 8441) would break the pre-framed
            // LWS_WRITE_RAW writes.
            info.alpn = UnsafePointer(allocations.string("http/1.1"))
        }

        let host = configuration.host
        var ipv4 = in_addr()
        if host.isEmpty || host == "0.0.0.0" {
            info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        } else if host == "::" {
            // All interfaces, IPv6 and IPv4-mapped.
        } else {
            info.iface = UnsafePointer(allocations.string(host))
            // With IPv6 compiled in, an IPv4 literal alone would silently bind [::].
            if inet_pton(AF_INET, host, &ipv4) == 1 {
                info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
            }
        }
        var eventLoop: UnsafeMutableRawPointer?
        if configuration.eventLoop == .libev {
            guard let loop = mrd_ev_loop_new() else { return nil }
            eventLoop = loop
            let loops = allocations.zeroed(UnsafeMutableRawPointer?.self, count: 1)
            loops[0] = loop
            info.foreign_loops = loops
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.signal_cb = mrd_ignore_signal
        }
        let context = lws_create_context(&info)
        if let eventLoop {
            if let context { libevLoops.withLock { $0[context] = eventLoop } } else { mrd_ev_loop_destroy(eventLoop) }
        }
        return context
    }

    /// Frees the libev loop of a destroyed context (nothing for poll).
    func releaseEventLoop(of context: OpaquePointer) {
        if let loop = libevLoops.withLock({ $0.removeValue(forKey: context) }) { mrd_ev_loop_destroy(loop) }
    }
}

/// Each libev context's loop, freed after `lws_context_destroy` (lws does not free a foreign loop).
private let libevLoops = LockedLoops()

private final class LockedLoops: @unchecked Sendable {
    private let lock = NSLock()
    private var loops: [OpaquePointer: UnsafeMutableRawPointer] = [:]

    func withLock<T>(_ body: (inout [OpaquePointer: UnsafeMutableRawPointer]) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&loops)
    }
}

/// Values of `lws_protocols.id` telling the two protocols apart in the shared callback.
enum ProtocolID {
    static let http: UInt32 = 0
    static let webSocket: UInt32 = 1
}
