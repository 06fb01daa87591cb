import Testing
@testable import MeridianTransport

@Suite struct OutboundFrameTests {
    @Test func shortPayloadUsesSevenBitLength() {
        let frame = OutboundFrame(text: Array("hello".utf8))
        #expect(frame.bytes == [0x81, 5] + Array("hello".utf8))
        #expect(frame.payloadCount == 5)
    }

    @Test func mediumPayloadUsesSixteenBitLength() {
        let frame = OutboundFrame(text: [UInt8](repeating: 0x61, count: 300))
        #expect(Array(frame.bytes.prefix(4)) == [0x81, 126, 0x01, 0x2C])
        #expect(frame.bytes.count == 304)
    }

    @Test func largePayloadUsesSixtyFourBitLength() {
        let frame = OutboundFrame(text: [UInt8](repeating: 0x61, count: 70_000))
        #expect(Array(frame.bytes.prefix(10)) == [0x81, 127, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70])
        #expect(frame.bytes.count == 70_010)
    }
}
