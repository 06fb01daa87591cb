import Foundation
import MeridianRedis
import MeridianSync
import MeridianTesting
import Testing

/// The Redis client against a real `redis-server`.
@Suite struct RedisClientTests {
    @Test func callsAndPipelinesGetTheirRepliesInOrder() throws {
        let redis = try RedisServerProcess()
        let client = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port))
        #expect(try client.call(["SET", "k", "v"]) == .status("OK"))
        #expect(try client.call(["GET", "k"]).text == "v")
        #expect(try client.call(["GET", "missing"]) == .null)
        #expect(try client.call(["INCR", "n"]) == .integer(1))
        if case .error(let message) = try client.call(["INCR", "k"]) {
            #expect(message.contains("not an integer"))
        } else {
            Issue.record("INCR of a string should be an error reply")
        }
        let replies = try client.pipeline([["INCR", "n"], ["INCR", "n"], ["LRANGE", "none", "0", "-1"]].map { $0.map { Array($0.utf8) } })
        #expect(replies == [.integer(2), .integer(3), .array([])])
        // Bytes go through as they are, zero bytes and empty arguments included.
        let payload: [UInt8] = [0, 1, 2, 255, 0]
        _ = try client.pipeline([[Array("SET".utf8), Array("bytes".utf8), payload], [Array("SET".utf8), Array("empty".utf8), []]])
        #expect(try client.call(["GET", "bytes"]) == .string(payload))
        #expect(try client.call(["GET", "empty"]) == .string([]))
    }

    @Test func anUnreachableServerIsAClearErrorAndARestartedOneIsUsedAgain() throws {
        let redis = try RedisServerProcess()
        let client = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port), timeout: .milliseconds(500))
        #expect(try client.call(["PING"]) == .status("PONG"))
        redis.stop()
        let error = #expect(throws: RedisError.self) { try client.call(["PING"]) }
        #expect(error?.kind == .unreachable)
        #expect(error?.message.contains("redis://127.0.0.1:\(redis.port)") == true)
        try redis.start()
        #expect(try client.call(["PING"]) == .status("PONG"))
    }

    @Test func aPausedServerTimesOut() throws {
        let redis = try RedisServerProcess()
        let client = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port), timeout: .milliseconds(300))
        #expect(try client.call(["PING"]) == .status("PONG"))
        redis.pause()
        defer { redis.resume() }
        let error = #expect(throws: RedisError.self) { try client.call(["PING"]) }
        #expect(error?.kind == .unreachable)
    }

    @Test func addressesParse() throws {
        #expect(try RedisAddress.parse("redis://10.0.0.5:6380").get() == RedisAddress(host: "10.0.0.5", port: 6380))
        #expect(try RedisAddress.parse("redis://redis").get() == RedisAddress(host: "redis", port: 6379))
        #expect(try RedisAddress.parse("redis://[::1]:7000/").get() == RedisAddress(host: "::1", port: 7000))
        #expect(try RedisAddress.parse("redis://maps:p%40ss@h:1/2").get() == RedisAddress(host: "h", port: 1, user: "maps", password: "p@ss", database: 2))
        #expect(try RedisAddress.parse("redis://:s3cret@h").get() == RedisAddress(host: "h", password: "s3cret"))
        #expect(RedisAddress(host: "h", user: "maps", password: "s3cret", database: 3).description == "redis://maps:***@h:6379/3")
        #expect(try RedisAddress.parse("rediss://h").get() == RedisAddress(host: "h", tls: RedisTLS()))
        #expect(try RedisAddress.parse("rediss://:s3cret@h:6380/1?cacert=/etc/ca.pem&cert=/c.pem&key=/k%20y.pem").get()
            == RedisAddress(host: "h", port: 6380, password: "s3cret", database: 1,
                            tls: RedisTLS(caFile: "/etc/ca.pem", certificateFile: "/c.pem", keyFile: "/k y.pem")))
        #expect(RedisAddress(host: "h", password: "s3cret", tls: RedisTLS()).description == "rediss://:***@h:6379")
        for bad in ["http://x:1", "redis://", "redis://h:0", "redis://h:99999", "redis://u@h:1", "redis://u:@h", "redis://h:1/x",
                    "redis://:s3cret@h?cacert=/ca.pem", "rediss://:s3cret@h?cert=/c.pem", "rediss://:s3cret@h?verify=no", "rediss://h?cacert="] {
            let error = #expect(throws: RedisError.self, "\(bad)") { try RedisAddress.parse(bad).get() }
            #expect(error?.message.contains("s3cret") == false)
        }
        let refused = #expect(throws: RedisError.self) { try RedisAddress.parse("redis://maps:s3cret@h:1/x").get() }
        #expect(refused?.message == "cluster address redis://maps:***@h:1/x: the database must be a number, as in redis://HOST:PORT/0")
    }

    @Test func aPasswordAndAnACLUserLogIn() throws {
        let redis = try RedisServerProcess(options: ["--requirepass", "s3cret", "--user", "maps", "on", ">m4ps", "~meridian:*", "&*", "+@all"])
        let port = redis.port
        // The default user with its password, and an ACL user (Redis 6) in database 1.
        let byPassword = RedisClient(address: RedisAddress(host: "127.0.0.1", port: port, password: "s3cret"))
        #expect(try byPassword.call(["SET", "meridian:x", "1"]) == .status("OK"))
        let byUser = RedisClient(address: try RedisAddress.parse("redis://maps:m4ps@127.0.0.1:\(port)/1").get())
        #expect(try byUser.call(["SET", "meridian:x", "2"]) == .status("OK"))
        #expect(try byPassword.call(["GET", "meridian:x"]) == .string(Array("1".utf8)), "database 1 is not database 0")
        // A wrong password is refused, by name, without the password.
        let wrong = RedisClient(address: RedisAddress(host: "127.0.0.1", port: port, user: "maps", password: "nope"))
        let error = #expect(throws: RedisError.self) { try wrong.call(["PING"]) }
        #expect(error?.kind == .replied && error?.message.contains("AUTH refused") == true, "\(String(describing: error))")
        #expect(error?.message.contains("nope") == false)
        // Without one, nothing is allowed.
        let none = RedisClient(address: RedisAddress(host: "127.0.0.1", port: port))
        let anonymous = try none.call(["GET", "meridian:x"])
        #expect({ if case .error(let text) = anonymous { text.hasPrefix("NOAUTH") } else { false } }(), "\(anonymous)")
    }
}

