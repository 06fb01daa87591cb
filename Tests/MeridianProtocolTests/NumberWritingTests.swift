import MeridianCore
import MeridianProtocol
import Testing

/// SPEC §7: numbers are written in the shortest form that reads back as the same double.
@Suite("Writing numbers")
struct NumberWritingTests {
    func written(_ n: Double) -> String {
        var out = JSONOutput()
        out.number(n)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    @Test func commonValues() {
        let cases: [(Double, String)] = [
            (0, "0"), (-0.0, "0"), (10, "10"), (-3, "-3"), (51.5007, "51.5007"), (-0.1276, "-0.1276"), (0.1, "0.1"),
            (45.123456, "45.123456"), (0.0001, "0.0001"), (0.00012, "0.00012"), (1.0 / 3.0, "0.3333333333333333"),
            (123456789012345.6, "123456789012345.6"), (9_007_199_254_740_991, "9007199254740991"),
            (9_007_199_254_740_992, "9.007199254740992e+15"), (1e-7, "1e-07"), (2.5e-5, "2.5e-05"), (1e300, "1e+300"),
            (.infinity, "null"), (.nan, "null"),
        ]
        for (value, text) in cases { #expect(written(value) == text, "\(value)") }
    }

    @Test func randomValuesReadBackExactlyAndAreNoLongerThanSwiftsOwn() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<50_000 {
            let scale = [1e-5, 1e-3, 1, 90, 180, 1e6, 1e12, 1e16][Int.random(in: 0..<8, using: &rng)]
            let value = Double.random(in: -scale...scale, using: &rng)
            let text = written(value)
            #expect(Double(text) == value, "\(value) written as \(text)")
            #expect(text.count <= value.description.count + (value.description.hasSuffix(".0") ? 0 : 0), "\(value): \(text) is longer than \(value.description)")
        }
        for digits in 1...7 {  // coordinates as apps send them
            let step = Double(sign: .plus, exponent: 0, significand: 1) / Double(Int(pow10(digits)))
            for i in 0..<2_000 {
                let value = Double(i) * step * 37 - 90
                let text = written(value)
                #expect(Double(text) == value && !text.contains("e"), "\(value) written as \(text)")
            }
        }
    }

    private func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { r, _ in r * 10 } }
}
