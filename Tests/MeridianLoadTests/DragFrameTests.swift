#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import MeridianLoad

/// The generator's one-pass reading of drag events (``DragFrame``) against the field-by-field
/// scanner it replaced on the hot path (``FrameScanner``), over both servers' layouts and the
/// cases that leave the fast path.
@Suite("meridian load reads a drag event in one pass")
struct DragFrameTests {
    private func read(_ text: String) -> DragFrame {
        Array(text.utf8).withUnsafeBytes { DragFrame($0) }
    }

    /// What ``FrameScanner`` makes of the same bytes.
    private func scanned(_ text: String) -> (seq: UInt64?, transient: Bool, annotation: UInt64?, state: DragFrame.State, latitude: Double?, longitude: Double?) {
        Array(text.utf8).withUnsafeBytes { bytes in
            let m = FrameScanner(bytes: bytes)
            let state: DragFrame.State =
                m.contains(Needle(#""state":"starting""#)) ? .starting
                : m.contains(Needle(#""state":"dragging""#)) ? .dragging
                : m.contains(Needle(#""state":"ending""#)) ? .ending : .other
            let id = m.offset(after: Needle(#""id":"d"#)).flatMap { _ in m.integer(after: Needle(#""id":"d"#)) }
            func number(_ key: Needle) -> Double? {
                guard let i = m.offset(after: key) else { return nil }
                let digits = String(decoding: bytes[i...].prefix { $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "}") }, as: UTF8.self)
                return strtod(digits, nil)
            }
            return (m.integer(after: .seq), m.contains(.transient), id, state,
                    number(Needle(#""latitude":"#)), number(Needle(#""longitude":"#)))
        }
    }

    private func expectSame(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let d = read(text)
        let s = scanned(text)
        #expect(d.seq == s.seq, "seq of \(text)", sourceLocation: sourceLocation)
        #expect(d.transient == s.transient, "transient of \(text)", sourceLocation: sourceLocation)
        #expect(d.annotation == s.annotation, "annotation of \(text)", sourceLocation: sourceLocation)
        #expect(d.state == s.state, "state of \(text)", sourceLocation: sourceLocation)
        #expect(d.latitude == s.latitude, "latitude of \(text)", sourceLocation: sourceLocation)
        #expect(d.longitude == s.longitude, "longitude of \(text)", sourceLocation: sourceLocation)
    }

    @Test func meridiansAndTheBaselinesLayoutsReadAsTheScannerReadsThem() {
        for state in ["starting", "dragging", "ending", "none", "canceling"] {
            for move in [0, 1, 7, 60, 999, 89_999] {
                let lat = MoveCounter.latitude(move: move)
                for lon in [0.0, 12.345678, 99.999999, 0.000001, 41.5] {
                    // Meridian: participant, and an ending's revision after the coordinate.
                    expectSame(#"{"type":"drag","seq":\#(move + 3),"id":"d\#(move % 20)","participant":"p12","state":"\#(state)","coordinate":{"latitude":\#(lat),"longitude":\#(lon)},"revision":9}"#)
                    // The baseline: the request echoed with its seq, no participant.
                    expectSame(#"{"type":"drag","seq":\#(move + 3),"id":"d\#(move % 20)","state":"\#(state)","coordinate":{"latitude":\#(lat),"longitude":\#(lon)}}"#)
                }
            }
        }
    }

    @Test func transientMarksOtherIdsOddNumbersAndOtherOrdersAreRead() {
        expectSame(#"{"type":"drag","seq":5,"transient":true,"id":"d3","participant":"p1","state":"dragging","coordinate":{"latitude":0.004,"longitude":1.5}}"#)
        expectSame(#"{"type":"drag","seq":5,"id":"flag","participant":"p1","state":"dragging","coordinate":{"latitude":0.004,"longitude":1.5}}"#)
        // Not one of the load tool's annotations (the scanner took the 3).
        #expect(read(#"{"type":"drag","seq":5,"id":"d3x","state":"dragging","coordinate":{"latitude":0.004,"longitude":1.5}}"#).annotation == nil)
        // A transient mark after the coordinate.
        expectSame(#"{"type":"drag","seq":5,"id":"d3","state":"dragging","coordinate":{"latitude":0.004,"longitude":1.5},"transient":true}"#)
        expectSame(#"{"type":"drag","seq":5,"id":"d3","state":"dragging","coordinate":{"latitude":-33.86785,"longitude":-151.20732}}"#)
        expectSame(#"{"type":"drag","seq":5,"id":"d3","state":"dragging","coordinate":{"latitude":1e-05,"longitude":2.5E+1}}"#)
        expectSame(#"{"type":"drag","seq":5,"id":"d3","state":"dragging","coordinate":{"latitude":0.12345678901234567,"longitude":3}}"#)
        // Keys in another order, a name with an escaped quote before them, no coordinate.
        expectSame(#"{"type":"drag","participant":"p\"1","state":"ending","id":"d2","seq":12,"coordinate":{"longitude":4.25,"latitude":0.06}}"#)
        expectSame(#"{"type":"drag","seq":8,"id":"d1","participant":"p1","state":"ending"}"#)
    }

    @Test func theFastPathReadsExactValues() {
        let d = read(#"{"type":"drag","seq":41,"id":"d17","participant":"p2","state":"dragging","coordinate":{"latitude":0.059,"longitude":87.654321}}"#)
        #expect(d.seq == 41)
        #expect(d.annotation == 17)
        #expect(d.state == .dragging)
        #expect(d.latitude == 0.059)
        #expect(d.longitude == 87.654321)
        #expect(!d.transient)
        #expect(MoveCoding.world.move(latitude: d.latitude!) == 59)
    }

    @Test func aCutMessageReadsWhatItHolds() {
        let d = read(#"{"type":"drag","seq":41,"id":"d17","participant":"p2","state":"dragg"#)
        #expect(d.seq == 41)
        #expect(d.annotation == 17)
        #expect(d.latitude == nil)
    }
}