/// Publisher and subscriber against a real `redis-server`.
@Suite struct RedisPubSubTests {
    /// A subscriber of `channel` that tries again every 50 ms when cut off, once Redis confirmed
    /// the subscription, and what it hears.
    static func listening(to channel: String, at address: RedisAddress) -> (RedisSubscriber, HeardEvents) {
        let heard = HeardEvents()
        let subscriber = RedisSubscriber(address: address, retry: .milliseconds(50)) { heard.record($0) }
        subscriber.subscribe(channel)
        subscriber.waitUntilSubscribed(channel)
        return (subscriber, heard)
    }

    @Test func messagesArriveInPublishOrderOnEveryChannelSubscribed() throws {
        let redis = try RedisServerProcess()
        let address = RedisAddress(host: "127.0.0.1", port: redis.port)
        let heard = HeardEvents()
        let subscriber = RedisSubscriber(address: address) { heard.record($0) }
        defer { subscriber.stop() }
        subscriber.subscribe("a")
        subscriber.subscribe("b")
        subscriber.waitUntilSubscribed("a")
        subscriber.waitUntilSubscribed("b")
        let publisher = RedisPublisher(address: address) { _, _ in }
        var expected = ["connected"]
        for i in 0..<200 {
            let channel = i % 3 == 0 ? "b" : i % 3 == 1 ? "a" : "c"
            publisher.publish(Array("m\(i)".utf8), to: channel)
            if channel != "c" { expected.append("\(channel):m\(i)") }
        }
        // Stopping publishes what is queued first.
        publisher.stop()
        #expect(publisher.counts.published == 200)
        #expect(heard.wait(for: expected.count) == expected)
    }

    @Test func aSubscriberHearsOfAnOutageAndSubscribesAgainAfterIt() throws {
        let redis = try RedisServerProcess()
        let address = RedisAddress(host: "127.0.0.1", port: redis.port)
        let (subscriber, heard) = Self.listening(to: "a", at: address)
        defer { subscriber.stop() }
        #expect(heard.wait(for: 1) == ["connected"])
        redis.stop()
        #expect(heard.wait(for: 2) == ["connected", "disconnected"])
        try redis.start()
        #expect(heard.wait(for: 3) == ["connected", "disconnected", "connected"])
        let client = RedisClient(address: address)
        #expect(try client.call(["PUBLISH", "a", "after"]) == .integer(1))
        #expect(heard.wait(for: 4).last == "a:after")
    }

    @Test func aPublisherWhoseIdleConnectionARedisRestartClosedLosesNothingAfterIt() throws {
        let redis = try RedisServerProcess()
        let address = RedisAddress(host: "127.0.0.1", port: redis.port)
        let (subscriber, heard) = Self.listening(to: "a", at: address)
        defer { subscriber.stop() }
        let lost = Locked<[String]>([])
        let publisher = RedisPublisher(address: address) { messages, _ in lost.withLock { $0.append(contentsOf: messages.map(\.channel)) } }
        defer { publisher.stop() }
        publisher.publish(Array("before".utf8), to: "a")
        #expect(heard.wait(for: 2) == ["connected", "a:before"])
        // Redis restarts while the publisher's connection is idle.
        redis.stop()
        #expect(heard.wait(for: 3).last == "disconnected")
        try redis.start()
        #expect(heard.wait(for: 4).last == "connected")
        publisher.publish(Array("after".utf8), to: "a")
        #expect(heard.wait(for: 5).last == "a:after")
        #expect(lost.withLock { $0 }.isEmpty, "published into a connection Redis had closed")
    }

    @Test func aPublisherReportsWhatItCouldNotPublish() throws {
        let redis = try RedisServerProcess()
        let address = RedisAddress(host: "127.0.0.1", port: redis.port)
        redis.stop()
        let lost = Locked<[String]>([])
        let publisher = RedisPublisher(address: address, timeout: .milliseconds(300)) { messages, _ in
            lost.withLock { $0.append(contentsOf: messages.map(\.channel)) }
        }
        publisher.publish([1], to: "x")
        publisher.stop()
        #expect(lost.withLock { $0 } == ["x"])
        #expect(publisher.counts.failures == 1)
    }
}
