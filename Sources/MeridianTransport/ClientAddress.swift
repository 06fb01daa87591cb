#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address with a prefix length: `10.0.0.0/8`, `192.0.2.7` (one address),
/// `fd00::/8`. An IPv4 range also holds the IPv4-mapped IPv6 form of its addresses.
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    /// The network's bytes (4 or 16) and how many leading bits count.
    let bytes: [UInt8]
    let prefix: Int
    public let description: String

    /// Parses `ADDRESS` or `ADDRESS/PREFIX`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = Self.parse(String(parts[0])) else { return nil }
        let prefix: Int
        if parts.count == 2 {
            guard let n = Int(parts[1]), (0...bytes.count * 8).contains(n) else { return nil }
            prefix = n
        } else {
            prefix = bytes.count * 8
        }
        self.bytes = bytes
        self.prefix = prefix
        description = text
    }

    /// Whether `address` (as `lws_get_peer_simple` or X-Forwarded-For writes it) is in the range.
    public func contains(_ address: String) -> Bool {
        guard var other = Self.parse(address) else { return false }
        // ::ffff:a.b.c.d is the IPv4 address a.b.c.d.
        if bytes.count == 4, other.count == 16, other[0..<10].allSatisfy({ $0 == 0 }), other[10] == 0xFF, other[11] == 0xFF {
            other = Array(other[12...])
        }
        guard other.count == bytes.count else { return false }
        for bit in 0..<prefix where (bytes[bit / 8] ^ other[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
        return true
    }

    /// The address's bytes: 4 for IPv4, 16 for IPv6 (brackets and a zone are allowed).
    static func parse(_ text: String) -> [UInt8]? {
        var address = text.trimmingCharacters(in: " \t")
        if address.hasPrefix("["), let end = address.firstIndex(of: "]") { address = String(address[address.index(after: address.startIndex)..<end]) }
        if let zone = address.firstIndex(of: "%") { address = String(address[..<zone]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        var s = Substring(self)
        while let first = s.first, characters.contains(first) { s = s.dropFirst() }
        while let last = s.last, characters.contains(last) { s = s.dropLast() }
        return String(s)
    }
}

/// Who a connection is from, behind reverse proxies.
public enum ClientAddress {
    /// The client's address: the TCP peer, unless that is a trusted proxy sending
    /// `X-Forwarded-For`; then the rightmost address of that header that is not itself a
    /// trusted proxy (the addresses left of it could be anything the client wrote). An entry
    /// that is not an address ends the walk at the last trusted hop.
    public static func resolve(peer: String, forwardedFor: String?, trusted: [AddressRange]) -> String {
        guard !trusted.isEmpty, let forwardedFor, trusted.contains(where: { $0.contains(peer) }) else { return peer }
        var client = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            let hop = String(entry).trimmingCharacters(in: " \t")
            guard AddressRange.parse(hop) != nil else { return client }
            client = hop
            if !trusted.contains(where: { $0.contains(hop) }) { return hop }
        }
        return client
    }
}
