import MeridianTransport
import Testing

/// The client address behind trusted reverse proxies (X-Forwarded-For), as pure functions.
@Suite struct ClientAddressTests {
    static let proxies = ["10.0.0.0/8", "192.0.2.7", "fd00::/8"].compactMap(AddressRange.init)

    @Test func rangesParseAndHoldTheirAddresses() {
        #expect(Self.proxies.count == 3)
        let ten = AddressRange("10.0.0.0/8")!
        #expect(ten.contains("10.255.1.2") && !ten.contains("11.0.0.1") && ten.contains("::ffff:10.1.2.3"))
        #expect(AddressRange("192.0.2.7")!.contains("192.0.2.7") && !AddressRange("192.0.2.7")!.contains("192.0.2.8"))
        let v6 = AddressRange("fd00::/8")!
        #expect(v6.contains("fd12:3456::1") && v6.contains("[fd00::1]") && !v6.contains("fe80::1") && !v6.contains("10.0.0.1"))
        #expect(AddressRange("0.0.0.0/0")!.contains("203.0.113.9"))
        for bad in ["", "10.0.0.0/33", "10.0.0/8", "example.com", "fd00::/129", "10.0.0.1/x"] { #expect(AddressRange(bad) == nil, "\(bad)") }
    }

    @Test func theRightmostUntrustedHopIsTheClient() {
        let resolve = { (peer: String, header: String?) in ClientAddress.resolve(peer: peer, forwardedFor: header, trusted: Self.proxies) }
        // Straight from a client: the header is whatever it wrote, and ignored.
        #expect(resolve("203.0.113.9", "1.2.3.4") == "203.0.113.9")
        // Through one trusted proxy.
        #expect(resolve("10.0.0.5", "198.51.100.4") == "198.51.100.4")
        // Through two (the client wrote a first entry to pass for another address).
        #expect(resolve("10.0.0.5", "6.6.6.6, 198.51.100.4, 192.0.2.7") == "198.51.100.4")
        // Every hop trusted: the leftmost; no header: the proxy itself.
        #expect(resolve("10.0.0.5", "10.1.1.1, 10.2.2.2") == "10.1.1.1")
        #expect(resolve("10.0.0.5", nil) == "10.0.0.5")
        // A hop that is not an address ends the walk at the last trusted one.
        #expect(resolve("10.0.0.5", "198.51.100.4, unknown") == "10.0.0.5")
        #expect(resolve("::ffff:10.0.0.5", "2001:db8::1") == "2001:db8::1")
        // Nobody trusted: never the header.
        #expect(ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: "198.51.100.4", trusted: []) == "10.0.0.5")
    }
}
