// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for the protocol decoder, the session core and the HTTP side (request lines,
// the API's routes, queries and bodies).
// Fuzzers: `make fuzz` in the root (builds with -sanitize=fuzzer,address and -DFUZZING).
// Regressions: `swift test` in the root replays Regressions/ and Corpus/ through the harness
// (FuzzHarnessTests, a target of the root package), uninstrumented.
let package = Package(
    name: "FuzzTesting",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Meridian", path: ".."),
    ],
    targets: [
        // The checks live in the root package (FuzzHarness, replayed there by `swift test`); the fuzzers
        // build them here with -sanitize=fuzzer,address.
        // Bytes -> ClientRequest.decode / JSONValue.parse.
        .executableTarget(name: "FuzzDecoder", dependencies: [.product(name: "FuzzHarness", package: "Meridian")]),
        // Bytes -> a script of commands from several participants of one session.
        .executableTarget(name: "FuzzSession", dependencies: [.product(name: "FuzzHarness", package: "Meridian")]),
        // Bytes -> a request line, and a request as the hub sees it: APIRequest.decode and its parts.
        .executableTarget(name: "FuzzHTTP", dependencies: [.product(name: "FuzzHarness", package: "Meridian")]),
    ]
)
