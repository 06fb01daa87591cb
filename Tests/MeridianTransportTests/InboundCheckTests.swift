import Testing
@testable import MeridianTransport

@Suite struct InboundCheckTests {
    private func valid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Validator.isValid($0) }
    }

    @Test func utf8AgreesWithTheStandardLibraryOnEveryShortSequence() {
        // Every 1- and 2-byte input, and 3-byte inputs around the lead bytes with narrower ranges.
        var inputs: [[UInt8]] = (0...255).map { [UInt8($0)] }
        for a in 0...255 { for b in 0...255 { inputs.append([UInt8(a), UInt8(b)]) } }
        for lead: UInt8 in [0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF4, 0xF5] {
            for b in 0x70...0xC5 { for c in [0x41, 0x80, 0xBF, 0xC0] { inputs.append([lead, UInt8(b), UInt8(c)]) } }
        }
        for input in inputs {
            #expect(valid(input) == (String(validating: input, as: UTF8.self) != nil), "\(input)")
        }
    }

    @Test(arguments: [
        ([0xC0, 0xAF], false), ([0xE0, 0x80, 0xAF], false), ([0xED, 0xA0, 0x80], false),
        ([0xF4, 0x90, 0x80, 0x80], false), ([0xF8, 0x88, 0x80, 0x80, 0x80], false), ([0xE2, 0x82], false),
        ([0xF0, 0x9F, 0x98, 0x80], true), ([0xEF, 0xBF, 0xBF], true), ([0xF4, 0x8F, 0xBF, 0xBF], true),
    ] as [([UInt8], Bool)])
    func utf8EdgeCases(bytes: [UInt8], isValid: Bool) {
        #expect(valid(bytes) == isValid)
        #expect(valid(Array("long ASCII run ahead of it".utf8) + bytes) == isValid)
    }

    @Test func aCharacterMaySplitAnywhereButNotEndUnfinished() {
        let text = Array("{\"ref\":\"é😀€ — ok\"}".utf8)
        for cut in 0...text.count {
            var check = InboundCheck()
            let head = text[..<cut].withUnsafeBytes { check.text($0, first: true, last: false) }
            let tail = text[cut...].withUnsafeBytes { check.text($0, first: false, last: true) }
            #expect(head == nil && tail == nil, "cut at \(cut)")
        }
        var check = InboundCheck()
        let unfinished = Array("x😀".utf8.dropLast())
        #expect(unfinished.withUnsafeBytes { check.text($0, first: true, last: false) } == nil)
        #expect([UInt8]().withUnsafeBytes { check.text($0, first: false, last: true) } == .invalidUTF8)
        // A new message starts clean, whatever the previous one left.
        #expect(Array("ok".utf8).withUnsafeBytes { check.text($0, first: true, last: true) } == nil)
    }

    @Test func invalidBytesAreFoundInAnyPiece() {
        var check = InboundCheck()
        #expect(Array(repeating: UInt8(ascii: "a"), count: 4000).withUnsafeBytes { check.text($0, first: true, last: false) } == nil)
        #expect([UInt8(0xFF)].withUnsafeBytes { check.text($0, first: false, last: false) } == .invalidUTF8)
    }

    private func closeCheck(_ payload: [UInt8]) -> ProtocolViolation? {
        payload.withUnsafeBytes { InboundCheck.closePayload($0) }
    }

    @Test func closePayloads() {
        #expect(closeCheck([]) == nil)
        #expect(closeCheck([0x03, 0xE8]) == nil)
        #expect(closeCheck([0x03, 0xE8] + Array("bye ☂".utf8)) == nil)
        #expect(closeCheck([0x03])?.code == 1002)
        #expect(closeCheck([0x13, 0x88])?.code == 1002)  // 5000
        #expect(closeCheck([0x03, 0xE8, 0xFF])?.code == 1007)
    }

    @Test func closeCodesAClientMaySend() {
        let allowed = (0...UInt16.max).filter(InboundCheck.clientMaySend)
        #expect(allowed == Array(1000...1003) + Array(1007...1011) + Array(3000...4999))
    }
}
