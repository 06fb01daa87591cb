/// An sRGB colour with alpha. Written on the wire as `#rrggbb` or `#rrggbbaa`.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    /// The red channel, 0–255.
    public var red: UInt8
    /// The green channel, 0–255.
    public var green: UInt8
    /// The blue channel, 0–255.
    public var blue: UInt8
    /// Opacity, from 0 (transparent) to 255 (opaque).
    public var alpha: UInt8

    /// Builds a colour from its channels; opaque unless `alpha` is given.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Parses `#rgb`, `#rrggbb` or `#rrggbbaa` (hex digits in either case).
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.first == UInt8(ascii: "#") else { return nil }
        var values: [UInt8] = []
        for d in digits.dropFirst() {
            switch d {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(d - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): values.append(d - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): values.append(d - 55)
            default: return nil
            }
        }
        switch values.count {
        case 3: self.init(red: values[0] * 17, green: values[1] * 17, blue: values[2] * 17)
        case 6, 8:
            let bytes = stride(from: 0, to: values.count, by: 2).map { values[$0] << 4 | values[$0 + 1] }
            self.init(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes.count == 4 ? bytes[3] : 255)
        default: return nil
        }
    }

    /// The colour as the server writes it: `#rrggbb` in lower case, or `#rrggbbaa` when alpha is not 255.
    public var description: String {
        withHex { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the `#rrggbb` or `#rrggbbaa` text as UTF-8, without allocating.
    public func withHex<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 9) { text in
            func put(_ b: UInt8, at i: Int) {
                text[i] = digits.utf8Start[Int(b >> 4)]
                text[i + 1] = digits.utf8Start[Int(b & 15)]
            }
            text[0] = UInt8(ascii: "#")
            put(red, at: 1)
            put(green, at: 3)
            put(blue, at: 5)
            if alpha != 255 { put(alpha, at: 7) }
            return body(UnsafeBufferPointer(rebasing: text[..<(alpha == 255 ? 7 : 9)]))
        }
    }

    /// The session tint until an owner sets one: `#007aff`.
    public static let defaultTint = Color(red: 0x00, green: 0x7a, blue: 0xff)
}
