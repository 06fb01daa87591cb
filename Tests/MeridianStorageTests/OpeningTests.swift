import Foundation
import MeridianStorage
import Testing

@Suite struct OpeningTests {
    @Test func aFileThatIsNotADatabaseIsRefusedWithItsPath() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let path = dir + "/" + SQLiteSessionStore.fileName
        try Data("this is not sqlite, just text long enough to fill a header ......................................".utf8)
            .write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StorageError.self) { try SQLiteSessionStore(directory: dir) }
        #expect(error?.isCannotOpen == true)
        #expect(error?.message == "cannot open the session store at \(path): file is not a database")
    }

    @Test func aDataDirectoryThatCannotBeCreatedIsRefused() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        // A regular file where a directory is needed (refused for root too, unlike permissions).
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/blocker"))
        let error = #expect(throws: StorageError.self) { try SQLiteSessionStore(directory: dir + "/blocker/data") }
        #expect(error?.isCannotOpen == true)
        #expect(error?.message.hasPrefix("cannot open the session store at \(dir)/blocker/data: cannot create the data directory") == true)
    }

    @Test func theStoreUsesWriteAheadLogging() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let store = try SQLiteSessionStore(directory: dir)
        // The log file exists while the store is open (SQLite removes it on the last close).
        withExtendedLifetime(store) {
            #expect(FileManager.default.fileExists(atPath: dir + "/" + SQLiteSessionStore.fileName + "-wal"))
        }
    }
}
