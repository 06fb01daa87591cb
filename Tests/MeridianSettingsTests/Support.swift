import Foundation

/// A JSON config file in a directory of its own, for one test.
func configFile(_ object: [String: Any]) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("meridian-settings-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent("meridian.json")
    try JSONSerialization.data(withJSONObject: object).write(to: file)
    return file.path
}
