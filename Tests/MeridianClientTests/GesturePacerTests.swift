import MeridianClient
import MeridianCore
import MeridianMapBinding
import Testing

@Suite("Pacing a map's gestures")
struct GesturePacerTests {
    let start = ContinuousClock.now

    func at(_ ms: Double) -> ContinuousClock.Instant { start + .milliseconds(ms) }
    func move(_ i: Int) -> SessionRequest { .drag(id: "a", state: .dragging, coordinate: Coordinate(latitude: Double(i) / 1000, longitude: 0)) }

    @Test func aGestureAt120HzGoesOutAtMostAtTheRateAndEndsAtItsLastPosition() {
        var pacer = GesturePacer(stepsPerSecond: 100)
        var sent: [(ms: Double, request: SessionRequest)] = []
        // One second of 120 Hz steps; the timer fires whenever a step is due.
        var ms = 0.0
        for i in 0..<120 {
            ms = Double(i) * 1000 / 120
            while let due = pacer.nextDue, due <= at(ms) {
                let dueMs = Double((due - start).components.attoseconds) / 1e15 + Double((due - start).components.seconds) * 1000
                sent += pacer.due(at: due).map { (dueMs, $0) }
            }
            sent += pacer.offer(move(i), at: at(ms)).map { (ms, $0) }
        }
        // After the last step the waiting one (the latest position) goes out at its time.
        if let due = pacer.nextDue { sent += pacer.due(at: due).map { (ms + 10, $0) } }
        #expect(sent.count <= 101 && sent.count >= 90, "\(sent.count) steps sent")
        for (a, b) in zip(sent, sent.dropFirst()) { #expect(b.ms - a.ms >= 9.999, "steps \(a.ms) and \(b.ms) closer than 10 ms") }
        #expect(sent.last?.request == move(119), "the last position was lost")
        #expect(pacer.nextDue == nil)
    }

    @Test func theEndOfAGestureDropsItsWaitingStepAndOthersGoOutAtOnce() {
        var pacer = GesturePacer(stepsPerSecond: 10)
        #expect(pacer.offer(move(1), at: at(0)) == [move(1)])
        #expect(pacer.offer(move(2), at: at(10)) == [])
        let camera = Camera(center: Coordinate(latitude: 1, longitude: 2), zoom: 3)
        #expect(pacer.offer(.cameraChanging(target: .own, camera: camera), at: at(20)) == [])
        // Discrete requests are never held back.
        #expect(pacer.offer(.select(id: "b"), at: at(30)) == [.select(id: "b")])
        let ending = SessionRequest.drag(id: "a", state: .ending, coordinate: Coordinate(latitude: 0.002, longitude: 0))
        #expect(pacer.offer(ending, at: at(40)) == [ending])
        // Only the camera step still waits, due 100 ms after the first step.
        #expect(pacer.due(at: at(99)) == [])
        #expect(pacer.due(at: at(100)) == [.cameraChanging(target: .own, camera: camera)])
        #expect(pacer.nextDue == nil)
    }

    @Test func stepsOfTwoGesturesTakeTurns() {
        var pacer = GesturePacer(stepsPerSecond: 10)
        let other = SessionRequest.drag(id: "b", state: .dragging, coordinate: Coordinate(latitude: 1, longitude: 1))
        _ = pacer.offer(move(1), at: at(0))
        _ = pacer.offer(move(2), at: at(1))
        _ = pacer.offer(other, at: at(2))
        _ = pacer.offer(move(3), at: at(3))
        #expect(pacer.due(at: at(100)) == [move(3)])
        #expect(pacer.due(at: at(200)) == [other])
    }
}
