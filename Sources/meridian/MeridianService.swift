import Foundation
import MeridianServer
import ServiceLifecycle

/// The running server as a service: on graceful shutdown (SIGTERM, SIGINT)
/// it stops accepting, closes every connection with 1001, commits what
/// storage still holds, and returns.
struct MeridianService: Service {
    let server: MeridianServer
    /// Printed (with a newline) when the service starts, after the group traps its signals.
    let announcement: String

    func run() async throws {
        print(announcement)
        fflush(nil)
        // Returns on graceful shutdown; throws only when the task is cancelled.
        try? await gracefulShutdown()
        server.stop()
    }
}
