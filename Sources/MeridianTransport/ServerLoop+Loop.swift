import Foundation
import MeridianTransportCore
internal import CLibWebSockets
internal import MeridianProtocol

extension ServerLoop: ServiceLoop {
    /// Runs first on the service thread: creates the context and reads back the bound port.
    /// On failure, frees what it made and drops the handler.
    func startService() throws(TransportError) -> ServiceStart<ServerLoop, Int> {
        guard let context = makeContext() else {
            allocations.freeAll()
            handler = nil
            let tls = configuration.usesTLS ? " (or the TLS certificate and key were refused)" : ""
            throw .bindFailed(
                "could not create a listening context on \(configuration.host):\(configuration.port)\(tls)")
        }
        let port = configuration.listens ? Int(lws_get_vhost_listen_port(lws_get_vhost_by_name(context, Self.vhostName))) : configuration.port
        guard port > 0 || !configuration.listens else {
            lws_context_destroy(context)
            releaseEventLoop()
            allocations.freeAll()
            handler = nil
            throw .bindFailed("no listening port on \(configuration.host):\(configuration.port)")
        }
        self.context = context
        return ServiceStart(loop: self, context: context, ready: port, tickInterval: configuration.tickInterval)
    }

    /// After `lws_context_destroy` (which delivered LWS_CALLBACK_CLOSED, so the handler saw
    /// didClose for connections still open): frees the C memory and drops the handler.
    package func serviceDidDestroyContext() {
        releaseEventLoop()
        context = nil
        allocations.freeAll()
        connections.removeAll()
        httpExchanges.removeAll()
        httpBodies.removeAll()
        admitted.removeAll()
        handler = nil
    }

    package func serviceAfterPass() {
        servicePasses &+= 1
        afterPass()
    }

    /// Work from other threads (a relayed broadcast) may have queued writes for the end of the
    /// pass: they go now, not after a pass that may sleep.
    package func serviceAfterWork() {
        flushAtPassEnd()
        input.writesEnd = nil
        // Writes past the slice go in the next pass, which must not sleep first.
        if !input.flushes.isEmpty { dontSleepNextPass() }
    }

    /// The next pass of the event loop looks for what is ready without sleeping: work waits
    /// between passes. On the service thread.
    func dontSleepNextPass() {
        if let eventLoop {
            mrd_ev_dont_wait(eventLoop)
        } else if let context {
            lws_cancel_service(context)
        }
    }

    package func serviceTick() {
        tickNow = now
        reportServerCloses()
        if let handler { handler.transportTick(self) }
        closeSlowConsumers()
        sweepKeepalive()
        releaseIdleBuffers()
        if draining, now >= drainDeadline { requestLoopExit() }
        endDrainIfDone()
    }

    /// Stops accepting, closes every WebSocket with 1001, and lets the loop end when they are
    /// gone and every HTTP request being read or answered has had its answer written, or when
    /// the grace period is over.
    func beginDrain() {
        guard !draining else { return }
        draining = true
        drainDeadline = now + configuration.shutdownGrace
        for connection in connections.all {
            close(connection, code: CloseCode.goingAway, reason: "server shutting down")
        }
        endDrainIfDone()
    }

    /// Ends the loop of a draining server that has nothing left to finish.
    func endDrainIfDone() {
        if draining, connections.isEmpty, !httpInFlight { requestLoopExit() }
    }

    /// Ends the service loop after the current `lws_service` pass; no tick follows.
    func requestLoopExit() {
        server.serviceThread.requestExit()
    }

    func makeContext() -> OpaquePointer? {
        configureLWSLogging()

        let protocols = allocations.zeroed(lws_protocols.self, count: 4)
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
        // Requests lws does not parse as HTTP (a method it does not know, CONNECT): ServerLoop+RawHTTP.swift.
        protocols[2].name = UnsafePointer(allocations.string(Self.rawProtocolName))
        protocols[2].callback = serverCallback
        protocols[2].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[2].id = ProtocolID.rawHTTP

        // No validity timers of lws (a hang-up time of 0): the server's own keepalive pings and
        // drops quiet connections (ServerLoop+Keepalive.swift).
        let retry = allocations.zeroed(lws_retry_bo_t.self)
        retry.pointee.secs_since_valid_ping = 0
        retry.pointee.secs_since_valid_hangup = 0

        var info = lws_context_creation_info()
        info.port = configuration.listens ? Int32(configuration.port) : CONTEXT_PORT_NO_LISTEN_SERVER
        info.protocols = UnsafePointer(protocols)
        info.vhost_name = UnsafePointer(allocations.string(Self.vhostName))
        info.retry_and_idle_policy = UnsafePointer(retry)
        // Valid while the context lives: the service thread holds the server until then.
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.count_threads = 1
        info.pt_serv_buf_size = 16 * 1024
        // No LWS_SERVER_OPTION_VALIDATE_UTF8: the server checks UTF-8 itself (InboundCheck).
        info.options = UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        info.listen_accept_role = UnsafePointer(allocations.string("raw-skt"))
        info.listen_accept_protocol = UnsafePointer(allocations.string(Self.rawProtocolName))
        // A client must finish its TCP/TLS setup and its HTTP request within this; lws drops
        // it otherwise (slowloris). timeout_secs_ah_idle bounds holding a header table.
        let handshakeSeconds = UInt32(clamping: max(configuration.handshakeTimeout.clampedSeconds, 1))
        info.timeout_secs = handshakeSeconds
        info.timeout_secs_ah_idle = handshakeSeconds
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsPrivateKeyPath {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = UnsafePointer(allocations.string(certificate))
            info.ssl_private_key_filepath = UnsafePointer(allocations.string(key))
            if let clientCA = configuration.tlsClientCAPath {
                // Mutual TLS: a client without a certificate signed by these CAs fails the handshake.
                info.options |= mrd_lws_require_client_cert()
                info.ssl_ca_filepath = UnsafePointer(allocations.string(clientCA))
            }
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
            if context != nil { self.eventLoop = eventLoop } else { mrd_ev_loop_destroy(eventLoop) }
            if context != nil, configuration.handshakesPerPass > 0, !configuration.usesTLS, handshakeGate.descriptor >= 0 {
                mrd_ev_watch_set(eventLoop, handshakeGate.descriptor)
                gatesHandshakes = true
            }
        }
        return context
    }

    /// Frees the libev loop of the destroyed context (nothing for poll).
    func releaseEventLoop() {
        if let eventLoop { mrd_ev_loop_destroy(eventLoop) }
        eventLoop = nil
    }
}

/// Values of `lws_protocols.id` telling the protocols apart in the shared callback.
enum ProtocolID {
    static let http: UInt32 = 0
    static let webSocket: UInt32 = 1
    static let rawHTTP: UInt32 = 2
}

extension ServerLoop {
    static let rawProtocolName = "meridian-raw-http"
}
