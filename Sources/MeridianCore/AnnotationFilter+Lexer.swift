extension AnnotationFilter {
    /// A token of a filter and the 1-based character position where it starts.
    struct Token: Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            /// A name: a field, a metadata key, or a keyword (compared case-insensitively).
            case word(String)
            case string(String)
            case number(Double)
            /// `(`, `)`, `,`, `.`, `[`, `]`, `=`, `!=`, `<>`, `<`, `<=`, `>`, `>=`.
            case symbol(String)
            case end
        }

        var kind: Kind
        var position: Int
        /// The token as written (for messages).
        var text: String

        /// The keyword this word is, lower-cased; nil for anything else.
        var keyword: String? {
            guard case .word(let w) = kind else { return nil }
            let lower = w.lowercased()
            return Self.keywords.contains(lower) ? lower : nil
        }

        static let keywords: Set<String> = ["and", "or", "not", "in", "between", "true", "false", "null"]

        func isSymbol(_ s: String) -> Bool { kind == .symbol(s) }
        func isKeyword(_ k: String) -> Bool { keyword == k }
    }

    /// Splits a filter into tokens, the last one `.end`. Refuses a filter over
    /// ``AnnotationFilter/maxBytes`` UTF-8 bytes, unterminated strings, malformed numbers and
    /// characters that start no token.
    static func tokens(of source: String) throws(AnnotationFilter.Error) -> [Token] {
        let chars = Array(source)
        var bytes = 0
        for (i, c) in chars.enumerated() {
            bytes += c.utf8.count
            if bytes > maxBytes {
                throw Error(position: i + 1, reason: "the filter is longer than \(maxBytes) bytes (\(source.utf8.count))")
            }
        }
        var tokens: [Token] = []
        var i = 0
        while i < chars.count {
            let c = chars[i]
            let start = i
            if c.isWhitespace {
                i += 1
                continue
            }
            if c == "'" || c == "\"" {
                var text = ""
                i += 1
                while true {
                    guard i < chars.count else { throw Error(position: start + 1, reason: "a string that is never closed") }
                    if chars[i] == c {
                        // A quote written twice is one quote of the string.
                        if i + 1 < chars.count && chars[i + 1] == c {
                            text.append(c)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    text.append(chars[i])
                    i += 1
                }
                tokens.append(Token(kind: .string(text), position: start + 1, text: String(chars[start..<i])))
                continue
            }
            if c == "-" || c.isASCII && c.isNumber {
                i = try number(chars, from: start)
                let text = String(chars[start..<i])
                guard let n = Double(text), n.isFinite else { throw Error(position: start + 1, reason: "the number \(text) is out of range") }
                tokens.append(Token(kind: .number(n), position: start + 1, text: text))
                continue
            }
            if c == "_" || c.isASCII && c.isLetter {
                while i < chars.count && (chars[i] == "_" || chars[i].isASCII && (chars[i].isLetter || chars[i].isNumber)) { i += 1 }
                let word = String(chars[start..<i])
                tokens.append(Token(kind: .word(word), position: start + 1, text: word))
                continue
            }
            let two = i + 1 < chars.count ? String(chars[i...(i + 1)]) : ""
            if two == "!=" || two == "<>" || two == "<=" || two == ">=" {
                tokens.append(Token(kind: .symbol(two == "<>" ? "!=" : two), position: start + 1, text: two))
                i += 2
                continue
            }
            if "(),.[]=<>".contains(c) {
                tokens.append(Token(kind: .symbol(String(c)), position: start + 1, text: String(c)))
                i += 1
                continue
            }
            throw Error(position: start + 1, reason: "unexpected character \(describe(c))")
        }
        tokens.append(Token(kind: .end, position: chars.count + 1, text: ""))
        return tokens
    }

    /// The end of a JSON number starting at `start`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private static func number(_ chars: [Character], from start: Int) throws(AnnotationFilter.Error) -> Int {
        func isDigit(_ i: Int) -> Bool { i < chars.count && chars[i].isASCII && chars[i].isNumber }
        func digits(_ i: inout Int, after what: String) throws(AnnotationFilter.Error) {
            guard isDigit(i) else { throw Error(position: i + 1, reason: "expected a digit \(what)") }
            while isDigit(i) { i += 1 }
        }
        var i = start
        if chars[i] == "-" { i += 1 }
        if i < chars.count && chars[i] == "0" {
            i += 1
        } else {
            try digits(&i, after: "after \"-\"")
        }
        if i < chars.count && chars[i] == "." {
            i += 1
            try digits(&i, after: "after the decimal point")
        }
        if i < chars.count && (chars[i] == "e" || chars[i] == "E") {
            i += 1
            if i < chars.count && (chars[i] == "+" || chars[i] == "-") { i += 1 }
            try digits(&i, after: "in the exponent")
        }
        if i < chars.count && (chars[i] == "_" || chars[i].isLetter || chars[i].isNumber) {
            throw Error(position: i + 1, reason: "unexpected \(describe(chars[i])) in a number")
        }
        return i
    }

    static func describe(_ c: Character) -> String {
        c.isASCII && !c.isWhitespace && c.asciiValue! >= 0x20 ? "\"\(c)\"" : "U+" + String(c.unicodeScalars.first!.value, radix: 16, uppercase: true)
    }
}
