// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for the protocol decoder, the session core and the HTTP side (request lines,
// the API's routes, queries and bodies).
// Fuzzers: `make fuzz` in the root (builds with -sanitize=fuzzer,address and -DFUZZING).
// Regressions: `swift test` here replays Regressions/ and Corpus/ through the harness, uninstrumented.
let package = Package(
    name: "FuzzTesting",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Meridian", path: ".."),
    ],
    targets: [
        // The checks, as pure functions of the input bytes: shared by the fuzzers and the replay tests.
        .target(
            name: "FuzzHarness",
            dependencies: [
                .product(name: "MeridianCore", package: "Meridian"),
                .product(name: "MeridianProtocol", package: "Meridian"),
                .product(name: "MeridianHTTP", package: "Meridian"),
                .product(name: "MeridianAPI", package: "Meridian"),
            ]
        ),
        // Bytes -> ClientRequest.decode / JSONValue.parse.
        .executableTarget(name: "FuzzDecoder", dependencies: ["FuzzHarness"]),
        // Bytes -> a script of commands from several participants of one session.
        .executableTarget(name: "FuzzSession", dependencies: ["FuzzHarness"]),
        // Bytes -> a request line, and a request as the hub sees it: APIRequest.decode and its parts.
        .executableTarget(name: "FuzzHTTP", dependencies: ["FuzzHarness"]),
        .testTarget(name: "FuzzHarnessTests", dependencies: ["FuzzHarness"]),
    ]
)
