/// A JSON text parsed in one pass into a flat list of nodes in document order, over the
/// bytes it came from: no dictionaries, strings or numbers are built until a reader asks
/// for one value (``Fields`` asks for the fields a request has, one by one).
///
/// The grammar is RFC 8259's, strictly: one value with optional whitespace around it;
/// no trailing commas, comments, leading zeros, `NaN` or `Infinity`; control characters
/// in strings must be escaped; `\u` escapes must pair their surrogates; bytes outside
/// ASCII must be valid UTF-8. Nesting deeper than ``maxDepth`` is refused, so no input
/// can exhaust the stack of a reader.
///
/// A document that does not own its bytes (``parse(_:)``) is valid only while they are:
/// read what you need before the buffer is reused.
final class JSONDocument {
    enum Kind: UInt8 {
        case null, falseValue, trueValue, number, string, array, object
    }

    /// One value, spanning bytes `start..<end` (a string with its quotes, a container with its
    /// brackets). `next` is the index of the node after it and all its descendants, so readers
    /// skip a container whole. An object's children are its keys and values, alternating;
    /// `count` is a container's number of items (an object's: of pairs).
    struct Node {
        var kind: Kind
        var flags: UInt8
        var start: UInt32
        var end: UInt32
        var next: UInt32
        var count: UInt32
    }

    enum Flag {
        /// A string with at least one backslash escape.
        static let escaped: UInt8 = 1
        /// A number written without fraction or exponent.
        static let integerLiteral: UInt8 = 2
        /// An object key a reader has looked up.
        static let read: UInt8 = 4
    }

    static let maxDepth = 512

    let bytes: UnsafeRawBufferPointer
    /// The same bytes, typed.
    let base: UnsafePointer<UInt8>
    /// The nodes, in memory the document owns: a `let` pointer, so reading and marking them
    /// costs no exclusivity check.
    let nodes: UnsafeMutableBufferPointer<Node>
    /// Bytes this document allocated and frees (nil: the caller's bytes).
    private let owned: UnsafeMutableRawBufferPointer?

    private init(bytes: UnsafeRawBufferPointer, nodes: UnsafeMutableBufferPointer<Node>, owned: UnsafeMutableRawBufferPointer?) {
        self.bytes = bytes
        self.base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        self.nodes = nodes
        self.owned = owned
    }

    deinit {
        nodes.baseAddress?.deallocate()
        owned?.deallocate()
    }

    /// Why a text is not JSON, with the byte offset where that became clear.
    struct SyntaxError: Error, Equatable {
        var offset: Int
        var reason: String
    }

    /// Parses `bytes` without copying them: the document is valid only while they are.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<JSONDocument, SyntaxError> {
        switch Parser.run(bytes) {
        case .success(let nodes): return .success(JSONDocument(bytes: bytes, nodes: nodes, owned: nil))
        case .failure(let error): return .failure(error)
        }
    }

    /// Parses a copy of `bytes` that the document keeps.
    static func parseCopy(_ bytes: [UInt8]) -> Result<JSONDocument, SyntaxError> {
        let owned = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        bytes.withUnsafeBytes { if let base = $0.baseAddress { owned.baseAddress!.copyMemory(from: base, byteCount: bytes.count) } }
        let view = UnsafeRawBufferPointer(start: owned.baseAddress, count: bytes.count)
        switch Parser.run(view) {
        case .success(let nodes): return .success(JSONDocument(bytes: view, nodes: nodes, owned: owned))
        case .failure(let error):
            owned.deallocate()
            return .failure(error)
        }
    }

    /// The bytes of a node as written (a string with its quotes, a container with its brackets).
    func text(of index: Int) -> UnsafeRawBufferPointer {
        let node = nodes[index]
        return UnsafeRawBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
    }
}

/// The one-pass parser: an explicit stack of open containers (on the call stack, at most
/// ``JSONDocument/maxDepth`` deep) instead of recursion, nodes in a growing buffer handed to
/// the document.
private struct Parser {
    typealias Failure = JSONDocument.SyntaxError
    typealias Open = (node: Int, expectsKey: Bool)

    let base: UnsafePointer<UInt8>
    let count: Int
    var position = 0
    var nodes: UnsafeMutablePointer<JSONDocument.Node>
    var nodeCount = 0
    var nodeCapacity = 32
    /// Open containers: node index, and whether the next item of an object is a key. The first
    /// levels are on the call stack; deeper documents move them to the heap.
    var stack: UnsafeMutablePointer<Open>
    var stackCapacity: Int
    var stackOnHeap = false
    var depth = 0

