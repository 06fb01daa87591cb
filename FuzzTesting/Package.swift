// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for the protocol decoder and the session core.
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
            ]
        ),
        // Bytes -> ClientRequest.decode / JSONValue.parse.
        .executableTarget(name: "FuzzDecoder", dependencies: ["FuzzHarness"]),
        // Bytes -> a script of commands from several participants of one session.
        .executableTarget(name: "FuzzSession", dependencies: ["FuzzHarness"]),
        .testTarget(name: "FuzzHarnessTests", dependencies: ["FuzzHarness"]),
    ]
)
