import Foundation
import MeridianRedis
import MeridianTesting
import Testing

/// The Redis client over TLS (`rediss://`) against a real `redis-server` that speaks TLS only.
@Suite("Redis over TLS")
struct RedisTLSTests {
    @Test func callsPipelinesAndPubSubGoOverTLSVerifiedByTheGivenCA() throws {
        let certificates = try TestCertificates()
        let redis = try RedisServerProcess(tls: certificates)
        let address = try RedisAddress.parse(redis.url).get()
        #expect(address.tls?.caFile == certificates.ca)
        let client = RedisClient(address: address)
        #expect(try client.call(["PING"]) == .status("PONG"))
        // A payload larger than one TLS record, and a pipeline whose replies span several.
        let payload = [UInt8]((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        let replies = try client.pipeline([[Array("SET".utf8), Array("big".utf8), payload], [Array("GET".utf8), Array("big".utf8)]] + (0..<500).map { _ in [Array("INCR".utf8), Array("n".utf8)] })
        #expect(replies[0] == .status("OK"))
        #expect(replies[1] == .string(payload))
        #expect(replies.last == .integer(500))

        let heard = HeardEvents()
        let subscriber = RedisSubscriber(address: address) { heard.record($0) }
        defer { subscriber.stop() }
        subscriber.subscribe("a")
        subscriber.waitUntilSubscribed("a")
        let publisher = RedisPublisher(address: address) { _, _ in }
        for i in 0..<300 { publisher.publish(Array("m\(i)".utf8), to: "a") }
        publisher.stop()
        #expect(publisher.counts.published == 300)
        #expect(heard.wait(for: 301) == ["connected"] + (0..<300).map { "a:m\($0)" })
        // The client's connection again: the session tickets TLS 1.3 sent it unasked did not end it.
        #expect(try client.call(["GET", "n"]).text == "500")
    }

    @Test func aServerWhoseCertificateTheCADidNotSignOrThatNamesAnotherHostIsRefused() throws {
        let certificates = try TestCertificates(serverAddress: false)
        let other = try TestCertificates()
        let redis = try RedisServerProcess(tls: certificates)
        // Signed by another CA.
        let foreign = RedisClient(address: RedisAddress(host: "localhost", port: redis.port, tls: RedisTLS(caFile: other.ca)))
        let unsigned = #expect(throws: RedisError.self) { try foreign.call(["PING"]) }
        #expect(unsigned?.kind == .unreachable)
        #expect(unsigned?.message.contains("certificate") == true, "\(String(describing: unsigned))")
        // Signed by the CA, but for localhost only: 127.0.0.1 is not its name.
        let byAddress = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port, tls: RedisTLS(caFile: certificates.ca)))
        let misnamed = #expect(throws: RedisError.self) { try byAddress.call(["PING"]) }
        #expect(misnamed?.message.contains("mismatch") == true, "\(String(describing: misnamed))")
        let byName = RedisClient(address: RedisAddress(host: "localhost", port: redis.port, tls: RedisTLS(caFile: certificates.ca)))
        #expect(try byName.call(["PING"]) == .status("PONG"))
        // Plain TCP to a TLS port gets no answer it can read.
        let plain = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port), timeout: .milliseconds(500))
        #expect(throws: RedisError.self) { try plain.call(["PING"]) }
    }

    @Test func aServerThatAsksForAClientCertificateTakesOnlyOneSignedByItsCA() throws {
        let certificates = try TestCertificates()
        let redis = try RedisServerProcess(tls: certificates, clientCertificates: true)
        let without = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port, tls: RedisTLS(caFile: certificates.ca)))
        #expect(throws: RedisError.self) { try without.call(["PING"]) }
        let with = RedisClient(address: RedisAddress(
            host: "127.0.0.1", port: redis.port,
            tls: RedisTLS(caFile: certificates.ca, certificateFile: certificates.clientCertificate, keyFile: certificates.clientKey)))
        #expect(try with.call(["PING"]) == .status("PONG"))
        let missing = RedisClient(address: RedisAddress(
            host: "127.0.0.1", port: redis.port, tls: RedisTLS(caFile: certificates.ca, certificateFile: "/nonexistent.pem", keyFile: certificates.clientKey)))
        let error = #expect(throws: RedisError.self) { try missing.call(["PING"]) }
        #expect(error?.message.contains("/nonexistent.pem") == true, "\(String(describing: error))")
    }
}
