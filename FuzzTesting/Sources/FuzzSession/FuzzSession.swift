import FuzzHarness

#if FUZZING
/// libFuzzer's entry point: a broken invariant stops the run with the input saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do throws(Violation) {
        try SessionHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        preconditionFailure("FuzzSession: \(error)")
    }
    return 0
}
#else
/// Without the fuzzer: replays the files named on the command line.
@main
struct FuzzSessionReplay {
    static func main() { Replay.files(CommandLine.arguments.dropFirst(), SessionHarness.run) }
}
#endif
