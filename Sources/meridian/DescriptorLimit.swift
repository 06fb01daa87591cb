#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// The process's open-descriptor limit (RLIMIT_NOFILE): every connection holds one, and a
/// process often starts with a soft limit of 1,024 under a much higher hard limit.
enum DescriptorLimit {
    /// Descriptors kept besides connections (listening socket, storage, logs, lws's pipe).
    static let reserve: UInt64 = 64

    /// Raises the soft limit to the hard limit and logs what it got; warns when it cannot, or
    /// when the limit is too low for `maxConnections`.
    static func raise(for maxConnections: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(resourceKind, &limit) == 0 else {
            logger.warning("cannot read the open-descriptor limit (errno \(errno)); it stays as it is")
            return
        }
        let before = limit.rlim_cur
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resourceKind, &raised) == 0 {
                limit = raised
            } else {
                logger.warning("cannot raise the open-descriptor limit from \(before) to \(limit.rlim_max) (errno \(errno))")
            }
        }
        let now = UInt64(limit.rlim_cur)
        logger.info("open-descriptor limit \(now) (was \(before), hard limit \(limit.rlim_max))")
        let needed = UInt64(max(maxConnections, 0)) + reserve
        if now < needed {
            logger.warning(
                "open-descriptor limit \(now) is below --max-connections \(maxConnections) + \(reserve): connections past about \(now > reserve ? now - reserve : 0) will be refused; raise the hard limit (ulimit -Hn, LimitNOFILE=)")
        }
    }

    #if canImport(Glibc)
    private static let resourceKind = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceKind = RLIMIT_NOFILE
    #endif
}
