import Foundation
import GRDB

/// The data directory's SQLite file, which the session store and the event logs open with
/// connection pools of their own.
enum SQLiteFile {
    /// Opens a pool on `meridian.sqlite` in `directory` (creating both if needed), each
    /// connection with `PRAGMA synchronous = synchronous`, and runs `setUp` on it.
    static func open(
        in directory: String, synchronous: String, setUp: (DatabasePool) throws -> Void
    ) throws(StorageError) -> (pool: DatabasePool, path: String) {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(SQLiteSessionStore.fileName).path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .cannotOpen(directory, "cannot create the data directory (\(error.localizedDescription))")
        }
        var config = Configuration()
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
        do {
            let pool = try DatabasePool(path: path, configuration: config)
            try setUp(pool)
            return (pool, path)
        } catch {
            throw .cannotOpen(path, reason(error))
        }
    }

    /// SQLite's message for a database error.
    static func reason(_ error: any Error) -> String {
        if let e = error as? DatabaseError { return e.message ?? "\(e.resultCode)" }
        return "\(error)"
    }
}
