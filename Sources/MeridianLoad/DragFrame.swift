#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fields of a `drag` event the load generator counts, read in one pass over its bytes: the
/// generator's hottest path (every receiver reads every move). A ``FrameScanner`` lookup is a
/// search of the whole message per field; this walks the message once, string by string, and
/// takes the first occurrence of each key it knows (top-level fields come before nested ones,
/// and a drag event's coordinate is its only nested object). Numbers are read without `strtod`
/// unless they carry an exponent.
struct DragFrame {
    enum State: UInt8 {
        case starting, dragging, ending, other
    }

    var seq: UInt64?
    var transient = false
    /// N of a load-tool annotation `dN`; nil for any other id.
    var annotation: UInt64?
    var state = State.other
    var latitude: Double?
    var longitude: Double?

    init(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        if !readInOrder(base, bytes.count) {
            self = DragFrame()
            scan(base, bytes.count, from: 0)
        }
    }

    private init() {}

    /// The layout both Meridian and the baseline write, field by field:
    /// `{"type":"drag","seq":N[,"transient":true],"id":"dN"[,"participant":"…"],"state":"…","coordinate":{"latitude":X,"longitude":Y}…`;
    /// false at the first byte that differs (then ``scan(_:_:from:)`` reads the message).
    private mutating func readInOrder(_ base: UnsafePointer<UInt8>, _ end: Int) -> Bool {
        var i = 14  // {"type":"drag"
        guard Self.expect(#","seq":"#, base, &i, end), let seq = Self.integer(base, &i, end) else { return false }
        self.seq = seq
        transient = Self.expect(#","transient":true"#, base, &i, end)
        guard Self.expect(#","id":"d"#, base, &i, end), let n = Self.integer(base, &i, end),
              Self.expect("\"", base, &i, end) else { return false }
        annotation = n
        if Self.expect(#","participant":""#, base, &i, end) {
            guard Self.skipString(base, &i, end) else { return false }
        }
        guard Self.expect(#","state":""#, base, &i, end), i < end else { return false }
        switch base[i] {
        case UInt8(ascii: "s"): state = .starting
        case UInt8(ascii: "d"): state = .dragging
        case UInt8(ascii: "e"): state = .ending
        default: state = .other
        }
        guard Self.skipString(base, &i, end) else { return false }
        guard Self.expect(#","coordinate":{"latitude":"#, base, &i, end) else {
            // No coordinate (a drag that ends without one, say): nothing more is read.
            return state != .dragging
        }
        guard let latitude = Self.number(base, &i, end), Self.expect(#","longitude":"#, base, &i, end),
              let longitude = Self.number(base, &i, end) else { return false }
        self.latitude = latitude
        self.longitude = longitude
        // Whatever follows (`}}`, an ending's revision): read for the fields not yet seen.
        scan(base, end, from: i)
        return true
    }

    /// True, and `i` past it, when `text` is at `i`.
    private static func expect(_ text: StaticString, _ base: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int) -> Bool {
        let n = text.utf8CodeUnitCount
        guard end - i >= n, memcmp(base + i, text.utf8Start, n) == 0 else { return false }
        i += n
        return true
    }

    /// Moves `i` past the closing quote of the string whose contents begin at `i`.
    private static func skipString(_ base: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int) -> Bool {
        while i < end {
            let c = base[i]
            if c == UInt8(ascii: "\\") { i += 2; continue }
            i += 1
            if c == UInt8(ascii: "\"") { return true }
        }
        return false
    }

    /// Any drag event: each string in turn, a key when a colon follows it.
    private mutating func scan(_ base: UnsafePointer<UInt8>, _ end: Int, from start: Int) {
        var i = start
        var seenID = annotation != nil
        while i < end {
            guard base[i] == UInt8(ascii: "\"") else { i += 1; continue }
            // A string: a key when a colon follows it.
            let start = i + 1
            var close = start
            while close < end, base[close] != UInt8(ascii: "\"") {
                close += base[close] == UInt8(ascii: "\\") ? 2 : 1
            }
            guard close < end else { return }
            i = close + 1
            guard i < end, base[i] == UInt8(ascii: ":") else { continue }
            i += 1
            let key = UnsafeBufferPointer(start: base + start, count: close - start)
            switch key.count {
            case 3 where Self.equal(key, "seq") && seq == nil:
                seq = Self.integer(base, &i, end)
            case 2 where Self.equal(key, "id") && !seenID:
                seenID = true
                if i + 1 < end, base[i] == UInt8(ascii: "\""), base[i + 1] == UInt8(ascii: "d") {
                    var j = i + 2
                    if let n = Self.integer(base, &j, end), j < end, base[j] == UInt8(ascii: "\"") { annotation = n }
                }
            case 5 where Self.equal(key, "state") && state == .other:
                if i + 1 < end, base[i] == UInt8(ascii: "\"") {
                    switch base[i + 1] {
                    case UInt8(ascii: "s"): state = .starting
                    case UInt8(ascii: "d"): state = .dragging
                    case UInt8(ascii: "e"): state = .ending
                    default: break
                    }
                }
            case 8 where Self.equal(key, "latitude") && latitude == nil:
                latitude = Self.number(base, &i, end)
            case 9 where Self.equal(key, "longitude") && longitude == nil:
                longitude = Self.number(base, &i, end)
            case 9 where Self.equal(key, "transient"):
                transient = i < end && base[i] == UInt8(ascii: "t")
            default:
                break
            }
        }
    }

    private static func equal(_ key: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        memcmp(key.baseAddress!, text.utf8Start, key.count) == 0
    }

    /// The non-negative integer whose digits begin at `i`; `i` ends past them.
    private static func integer(_ base: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int) -> UInt64? {
        let start = i
        var value: UInt64 = 0
        while i < end, base[i] &- 48 < 10, i - start < 19 {
            value = value &* 10 &+ UInt64(base[i] &- 48)
            i += 1
        }
        return i > start ? value : nil
    }

    /// Powers of ten a double holds exactly: a mantissa of at most 15 digits divided by one of
    /// them is the correctly rounded value, as `strtod` gives.
    private static let exactPowers: [Double] = (0...22).map { pow(10, Double($0)) }

    /// A JSON number at `i`: `-?digits(.digits)?`, exact for up to 15 significant digits; longer
    /// ones, and any exponent, go to `strtod`.
    private static func number(_ base: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int) -> Double? {
        let start = i
        let negative = i < end && base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fraction = 0
        var inFraction = false
        while i < end {
            let c = base[i]
            if c &- 48 < 10 {
                mantissa = mantissa &* 10 &+ UInt64(c &- 48)
                digits += 1
                if inFraction { fraction += 1 }
            } else if c == UInt8(ascii: "."), !inFraction {
                inFraction = true
            } else {
                break
            }
            i += 1
        }
        guard digits > 0 else { return nil }
        if digits > 15 || (i < end && (base[i] | 0x20) == UInt8(ascii: "e")) {
            // Rare: the general case, read again from the start (the number ends at ',' or '}'
            // inside the message, so strtod stops in bounds).
            var stop: UnsafeMutablePointer<CChar>?
            let value = UnsafeRawPointer(base + start).withMemoryRebound(to: CChar.self, capacity: end - start) {
                strtod($0, &stop)
            }
            guard let stop else { return nil }
            i = start + (UnsafeRawPointer(stop) - UnsafeRawPointer(base + start))
            return value
        }
        let value = Double(mantissa) / exactPowers[fraction]
        return negative ? -value : value
    }
}
