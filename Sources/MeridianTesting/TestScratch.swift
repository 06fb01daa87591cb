import Foundation

/// Directories for one test process's files (configurations, certificates), all under one parent
/// that is removed when the process exits: a test run leaves nothing in the temporary directory.
public enum TestScratch {
    private static let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("meridian-tests-\(ProcessInfo.processInfo.processIdentifier)").path
    private static let made: Bool = {
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestScratch.path) }
        return true
    }()

    /// A new, empty directory of its own, named `prefix`-UUID.
    public static func directory(_ prefix: String) throws -> URL {
        _ = made
        let url = URL(fileURLWithPath: path).appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