    private init(_ bytes: UnsafeRawBufferPointer, stack: UnsafeMutableBufferPointer<Open>) {
        // An empty buffer may have no base address; any valid pointer serves, nothing is read.
        self.base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        self.count = bytes.count
        self.stack = stack.baseAddress!
        self.stackCapacity = stack.count
        nodes = .allocate(capacity: nodeCapacity)
    }

    /// The nodes of `bytes`, in a buffer the caller frees; or why it is not JSON.
    static func run(_ bytes: UnsafeRawBufferPointer) -> Result<UnsafeMutableBufferPointer<JSONDocument.Node>, Failure> {
        guard bytes.count < Int(UInt32.max) else { return .failure(Failure(offset: 0, reason: "too long")) }
        return withUnsafeTemporaryAllocation(of: Open.self, capacity: 16) { stack in
            var parser = Parser(bytes, stack: stack)
            let error = parser.parseDocument()
            if parser.stackOnHeap { parser.stack.deallocate() }
            if let error {
                parser.nodes.deallocate()
                return .failure(error)
            }
            return .success(UnsafeMutableBufferPointer(start: parser.nodes, count: parser.nodeCount))
        }
    }

    private mutating func push(_ open: Open) {
        if depth == stackCapacity {
            let grown = UnsafeMutablePointer<Open>.allocate(capacity: stackCapacity * 4)
            grown.initialize(from: stack, count: depth)
            if stackOnHeap { stack.deallocate() }
            stack = grown
            stackCapacity *= 4
            stackOnHeap = true
        }
        stack[depth] = open
        depth += 1
    }

    private mutating func append(_ node: JSONDocument.Node) {
        if nodeCount == nodeCapacity {
            let grown = UnsafeMutablePointer<JSONDocument.Node>.allocate(capacity: nodeCapacity * 2)
            grown.moveInitialize(from: nodes, count: nodeCount)
            nodes.deallocate()
            nodes = grown
            nodeCapacity *= 2
        }
        (nodes + nodeCount).initialize(to: node)
        nodeCount += 1
    }

    private var top: Open? { depth == 0 ? nil : stack[depth - 1] }

    private func fail(_ reason: String) -> Failure { Failure(offset: position, reason: reason) }

