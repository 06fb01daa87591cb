@testable import MeridianTransport
import Testing

@Suite("When a broadcast may write at the end of the pass: the loop's load")
struct LoadGaugeTests {
    private let ms = Duration.milliseconds

    @Test func aLoopBelowTheRateIsLightAndOneAboveItIsNot() {
        var gauge = LoadGauge(limit: 100_000)  // 500 deliveries per 5 ms window
        let light = [
            gauge.update(now: ms(5), deliveries: 0),
            gauge.update(now: ms(10), deliveries: 499),  // 499 in 5 ms: below 100k/s
            gauge.update(now: ms(15), deliveries: 499 + 500),  // 500 in 5 ms: not below
            gauge.update(now: ms(20), deliveries: 999 + 10),
        ]
        #expect(light == [true, true, false, true])
    }

    @Test func aBurstInsideAWindowMakesTheLoopLoadedAtOnce() {
        var gauge = LoadGauge(limit: 100_000)
        let light = [
            gauge.update(now: ms(5), deliveries: 0),
            gauge.update(now: ms(6), deliveries: 499),
            gauge.update(now: ms(7), deliveries: 500),  // a window's worth in 2 ms
            gauge.update(now: ms(9), deliveries: 500),  // loaded until the window ends
            gauge.update(now: ms(40), deliveries: 600),  // 100 over 30 ms: light again
        ]
        #expect(light == [true, true, false, false, true])
    }

    @Test func aLongQuietWindowCountsItsWholeLength() {
        var gauge = LoadGauge(limit: 1_000)
        let light = [
            gauge.update(now: ms(5), deliveries: 0),
            gauge.update(now: ms(1005), deliveries: 900),  // the loop slept: 900 over a second
            gauge.update(now: ms(2005), deliveries: 1900),  // 1000 over the next: not below 1000/s
        ]
        #expect(light == [true, true, false])
    }

    @Test func aLimitOfZeroIsNeverLight() {
        var gauge = LoadGauge(limit: 0)
        let light = [gauge.update(now: ms(5), deliveries: 0), gauge.update(now: ms(5000), deliveries: 0)]
        #expect(light == [false, false])
    }
}
