// swift-tools-version:6.1
import PackageDescription

// Micro-benchmarks of one drag move on the hot path (ordo-one's package-benchmark), in their own
// package so the root package's build and `make test` do not build them. Run: `make microbench`
// in the root, or `swift package benchmark` here.
let package = Package(
    name: "MeridianBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Meridian", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "HotPath",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MeridianCore", package: "Meridian"),
                .product(name: "MeridianProtocol", package: "Meridian"),
                .product(name: "MeridianServer", package: "Meridian"),
            ],
            path: "Benchmarks/HotPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
