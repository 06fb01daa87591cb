import MeridianCore
import MeridianPostgres
import MeridianStorage
import Testing

/// Annotation revisions in PostgreSQL: kept in the annotation bodies, and a body stored before
/// annotations had revisions loads with the record's seq.
@Suite struct PostgresRevisionTests {
    @Test func revisionsRoundTripAndOlderBodiesGetTheRecordsSeq() throws {
        let url = try PostgresFixture.database()
        let store = try PostgresSessionStore(url: url)
        let record = sampleRecord()
        try store.commit([.update(SessionUpdate(record: record, epoch: "e1"))])
        let loaded = try #require(try PostgresSessionStore(url: url).load("map-1"))
        #expect(loaded.record.annotations.map(\.revision) == record.annotations.map(\.revision))

        let postgres = try PostgresFixture.shared.get()
        try postgres.psql(url, "UPDATE annotations SET body = (body::jsonb - 'revision')::text WHERE id = 'route'")
        let older = try #require(try PostgresSessionStore(url: url).load("map-1"))
        let revisions = Dictionary(uniqueKeysWithValues: older.record.annotations.map { ($0.id, $0.revision) })
        #expect(revisions == ["pin": 42, "route": record.seq, "zone": 30])
    }
}
