import MeridianCore

/// Reading values out of a ``JSONDocument``, one node at a time.
extension JSONDocument {
    /// The indices of a container's children in order (an object's: key, value, key, value, …).
    func children(of index: Int) -> Children { Children(document: self, index: index) }

    struct Children: Sequence, IteratorProtocol {
        let document: JSONDocument
        var current: Int
        let end: Int

        init(document: JSONDocument, index: Int) {
            self.document = document
            self.current = index + 1
            self.end = Int(document.nodes[index].next)
        }

        mutating func next() -> Int? {
            guard current < end else { return nil }
            defer { current = Int(document.nodes[current].next) }
            return current
        }
    }

    /// The index of the value of the first `key` in the object at `objectIndex`, marking that key
    /// read; nil when absent. (A key written again later is left unread, and ``Fields/finish()``
    /// refuses it by name.)
    func member(_ key: String, of objectIndex: Int) -> Int? {
        var children = self.children(of: objectIndex)
        while let keyIndex = children.next(), let valueIndex = children.next() {
            guard keyEquals(keyIndex, key) else { continue }
            nodes[keyIndex].flags |= Flag.read
            return valueIndex
        }
        return nil
    }

    /// Whether the string node at `index` equals `key`.
    func keyEquals(_ index: Int, _ key: String) -> Bool {
        let node = nodes[index]
        if node.flags & Flag.escaped != 0 { return string(at: index) == key }
        let length = Int(node.end - node.start) - 2
        var key = key
        return key.withUTF8 { utf8 in
            guard utf8.count == length else { return false }
            let start = base + Int(node.start) + 1
            for i in 0..<length where start[i] != utf8[i] { return false }
            return true
        }
    }

    /// The string node at `index`, unescaped.
    func string(at index: Int) -> String {
        let node = nodes[index]
        let inner = UnsafeRawBufferPointer(rebasing: bytes[Int(node.start) + 1..<Int(node.end) - 1])
        // Validated as UTF-8 by the parser: decoding repairs nothing.
        guard node.flags & Flag.escaped != 0 else { return String(decoding: inner, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(inner.count)
        var i = 0
        while i < inner.count {
            let b = inner[i]
            guard b == 0x5C else {
                out.append(b)
                i += 1
                continue
            }
            let e = inner[i + 1]
            i += 2
            switch e {
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                var scalar = hex4(inner, i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex4(inner, i + 2) - 0xDC00)
                    i += 6
                }
                appendUTF8(scalar, to: &out)
            default: out.append(e)  // " \ /
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The number node at `index` as the nearest double.
    func double(at index: Int) -> Double {
        let text = self.text(of: index)
        if let exact = fastDouble(text) { return exact }
        return Double(String(decoding: text, as: UTF8.self)) ?? .nan
    }

    /// The node at `index` as a generic value; nil when an object inside has a key twice.
    func value(at index: Int) -> JSONValue? {
        let node = nodes[index]
        switch node.kind {
        case .null: return .null
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .number: return .number(double(at: index))
        case .string: return .string(string(at: index))
        case .array:
            var items: [JSONValue] = []
            items.reserveCapacity(Int(node.count))
            for child in children(of: index) {
                guard let item = value(at: child) else { return nil }
                items.append(item)
            }
            return .array(items)
        case .object:
            var fields: [String: JSONValue] = [:]
            fields.reserveCapacity(Int(node.count))
            var children = self.children(of: index)
            while let keyIndex = children.next(), let valueIndex = children.next() {
                guard let item = value(at: valueIndex),
                      fields.updateValue(item, forKey: string(at: keyIndex)) == nil else { return nil }
            }
            return .object(fields)
        }
    }
}

extension JSONDocument {
    /// The path of the first integer literal inside the node at `index` whose magnitude is
    /// beyond 2^53 - 1: numbers are kept as doubles, which hold such integers only approximately.
    func firstInexactInteger(in index: Int, path: String) -> String? {
        // Most values have none: a linear scan first, the path only when there is one.
        let any = (index..<Int(nodes[index].next)).contains { isInexactInteger($0) }
        return any ? inexactIntegerPath(in: index, path: path) : nil
    }

    private func isInexactInteger(_ index: Int) -> Bool {
        nodes[index].kind == .number && nodes[index].flags & Flag.integerLiteral != 0
            && abs(double(at: index)) > 9_007_199_254_740_991
    }

    private func inexactIntegerPath(in index: Int, path: String) -> String? {
        let node = nodes[index]
        switch node.kind {
        case .number:
            return isInexactInteger(index) ? path : nil
        case .array:
            for (i, child) in children(of: index).enumerated() {
                if let found = inexactIntegerPath(in: child, path: "\(path)[\(i)]") { return found }
            }
            return nil
        case .object:
            var children = self.children(of: index)
            while let keyIndex = children.next(), let valueIndex = children.next() {
                if let found = inexactIntegerPath(in: valueIndex, path: "\(path).\(string(at: keyIndex))") { return found }
            }
            return nil
        default:
            return nil
        }
    }
}

/// Exact decimal-to-double conversion for the common case: at most 19 significant digits
/// whose value is at most 2^53, scaled by a power of ten up to 10^22. Both are exact
/// doubles, so one multiplication or division rounds correctly (Clinger's fast path).
/// Nil otherwise: the caller falls back to the full conversion.
private func fastDouble(_ text: UnsafeRawBufferPointer) -> Double? {
    var i = 0
    let n = text.count
    let negative = text[0] == 0x2D
    if negative { i = 1 }
    var mantissa: UInt64 = 0
    var significant = 0
    var exponent = 0
    var inFraction = false
    while i < n {
        let b = text[i]
        if b == 0x2E {
            inFraction = true
        } else if b >= 0x30 && b <= 0x39 {
            if significant > 0 || b != 0x30 { significant += 1 }
            guard significant <= 19 else { return nil }
            mantissa = mantissa &* 10 &+ UInt64(b - 0x30)
            if inFraction { exponent -= 1 }
        } else {
            break  // e or E
        }
        i += 1
    }
    if i < n {
        i += 1
        var exponentNegative = false
        if text[i] == 0x2D || text[i] == 0x2B {
            exponentNegative = text[i] == 0x2D
            i += 1
        }
        var e = 0
        while i < n {
            e = e * 10 + Int(text[i] - 0x30)
            guard e < 1000 else { return nil }
            i += 1
        }
        exponent += exponentNegative ? -e : e
    }
    guard mantissa <= 1 << 53, exponent >= -22, exponent <= 22 else { return nil }
    var value = Double(mantissa)
    if exponent < 0 { value /= powersOfTen[-exponent] } else if exponent > 0 { value *= powersOfTen[exponent] }
    return negative ? -value : value
}

private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

private func hex4(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
    var value: UInt32 = 0
    for i in 0..<4 { value = value << 4 | (hexDigit(bytes[at + i]) ?? 0) }
    return value
}

private func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
        out.append(UInt8(scalar))
    case 0x80..<0x800:
        out.append(UInt8(0xC0 | scalar >> 6))
        out.append(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
        out.append(UInt8(0xE0 | scalar >> 12))
        out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    default:
        out.append(UInt8(0xF0 | scalar >> 18))
        out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
        out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    }
}
