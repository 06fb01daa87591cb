import Foundation
import MeridianTesting

/// Runs `meridian load` with `arguments` (add `--json` for a report); returns its exit status
/// and its JSON report, if it printed one.
func runLoad(_ arguments: [String]) throws -> (status: Int32, report: [String: Any]?) {
    let process = Process()
    process.executableURL = TestServer.executable
    process.arguments = ["load"] + arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, try? JSONSerialization.jsonObject(with: output) as? [String: Any])
}
