import FuzzHarness

#if FUZZING
/// libFuzzer's entry point: a broken invariant stops the run with the input saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do throws(Violation) {
        try HTTPHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        preconditionFailure("FuzzHTTP: \(error)")
    }
    return 0
}
#else
/// Without the fuzzer: replays the files named on the command line.
@main
struct FuzzHTTPReplay {
    static func main() { Replay.files(CommandLine.arguments.dropFirst(), HTTPHarness.run) }
}
#endif
