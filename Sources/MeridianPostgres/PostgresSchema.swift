import PostgresNIO

/// The store's tables, created when a store opens if they are missing. Nodes that open
/// the same database at once take turns (a transaction-scoped advisory lock), so that
/// two `CREATE TABLE IF NOT EXISTS` never race.
///
/// `sessions.fence` is the fencing number of the last owner that wrote the session
/// (0: none given); bodies are JSON text in the shapes of Protocol v1 (`StoredForm`),
/// as in the SQLite store. A deleted session keeps its row, `deleted` and without
/// annotations, so that its fence outlives it: a former owner's late write cannot bring
/// it back. Reads and lists skip such rows; a create over one takes it again.
enum PostgresSchema {
    /// The advisory lock key of schema changes: "meridian" in ASCII.
    static let lockKey: Int64 = 0x6D65_7269_6469_616E

    static func create(on connection: BlockingConnection) throws {
        try connection.transaction {
            try connection.run("SELECT pg_advisory_xact_lock(\(lockKey))")
            try connection.run("""
                CREATE TABLE IF NOT EXISTS sessions (
                    id text PRIMARY KEY,
                    settings text NOT NULL,
                    callout text NULL,
                    seq bigint NOT NULL,
                    epoch text NOT NULL,
                    fence bigint NOT NULL DEFAULT 0,
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            try connection.run("""
                CREATE TABLE IF NOT EXISTS annotations (
                    session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    id text NOT NULL,
                    body text NOT NULL,
                    PRIMARY KEY (session_id, id)
                )
                """)
            // Each participant's undo history, so an undo works at a session's next owner.
            try connection.run("""
                CREATE TABLE IF NOT EXISTS undo_histories (
                    session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    participant text NOT NULL,
                    body text NOT NULL,
                    PRIMARY KEY (session_id, participant)
                )
                """)
            // The event log of every session, shared by the nodes (positions from one sequence).
            try connection.run("""
                CREATE TABLE IF NOT EXISTS event_log (
                    position bigserial PRIMARY KEY,
                    session_id text NOT NULL,
                    epoch text NOT NULL,
                    seq bigint NOT NULL,
                    time_ms bigint NOT NULL,
                    kind smallint NOT NULL,
                    body text NOT NULL
                )
                """)
            try connection.run("ALTER TABLE sessions ADD COLUMN IF NOT EXISTS deleted boolean NOT NULL DEFAULT false")
            try connection.run("CREATE INDEX IF NOT EXISTS event_log_by_session ON event_log (session_id, position)")
            try connection.run("CREATE INDEX IF NOT EXISTS event_log_by_time ON event_log (time_ms)")
        }
    }
}