    private mutating func skipSpace() {
        while position < count {
            switch base[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func parseDocument() -> Failure? {
        skipSpace()
        while true {
            guard position < count else { return fail("unexpected end") }
            // One value, or a key then a value when an object expects a key.
            if let top, top.expectsKey {
                guard base[position] == 0x22 else { return fail("expected a string key") }
                if let error = parseString() { return error }
                skipSpace()
                guard position < count, base[position] == 0x3A else { return fail("expected ':'") }
                position += 1
                stack[depth - 1].expectsKey = false
                skipSpace()
                guard position < count else { return fail("unexpected end") }
            }
            let c = base[position]
            switch c {
            case 0x7B, 0x5B:  // { [
                guard depth < JSONDocument.maxDepth else { return fail("nested deeper than \(JSONDocument.maxDepth) levels") }
                let isObject = c == 0x7B
                append(.init(kind: isObject ? .object : .array, flags: 0, start: UInt32(position), end: 0, next: 0, count: 0))
                push((nodeCount - 1, isObject))
                position += 1
                skipSpace()
                guard position < count else { return fail("unexpected end") }
                if base[position] == (isObject ? 0x7D : 0x5D) {
                    position += 1
                    closeContainer()
                } else {
                    continue
                }
            case 0x22:
                if let error = parseString() { return error }
            case 0x2D, 0x30...0x39:
                if let error = parseNumber() { return error }
            case 0x74:
                if let error = parseLiteral("true", .trueValue) { return error }
            case 0x66:
                if let error = parseLiteral("false", .falseValue) { return error }
            case 0x6E:
                if let error = parseLiteral("null", .null) { return error }
            default:
                return fail("unexpected character")
            }
            // After a value: a comma, the end of the enclosing containers, or the end of the text.
            while true {
                skipSpace()
                guard let top else {
                    return position == count ? nil : fail("unexpected text after the value")
                }
                guard position < count else { return fail("unexpected end") }
                let isObject = nodes[top.node].kind == .object
                let b = base[position]
                if b == 0x2C {
                    position += 1
                    nodes[top.node].count += 1
                    if isObject { stack[depth - 1].expectsKey = true }
                    skipSpace()
                    break
                }
                guard b == (isObject ? 0x7D : 0x5D) else { return fail(isObject ? "expected ',' or '}'" : "expected ',' or ']'") }
                position += 1
                nodes[top.node].count += 1
                closeContainer()
            }
        }
    }

    /// Called just past the closing bracket.
    private mutating func closeContainer() {
        depth -= 1
        let node = stack[depth].node
        nodes[node].end = UInt32(position)
        nodes[node].next = UInt32(nodeCount)
    }

    private mutating func appendScalar(_ kind: JSONDocument.Kind, _ flags: UInt8, from start: Int, to end: Int) {
        append(.init(kind: kind, flags: flags, start: UInt32(start), end: UInt32(end), next: UInt32(nodeCount + 1), count: 0))
    }

    private mutating func parseLiteral(_ word: StaticString, _ kind: JSONDocument.Kind) -> Failure? {
        let length = word.utf8CodeUnitCount
        guard count - position >= length else { return fail("unexpected character") }
        for i in 0..<length where base[position + i] != word.utf8Start[i] { return fail("unexpected character") }
        appendScalar(kind, 0, from: position, to: position + length)
        position += length
        return nil
    }

    private mutating func parseNumber() -> Failure? {
        let start = position
        var integer = true
        if base[position] == 0x2D { position += 1 }
        guard position < count else { return fail("incomplete number") }
        if base[position] == 0x30 {
            position += 1
        } else if (0x31...0x39).contains(base[position]) {
            while position < count, (0x30...0x39).contains(base[position]) { position += 1 }
        } else {
            return fail("invalid number")
        }
        if position < count, base[position] == 0x2E {
            integer = false
            position += 1
            guard position < count, (0x30...0x39).contains(base[position]) else { return fail("invalid number") }
            while position < count, (0x30...0x39).contains(base[position]) { position += 1 }
        }
        if position < count, base[position] == 0x65 || base[position] == 0x45 {
            integer = false
            position += 1
            if position < count, base[position] == 0x2B || base[position] == 0x2D { position += 1 }
            guard position < count, (0x30...0x39).contains(base[position]) else { return fail("invalid number") }
            while position < count, (0x30...0x39).contains(base[position]) { position += 1 }
        }
        let flags = integer ? JSONDocument.Flag.integerLiteral : 0
        appendScalar(.number, flags, from: start, to: position)
        return nil
    }

    private mutating func parseString() -> Failure? {
        let start = position
        position += 1
        var flags: UInt8 = 0
        while true {
            guard position < count else { return fail("unterminated string") }
            let b = base[position]
            if b == 0x22 {
                position += 1
                break
            } else if b == 0x5C {
                flags |= JSONDocument.Flag.escaped
                if let error = parseEscape() { return error }
            } else if b < 0x20 {
                return fail("control character in a string")
            } else if b < 0x80 {
                position += 1
            } else if let error = parseUTF8() {
                return error
            }
        }
        appendScalar(.string, flags, from: start, to: position)
        return nil
    }

    private mutating func parseEscape() -> Failure? {
        position += 1
        guard position < count else { return fail("unterminated string") }
        switch base[position] {
        case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
            position += 1
            return nil
        case 0x75:
            guard let unit = hex4(at: position + 1) else { return fail("invalid \\u escape") }
            position += 5
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed by an escaped low one.
                guard count - position >= 6, base[position] == 0x5C, base[position + 1] == 0x75,
                      let low = hex4(at: position + 2), (0xDC00...0xDFFF).contains(low) else {
                    return fail("unpaired surrogate in a \\u escape")
                }
                position += 6
            case 0xDC00...0xDFFF:
                return fail("unpaired surrogate in a \\u escape")
            default:
                break
            }
            return nil
        default:
            return fail("invalid escape")
        }
    }

    private func hex4(at offset: Int) -> UInt32? {
        guard count - offset >= 4 else { return nil }
        var value: UInt32 = 0
        for i in 0..<4 {
            guard let digit = hexDigit(base[offset + i]) else { return nil }
            value = value << 4 | digit
        }
        return value
    }

    /// One UTF-8 sequence of two to four bytes (RFC 3629: no overlongs, surrogates or values past U+10FFFF).
    private mutating func parseUTF8() -> Failure? {
        let lead = base[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return fail("invalid UTF-8")
        }
        guard count - position >= length else { return fail("invalid UTF-8") }
        let second = base[position + 1]
        guard second >= lower && second <= upper else { return fail("invalid UTF-8") }
        for i in 2..<length where base[position + i] & 0xC0 != 0x80 { return fail("invalid UTF-8") }
        position += length
        return nil
    }
}

func hexDigit(_ b: UInt8) -> UInt32? {
    switch b {
    case 0x30...0x39: UInt32(b - 0x30)
    case 0x41...0x46: UInt32(b - 0x41 + 10)
    case 0x61...0x66: UInt32(b - 0x61 + 10)
    default: nil
    }
}
