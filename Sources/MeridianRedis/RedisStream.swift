internal import CHiredis
import Glibc

/// The bytes under a Redis connection: a TCP socket, with TLS over it (OpenSSL) for
/// `rediss://`. Blocking reads and writes, each waiting at most the connection's timeout; one
/// thread at a time.
final class RedisStream {
    let descriptor: Int32
    private let tls: (context: OpaquePointer, ssl: OpaquePointer)?

    /// Connects to `host:port` within `timeout` (each address the name resolves to in turn), then
    /// makes the TLS handshake when `tls` is set, verifying the server's certificate and name.
    init(host: String, port: Int, tls settings: RedisTLS?, timeout: Duration) throws(RedisError) {
        descriptor = try Self.connect(host: host, port: port, timeout: timeout)
        guard let settings else {
            tls = nil
            return
        }
        do throws(RedisError) {
            tls = try Self.handshake(descriptor, host: host, settings: settings)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    deinit {
        if let tls {
            SSL_shutdown(tls.ssl)
            SSL_free(tls.ssl)
            SSL_CTX_free(tls.context)
        }
        Glibc.close(descriptor)
    }

    /// Writes every byte of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(RedisError) {
        var done = 0
        while done < bytes.count {
            let rest = bytes.count - done
            let base = bytes.baseAddress! + done
            if let tls {
                let n = SSL_write(tls.ssl, base, Int32(min(rest, Int(Int32.max))))
                guard n > 0 else { throw Self.tlsFailure(tls.ssl, n, doing: "write") }
                done += Int(n)
            } else {
                let n = send(descriptor, base, rest, Int32(MSG_NOSIGNAL))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw RedisError(.unreachable, Self.errnoText(doing: "write")) }
                done += n
            }
        }
    }

    /// Reads what has arrived into `buffer` (waiting, up to the timeout, only if nothing has);
    /// the count read, never zero: the end of the stream throws.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RedisError) -> Int {
        while true {
            if let tls {
                let n = SSL_read(tls.ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
                guard n > 0 else { throw Self.tlsFailure(tls.ssl, n, doing: "read") }
                return Int(n)
            }
            let n = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if n < 0, errno == EINTR { continue }
            if n == 0 { throw RedisError(.unreachable, "Server closed the connection") }
            guard n > 0 else { throw RedisError(.unreachable, Self.errnoText(doing: "read")) }
            return n
        }
    }

    /// Bytes TLS has decrypted and not handed out yet: readable without the socket polling so.
    var hasBuffered: Bool { tls.map { SSL_pending($0.ssl) > 0 } ?? false }

    /// For a stream that expects nothing unasked: whether it has ended (or holds something it
    /// should not), looking without waiting. Over TLS, records that carry no data (a TLS 1.3
    /// session ticket) may arrive unasked: they are taken, and do not count.
    var hasEnded: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 0) != 0 else { return false }
        guard let tls else { return true }
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        var byte: UInt8 = 0
        let n = SSL_read(tls.ssl, &byte, 1)
        if n > 0 { return true }
        let error = SSL_get_error(tls.ssl, n)
        ERR_clear_error()
        return error != mrd_ssl_error_want_read() && error != mrd_ssl_error_want_write()
    }

    // MARK: Connecting

    private static func connect(host: String, port: Int, timeout: Duration) throws(RedisError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw RedisError(.unreachable, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            let fd = socket(entry.pointee.ai_family, entry.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), entry.pointee.ai_protocol)
            guard fd >= 0 else {
                reason = errnoText(doing: "socket")
                continue
            }
            if let failure = connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen, timeout: timeout) {
                reason = failure
                Glibc.close(fd)
                continue
            }
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, socklen_t(MemoryLayout<Int32>.size))
            var tv = timeval(timeout)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            return fd
        }
        throw RedisError(.unreachable, reason)
    }

    /// Connects `fd` within `timeout`; nil, or why it failed.
    private static func connect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, timeout: Duration) -> String? {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        if Glibc.connect(fd, address, length) != 0 {
            guard errno == EINPROGRESS else { return errnoText(doing: "connect") }
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let (seconds, attoseconds) = timeout.components
            let milliseconds = Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
            var ready: Int32
            repeat { ready = poll(&entry, 1, milliseconds) } while ready < 0 && errno == EINTR
            guard ready > 0 else { return ready == 0 ? "Connection timed out" : errnoText(doing: "connect") }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
            guard error == 0 else { return String(cString: strerror(error)) }
        }
        _ = fcntl(fd, F_SETFL, flags)
        return nil
    }

    private static func handshake(_ fd: Int32, host: String, settings: RedisTLS) throws(RedisError) -> (OpaquePointer, OpaquePointer) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw RedisError(.unexpected, "TLS: \(openSSLText())") }
        var ssl: OpaquePointer?
        do throws(RedisError) {
            _ = mrd_ssl_ctx_min_tls12(context)
            SSL_CTX_set_verify(context, mrd_ssl_verify_peer(), nil)
            if let ca = settings.caFile {
                guard SSL_CTX_load_verify_locations(context, ca, nil) == 1 else { throw RedisError(.unexpected, "TLS: cannot read the CA file \(ca): \(openSSLText())") }
            } else {
                SSL_CTX_set_default_verify_paths(context)
            }
            if let certificate = settings.certificateFile, let key = settings.keyFile {
                guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                    throw RedisError(.unexpected, "TLS: cannot read the client certificate \(certificate): \(openSSLText())")
                }
                guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1, SSL_CTX_check_private_key(context) == 1 else {
                    throw RedisError(.unexpected, "TLS: cannot use the client key \(key): \(openSSLText())")
                }
            }
            guard let made = SSL_new(context) else { throw RedisError(.unexpected, "TLS: \(openSSLText())") }
            ssl = made
            SSL_set_fd(made, fd)
            // The certificate must name the host: its address when the host is one, else its name
            // (sent as SNI too).
            if isAddress(host) {
                X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(made), host)
            } else {
                _ = mrd_ssl_set_server_name(made, host)
                SSL_set1_host(made, host)
            }
            let status = SSL_connect(made)
            guard status == 1 else {
                let verify = SSL_get_verify_result(made)
                if verify != X509_V_OK { throw RedisError(.unreachable, "TLS handshake: \(String(cString: X509_verify_cert_error_string(verify)))") }
                throw tlsFailure(made, status, doing: "handshake")
            }
            return (context, made)
        } catch {
            if let ssl { SSL_free(ssl) }
            SSL_CTX_free(context)
            throw error
        }
    }

    private static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    // MARK: Failures

    private static func tlsFailure(_ ssl: OpaquePointer, _ status: Int32, doing what: String) -> RedisError {
        let error = SSL_get_error(ssl, status)
        let text: String
        if error == mrd_ssl_error_zero_return() || (status == 0 && ERR_peek_error() == 0) {
            text = "Server closed the connection"
        } else if error == mrd_ssl_error_want_read() || error == mrd_ssl_error_want_write() {
            text = "Resource temporarily unavailable (a timeout)"
        } else if ERR_peek_error() != 0 {
            text = "TLS \(what): \(openSSLText())"
        } else {
            text = errnoText(doing: what)
        }
        ERR_clear_error()
        return RedisError(.unreachable, text)
    }

    private static func openSSLText() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "unknown error" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func errnoText(doing what: String) -> String {
        errno == EAGAIN || errno == EWOULDBLOCK ? "Resource temporarily unavailable (a timeout)" : String(cString: strerror(errno))
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
