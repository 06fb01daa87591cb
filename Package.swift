// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Meridian",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "meridian", targets: ["meridian"]),
        .library(name: "MeridianCore", targets: ["MeridianCore"]),
        .library(name: "MeridianProtocol", targets: ["MeridianProtocol"]),
        .library(name: "MeridianClient", targets: ["MeridianClient"]),
        .library(name: "MeridianMapBinding", targets: ["MeridianMapBinding"]),
        .library(name: "MeridianMapKit", targets: ["MeridianMapKit"]),
        .library(name: "MeridianServer", targets: ["MeridianServer"]),
        .library(name: "MeridianHTTP", targets: ["MeridianHTTP"]),
        .library(name: "MeridianAPI", targets: ["MeridianAPI"]),
        // For the libFuzzer executables of FuzzTesting/, which build it with their sanitizers.
        .library(name: "FuzzHarness", targets: ["FuzzHarness"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-transport-services", from: "1.28.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
    ],
    targets: [
        // libwebsockets, imported (`internal import`) only by the three transport targets below.
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // hiredis and OpenSSL (TLS to Redis), imported (`internal import`) only by MeridianRedis.
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev", "libssl-dev"])]
        ),
        // A small Redis client on hiredis' reader, over TCP or TLS: calls and pipelines, a
        // publisher and a subscriber thread.
        .target(name: "MeridianRedis", dependencies: ["CHiredis", "MeridianSync"]),
        // Locked<Value>: the one lock of every other target, a Mutex that ThreadSanitizer sees;
        // WorkerThread<Job>: the worker thread (a wakeable queue) of every target but the lws loops.
        .target(name: "MeridianSync"),
        // The session model and its rules: no I/O, no clocks, no threads.
        .target(name: "MeridianCore"),
        // Protocol v1: JSON text frames <-> core commands and events.
        .target(name: "MeridianProtocol", dependencies: ["MeridianCore"]),
        // What the server and the client transports share: the libwebsockets service thread
        // (lifecycle, cross-thread work queue, tick), C allocations, lws logging, TransportError.
        .target(name: "MeridianTransportCore", dependencies: ["MeridianSync", "CLibWebSockets"]),
        // WebSocket clients on libwebsockets: one connection (WebSocketClient, under the Swift
        // client) or many on one thread (WebSocketClientGroup, for load). Nothing of the server.
        .target(
            name: "MeridianClientTransport",
            dependencies: [
                "MeridianTransportCore", "MeridianSync", "CLibWebSockets",
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // The server transport: WebSocket + HTTP on libwebsockets, one service thread, framed
        // fan-out, handshake checks and admissions.
        .target(name: "MeridianTransport", dependencies: ["MeridianTransportCore", "MeridianSync", "MeridianHTTP", "MeridianProtocol", "CLibWebSockets"]),
        // Bearer tokens (JWT: HS256, ES256, RS256): who a connection is and what it may join.
        .target(
            name: "MeridianAuth",
            dependencies: ["MeridianCore", "MeridianSync", .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Crypto", package: "swift-crypto")]
        ),
        // HTTP read by pure functions, no dependencies: request lines, query strings, Content-Length.
        // Shared by the server transport and the API; the fuzzers (FuzzTesting/) drive it directly.
        .target(name: "MeridianHTTP"),
        // The HTTP API's requests read by pure functions: routes, ids, queries and bodies into
        // typed requests or refusals. No sockets, so the fuzzers drive it directly.
        .target(name: "MeridianAPI", dependencies: ["MeridianHTTP", "MeridianCore", "MeridianProtocol"]),
        // Durable sessions: the SessionStore seam, SQLite (GRDB) and in-memory stores, group commit.
        .target(
            name: "MeridianStorage",
            dependencies: [
                "MeridianCore", "MeridianProtocol", "MeridianSync",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The SessionStore seam on PostgreSQL (postgres-nio), shared by the nodes of a cluster,
        // with fencing numbers that refuse the writes of a session's former owner.
        .target(
            name: "MeridianPostgres",
            dependencies: [
                "MeridianStorage", "MeridianCore", "MeridianProtocol", "MeridianSync",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Sessions hosted on the transport: routing, history, resume.
        .target(
            name: "MeridianServer",
            dependencies: [
                "MeridianCore", "MeridianProtocol", "MeridianTransport", "MeridianStorage", "MeridianAuth", "MeridianSync",
                "MeridianRedis", "MeridianAPI",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The browser dashboard's static files, served by the server.
        .target(
            name: "MeridianDashboard",
            dependencies: ["MeridianTransport"],
            exclude: ["README.md"],
            resources: [.copy("Static")]
        ),
        // A Swift client of Protocol v1: typed messages, session mirror, reconnect and resume.
        // Two transports: the portable one on swift-websocket (SwiftNIO; every platform) and, on
        // Linux, libwebsockets. Only client code: `make check-client-deps` fails if the server creeps in.
        .target(
            name: "MeridianClient",
            dependencies: [
                "MeridianCore", "MeridianProtocol", "MeridianSync",
                .target(name: "MeridianClientTransport", condition: .when(platforms: [.linux])),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTransportServices", package: "swift-nio-transport-services",
                         condition: .when(platforms: [.macOS, .iOS, .tvOS, .visionOS, .watchOS])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The model behind an app's map view: SDK callbacks in, paced requests and what to draw out. No UI framework.
        .target(name: "MeridianMapBinding", dependencies: ["MeridianClient", "MeridianCore", "MeridianSync"]),
        // MKMapViewDelegate -> MeridianMapBinding, one screen of glue. Its source compiles on Apple
        // platforms only (`#if canImport(MapKit)`); elsewhere the module is empty.
        .target(name: "MeridianMapKit", dependencies: ["MeridianMapBinding", "MeridianCore"]),
        // A small app on the client library, as a map app depends on it (MeridianClient,
        // MeridianMapBinding): follows a drag, then drags, over the portable transport.
        .executableTarget(
            name: "meridian-follow-example",
            dependencies: ["MeridianClient", "MeridianMapBinding", "MeridianCore"],
            path: "Sources/MeridianFollowExample"
        ),
        // `meridian load`: many simulated clients on a few lws client threads, with latency histograms.
        .target(
            name: "MeridianLoad",
            dependencies: [
                "MeridianClientTransport", "MeridianTransportCore", "MeridianSync",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // The settings of `meridian serve`, each declared once: flag, config-file key, MERIDIAN_* variable.
        .target(
            name: "MeridianSettings",
            dependencies: [.product(name: "Configuration", package: "swift-configuration")]
        ),
        .executableTarget(
            name: "meridian",
            dependencies: [
                "MeridianServer", "MeridianStorage", "MeridianPostgres", "MeridianDashboard", "MeridianLoad", "MeridianAuth", "MeridianSettings",
                "MeridianTransport", "MeridianTransportCore", "MeridianRedis", "MeridianClientTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A real server in-process on an ephemeral port, for the live test targets.
        .target(
            name: "MeridianTesting",
            dependencies: ["MeridianServer", "MeridianRedis", "MeridianSync", .product(name: "Logging", package: "swift-log")]
        ),
        // The fuzzers' checks, as pure functions of the input bytes (FuzzTesting/README.md): here so that
        // `swift test` replays every kept crash input and seed (FuzzHarnessTests) in the one build.
        .target(
            name: "FuzzHarness",
            dependencies: ["MeridianCore", "MeridianProtocol", "MeridianHTTP", "MeridianAPI"],
            path: "FuzzTesting/Sources/FuzzHarness"
        ),
        .testTarget(name: "FuzzHarnessTests", dependencies: ["FuzzHarness"], path: "FuzzTesting/Tests/FuzzHarnessTests"),
        .testTarget(name: "MeridianSyncTests", dependencies: ["MeridianSync"]),
        .testTarget(name: "MeridianCoreTests", dependencies: ["MeridianCore"]),
        .testTarget(name: "MeridianProtocolTests", dependencies: ["MeridianProtocol", "MeridianCore"]),
        .testTarget(name: "MeridianHTTPTests", dependencies: ["MeridianHTTP"]),
        .testTarget(name: "MeridianAPITests", dependencies: ["MeridianAPI", "MeridianHTTP", "MeridianCore"]),
        .testTarget(name: "MeridianTransportCoreTests", dependencies: ["MeridianTransportCore", "MeridianSync", "CLibWebSockets"]),
        .testTarget(name: "MeridianClientTransportTests", dependencies: ["MeridianClientTransport", "MeridianTransportCore", "MeridianSync", "MeridianTesting"]),
        .testTarget(
            name: "MeridianTransportTests",
            dependencies: ["MeridianTransport", "MeridianClientTransport", "MeridianTransportCore", "MeridianTesting"]
        ),
        .testTarget(name: "MeridianAuthTests", dependencies: ["MeridianAuth", "MeridianCore"]),
        // The stores: one contract for SQLite, PostgreSQL and memory, and each store's own tests.
        .testTarget(name: "MeridianStorageTests", dependencies: ["MeridianStorage", "MeridianPostgres", "MeridianCore", "MeridianSync"]),
        .testTarget(
            name: "MeridianClientTests",
            dependencies: ["MeridianClient", "MeridianMapBinding", "MeridianServer", "MeridianTesting", "MeridianClientTransport", "MeridianCore", "MeridianProtocol", "MeridianAuth"]
        ),
        .testTarget(name: "MeridianRedisTests", dependencies: ["MeridianRedis", "MeridianSync", "MeridianTesting"]),
        .testTarget(name: "MeridianSettingsTests", dependencies: ["MeridianSettings", "MeridianTesting"]),
        .testTarget(name: "MeridianLoadTests", dependencies: ["MeridianLoad", "MeridianServer", "MeridianTesting", "MeridianAuth"]),
        .testTarget(
            name: "MeridianServerTests",
            dependencies: [
                "MeridianServer", "MeridianTransport", "MeridianClientTransport", "MeridianTransportCore", "MeridianProtocol",
                "MeridianCore", "MeridianStorage", "MeridianTesting", "MeridianAuth", "MeridianClient", "MeridianSync",
            ]
        ),
    ]
)

// `MERIDIAN_SANITIZE=thread` (make test-tsan): this package's own targets built with that sanitizer in
// the ordinary build directory, while its dependencies keep the objects they have there. A race
// between two of Meridian's threads is seen wherever it runs; one inside a dependency is not
// looked for, and the dependencies are not built a second time, instrumented, in a directory of
// their own (BoringSSL twice, NIO, GRDB: most of a build).
//
// The pure targets (values and functions, no threads, no I/O) and the test targets that never run under
// the sanitizer (`make test-tsan` runs TSAN_TESTS) keep their plain objects: they are compiled once for
// both builds. A caller's access to their values (an inout, a mutating call) is still instrumented in
// the caller, so a race on a session's state between two threads is still seen.
let plainUnderSanitizer: Set<String> = [
    "MeridianCore", "MeridianProtocol", "MeridianHTTP", "MeridianAPI",
    "MeridianCoreTests", "MeridianProtocolTests", "MeridianHTTPTests", "MeridianAPITests", "MeridianSettingsTests",
    "FuzzHarness", "FuzzHarnessTests",
]
if let sanitizer = Context.environment["MERIDIAN_SANITIZE"], !sanitizer.isEmpty {
    for target in package.targets where target.type != .system && !plainUnderSanitizer.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=\(sanitizer)"])]
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=\(sanitizer)"])]
    }
}
