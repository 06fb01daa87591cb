import Foundation
import MeridianProtocol
import Testing

/// The close-code table is one: ``CloseCode/table`` (which the server and the Swift client use),
/// SPEC §10's rows, and meridian.js's `CLOSE_CODES` name the same codes with the same advice.
@Suite struct CloseCodeTableTests {
    static let repository = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repository.appending(path: path), encoding: .utf8)
    }

    /// `CLOSE_CODES`' entries, `code: "advice"`, from the module's source.
    static func javaScriptTable() throws -> [UInt16: String] {
        let source = try read("Sources/MeridianDashboard/Static/meridian.js")
        let start = try #require(source.range(of: "export const CLOSE_CODES = Object.freeze({"))
        let end = try #require(source.range(of: "});", range: start.upperBound..<source.endIndex))
        let body = source[start.upperBound..<end.lowerBound]
        var table: [UInt16: String] = [:]
        for match in body.matches(of: /(\d{4}): "([a-z-]+)"/) { table[UInt16(match.1)!] = String(match.2) }
        return table
    }

    @Test func meridianJSCarriesTheServersTable() throws {
        let expected = Dictionary(uniqueKeysWithValues: CloseCode.table.map { ($0.code, $0.advice.rawValue) })
        #expect(try Self.javaScriptTable() == expected)
    }

    @Test func specSection10ListsEveryCode() throws {
        let spec = try Self.read("Protocol/SPEC.md")
        let section = try #require(spec.range(of: "## 10. Close codes"))
        let rest = spec[section.upperBound...]
        let table = rest[..<(rest.range(of: "\n\n", range: rest.index(rest.startIndex, offsetBy: 40)..<rest.endIndex)?.lowerBound ?? rest.endIndex)]
        let codes = table.matches(of: /\n\| (\d{4}) \|/).map { UInt16($0.1)! }
        #expect(codes == CloseCode.table.map(\.code))
    }

    @Test(arguments: CloseCode.table)
    func theAdviceOfEachCode(entry: (code: UInt16, advice: CloseCode.Advice)) {
        #expect(CloseCode.advice(after: entry.code) == entry.advice)
        // Only the codes SPEC §10 says to answer by reconnecting are answered so.
        let staysClosed: Set<UInt16> = [1002, 1003, 1007, 1009, 4009, 4010, 4401]
        #expect(entry.advice.reconnects == !staysClosed.contains(entry.code), "\(entry.code)")
    }

    @Test func aCodeNotInTheTableOrNoneIsANetworkFailure() {
        #expect(CloseCode.advice(after: nil) == .reconnect)
        #expect(CloseCode.advice(after: 1006) == .reconnect)
        #expect(CloseCode.advice(after: 4999) == .reconnect)
    }
}
