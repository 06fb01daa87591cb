// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Meridian",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "meridian", targets: ["meridian"]),
        .library(name: "MeridianCore", targets: ["MeridianCore"]),
        .library(name: "MeridianProtocol", targets: ["MeridianProtocol"]),
        .library(name: "MeridianClient", targets: ["MeridianClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // libwebsockets, imported only by MeridianTransport.
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // The session model and its rules: no I/O, no clocks, no threads.
        .target(name: "MeridianCore"),
        // Protocol v1: JSON text frames <-> core commands and events.
        .target(name: "MeridianProtocol", dependencies: ["MeridianCore"]),
        // WebSocket + HTTP on libwebsockets: one service thread, framed fan-out.
        .target(
            name: "MeridianTransport",
            dependencies: [
                "CLibWebSockets",
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // Sessions hosted on the transport: routing, history, resume.
        .target(
            name: "MeridianServer",
            dependencies: [
                "MeridianCore", "MeridianProtocol", "MeridianTransport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A Swift client of Protocol v1: typed messages, session mirror, reconnect and resume.
        .target(name: "MeridianClient", dependencies: ["MeridianCore", "MeridianProtocol", "MeridianTransport"]),
        // `meridian load`: many simulated clients on a few lws client threads, with latency histograms.
        .target(
            name: "MeridianLoad",
            dependencies: [
                "MeridianTransport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .executableTarget(
            name: "meridian",
            dependencies: [
                "MeridianServer", "MeridianLoad",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "MeridianCoreTests", dependencies: ["MeridianCore"]),
        .testTarget(name: "MeridianProtocolTests", dependencies: ["MeridianProtocol", "MeridianCore"]),
        .testTarget(name: "MeridianTransportTests", dependencies: ["MeridianTransport"]),
        .testTarget(name: "MeridianClientTests", dependencies: ["MeridianClient", "MeridianServer", "MeridianTransport", "MeridianCore"]),
        .testTarget(name: "MeridianLoadTests", dependencies: ["MeridianLoad", "MeridianServer"]),
        .testTarget(
            name: "MeridianServerTests",
            dependencies: ["MeridianServer", "MeridianTransport", "MeridianProtocol", "MeridianCore"]
        ),
    ]
)
