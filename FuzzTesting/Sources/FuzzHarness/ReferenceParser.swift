import Foundation
import MeridianCore

/// Foundation's JSON parser as a reference for ours: both must accept the same texts and
/// read the same values, except where ours is deliberately stricter (a key twice in one
/// object, a NUL byte, a trailing comma) and where Foundation refuses a number beyond the double range that we read as
/// infinite (and every field then refuses).
enum ReferenceParser {
    static func agrees(with ours: JSONValue?, on bytes: [UInt8]) throws(Violation) {
        let theirs = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])).map(value(of:))
        switch (ours, theirs) {
        case (nil, nil): return
        case (let ours?, let theirs??):
            try require(same(ours, theirs), "we read \(ours), Foundation reads \(theirs)")
        case (nil, _?):
            let text = String(decoding: bytes, as: UTF8.self)
            try require(stricterByDesign(text), "we refuse a text Foundation accepts: \(text.prefix(200))")
        case (let ours?, nil), (let ours?, .some(nil)):
            // Foundation refuses numbers beyond the double range; we read them as infinite,
            // which every field refuses as not finite.
            if !ours.isFinite { return }
            throw Violation("we accept a text Foundation refuses: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
    }

    /// Whether `bytes` may be an object that we refuse only for a key written twice (a quoted
    /// string appears twice in it).
    static func mayHaveDuplicateKeys(_ bytes: [UInt8]) -> Bool {
        hasDuplicateKey(String(decoding: bytes, as: UTF8.self))
    }

    /// Texts we refuse on purpose (RFC 8259) and Foundation accepts: duplicate keys, a NUL byte
    /// (Foundation stops reading at it and accepts what came before, `2\0` for example), and a
    /// trailing comma (`{"a":1,}`).
    private static func stricterByDesign(_ text: String) -> Bool {
        hasDuplicateKey(text) || text.utf8.contains(0) || hasTrailingComma(text)
    }

    private static func hasTrailingComma(_ text: String) -> Bool {
        let significant = text.utf8.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return zip(significant, significant.dropFirst()).contains { $0 == 0x2C && ($1 == 0x7D || $1 == 0x5D) }
    }

    private static func hasDuplicateKey(_ text: String) -> Bool {
        // Foundation keeps one of the values; a text with a repeated key string is enough evidence.
        var seen = Set<Substring>()
        for part in text.split(separator: "\"", omittingEmptySubsequences: false) where part.count < 64 {
            if !seen.insert(part).inserted { return true }
        }
        return false
    }

    private static func value(of object: Any) -> JSONValue? {
        switch object {
        case is NSNull: return .null
        case let n as NSNumber:
            // Foundation's booleans are NSNumbers of type char; JSON numbers never are.
            if String(cString: n.objCType) == "c" { return .bool(n.boolValue) }
            return .number(n.doubleValue)
        case let s as String: return .string(s)
        case let a as [Any]:
            var items: [JSONValue] = []
            for item in a {
                guard let v = value(of: item) else { return nil }
                items.append(v)
            }
            return .array(items)
        case let o as [String: Any]:
            var fields: [String: JSONValue] = [:]
            for (k, item) in o {
                guard let v = value(of: item) else { return nil }
                fields[k] = v
            }
            return .object(fields)
        default: return nil
        }
    }

    /// Equal, with numbers equal to within a few units in the last place (Foundation reads long
    /// decimals through its own conversion).
    private static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)):
            // Ours rounds correctly (Swift's conversion); Foundation's drifts by a few units in the
            // last place on long mantissas (49 digits: 3 ulps seen).
            return x == y || abs(x - y) <= max(abs(x), abs(y)).ulp * 16
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy(same)
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
        default:
            return a == b
        }
    }
}
