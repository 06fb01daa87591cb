import Foundation

/// Runs inputs from files through a harness, outside the fuzzer.
public enum Replay {
    /// The bytes of every regular file in `directory`, by name; none if it does not exist.
    public static func inputs(in directory: URL) -> [(name: String, bytes: [UInt8])] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") }.compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { return nil }
            return (name, [UInt8](data))
        }
    }

    /// Replays each file (or every file of each directory) and exits 1 on the first violation.
    public static func files(_ paths: some Sequence<String>, _ harness: ([UInt8]) throws(Violation) -> Void) {
        var count = 0
        for path in paths {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            let inputs = isDirectory.boolValue
                ? self.inputs(in: URL(fileURLWithPath: path)).map { ("\(path)/\($0.name)", $0.bytes) }
                : [(path, FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? [])]
            for (name, bytes) in inputs {
                do throws(Violation) { try harness(bytes) } catch {
                    print("\(name): \(error)")
                    exit(1)
                }
                count += 1
            }
        }
        print("\(count) inputs, no violation")
    }
}
