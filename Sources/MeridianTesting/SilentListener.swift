import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket listening on 127.0.0.1 that never accepts: connections complete at the kernel
/// and then hear nothing, like a server that hangs before answering the upgrade.
public final class SilentListener {
    /// The listening socket's descriptor, closed when the listener is released.
    public let fd: Int32
    /// The loopback port it listens on.
    public let port: Int

    /// Binds a socket to a free port on 127.0.0.1 and listens (backlog 16) without ever accepting; throws ``SilentListenerError`` if it cannot.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { Glibc.close(fd) }
            throw SilentListenerError(errno: errno)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Glibc.close(fd) }

    /// A port nothing listens on (bound once, then closed).
    public static func closedPort() throws -> Int {
        try SilentListener().port
    }
}

/// Why a ``SilentListener`` could not be set up: the `errno` of the socket, bind or listen call that failed.
public struct SilentListenerError: Error { public let errno: Int32 }
