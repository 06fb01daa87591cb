import Foundation
import MeridianTesting

/// A JSON config file in a directory of its own, for one test.
func configFile(_ object: [String: Any]) throws -> String {
    let directory = try TestScratch.directory("settings")
    let file = directory.appendingPathComponent("meridian.json")
    try JSONSerialization.data(withJSONObject: object).write(to: file)
    return file.path
}
