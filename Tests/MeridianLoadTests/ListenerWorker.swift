@testable import MeridianLoad

/// A worker with one joined listener (client 5, in session 0 and city 0) whose measurement
/// window covers now, for feeding it frames by hand.
func listenerWorker(draggers: Int, interest: LoadInterest = .everything) -> LoadWorker {
    var c = LoadConfiguration()
    c.clients = 1
    c.draggers = draggers
    c.interest = interest
    c.rampUp = 0
    c.settle = 0
    c.duration = 100
    let timeline = LoadTimeline(start: LoadClock.nowMicros() - 1_000_000, configuration: c)
    let w = LoadWorker(configuration: c, timeline: timeline, clientIndices: [5])
    w.clients[5] = SimulatedClient(index: 5, session: 0, role: .listener)
    w.clients[5]!.phase = .joined
    w.clients[5]!.movesSeen = Array(repeating: -1, count: draggers)
    return w
}
