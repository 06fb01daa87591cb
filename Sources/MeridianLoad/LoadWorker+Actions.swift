import MeridianClientTransport

extension LoadWorker {
    var moveInterval: UInt64 { UInt64(1_000_000 / max(configuration.dragRate, 0.001)) }

    /// With ``LoadConfiguration/stagger``, how long a dragger waits after its first grant before
    /// its first move: its own fraction of the move interval (its index scattered by a
    /// multiplicative hash), so that draggers granted together move out of step from then on.
    func firstGrantDelay(of id: Int) -> UInt64 {
        guard configuration.stagger, let c = clients[id], !c.granted else { return 0 }
        return Self.staggerDelay(index: c.index, interval: moveInterval)
    }

    /// Client `index`'s share of `interval` (in [0, interval)): indices in a row land far apart.
    static func staggerDelay(index: Int, interval: UInt64) -> UInt64 {
        let fraction = UInt64(truncatingIfNeeded: index &* 2_654_435_761) % 1024
        return interval * fraction / 1024
    }

    func tick(now: UInt64, on group: ClientGroupLoop) {
        if stopped {
            // The final tally, while every worker's connections are still open.
            if board.result == nil { board.finish(WorkerBoard.Final(stats: report, clientSeqs: clientSeqs())) }
            return
        }
        let elapsed = lastTick == 0 ? 0 : now - lastTick
        lastTick = now
        // Ramp-up: start the connections whose time has come (bounded per tick).
        var started = 0
        while connectsStarted < connectOrder.count, started < 64 {
            let index = connectOrder[connectsStarted]
            guard timeline.connectTime(of: index, clients: configuration.clients) <= now else { break }
            clients[index]!.phase = .connecting
            clients[index]!.connectStartedAt = now
            group.connect(index)
            connectsStarted += 1
            started += 1
        }
        if now - lastPublish >= 200_000 {
            lastPublish = now
            publish()
        }
        guard now < timeline.windowEnd else { return }
        for index in actors { act(index, now, on: group) }
        churn(elapsed: elapsed, on: group)
    }

    private func act(_ index: Int, _ now: UInt64, on group: ClientGroupLoop) {
        guard let c = clients[index], c.phase == .joined, c.ready, now >= c.nextActionAt else { return }
        switch c.role {
        case .dragger(let annotation):
            drag(index, annotation, c, now, on: group)
        case .cameraMover:
            let step = c.cameraStep % 12
            let camera = cameraJSON(c, step: step)
            if step == 0 {
                send(#"{"type":"camera.begin","ref":\#(ref(index, .camera))}"#, to: index, on: group)
            } else if step == 11 {
                send(#"{"type":"camera.end","ref":\#(ref(index, .camera)),"camera":\#(camera)}"#, to: index, on: group)
            } else {
                send(#"{"type":"camera.changing","ref":\#(ref(index, .camera)),"camera":\#(camera)}"#, to: index, on: group)
            }
            clients[index]!.cameraStep += 1
            clients[index]!.nextActionAt = now + UInt64(1_000_000 / max(configuration.cameraRate, 0.001))
        case .selector:
            let selecting = c.cameraStep % 2 == 0
            if selecting, configuration.draggers > 0 {
                send(#"{"type":"select","ref":\#(ref(index, .select)),"id":"d0"}"#, to: index, on: group)
            } else {
                send(#"{"type":"deselect","ref":\#(ref(index, .select))}"#, to: index, on: group)
            }
            clients[index]!.cameraStep += 1
            clients[index]!.nextActionAt = now + UInt64(configuration.selectInterval * 1_000_000)
        case .listener:
            break
        }
    }

    /// A camera mover's camera at `step`: panning east in small steps, around its city on a big map.
    private func cameraJSON(_ c: SimulatedClient, step: Int) -> String {
        if configuration.interest == .viewport {
            let centre = cities.centre(c.city)
            let lon = centre.longitude + Double(step) * 0.001
            return #"{"center":{"latitude":\#(centre.latitude),"longitude":\#(lon)},"zoom":\#(LoadInterest.zoom)}"#
        }
        let lon = Double(c.index % 100) + Double(step) * 0.01
        return #"{"center":{"latitude":10,"longitude":\#(lon)},"zoom":12}"#
    }

    private func drag(_ index: Int, _ n: Int, _ c: SimulatedClient, _ now: UInt64, on group: ClientGroupLoop) {
        let annotation = "d\(n)"
        switch c.drag {
        case .idle:
            send(#"{"type":"drag","ref":\#(ref(index, .dragStart)),"id":"\#(annotation)","state":"starting"}"#, to: index, on: group)
            clients[index]!.drag = .awaitingGrant
            // Should no answer come (a server busy with a join storm can take seconds), try again later.
            clients[index]!.nextActionAt = now + 10_000_000
        case .awaitingGrant:
            clients[index]!.drag = .idle
        case .moving(let left):
            // The longitude carries the send time: receivers measure latency from it. The latitude
            // carries the move's number in its drag (1, 2, …): receivers count the moves they missed.
            let lat = moveCodings[n].latitude(move: configuration.movesPerDrag - left + 1)
            let lon = moveCodings[n].longitude(sentAt: now)
            if timeline.inWindow(now) { stats.movesSent += 1 }
            send(#"{"type":"drag","ref":\#(ref(index, .dragMove)),"id":"\#(annotation)","state":"dragging","coordinate":{"latitude":\#(lat),"longitude":\#(lon)}}"#, to: index, on: group)
            clients[index]!.drag = left > 1 ? .moving(left: left - 1) : .ending
            clients[index]!.nextActionAt = max(c.nextActionAt + moveInterval, now - moveInterval)
        case .ending:
            // Committed at the last move's number, so receivers can tell the moves they missed at the end.
            let lat = moveCodings[n].latitude(move: configuration.movesPerDrag)
            let lon = moveCodings[n].origin.longitude
            send(#"{"type":"drag","ref":\#(ref(index, .dragEnd)),"id":"\#(annotation)","state":"ending","coordinate":{"latitude":\#(lat),"longitude":\#(lon)}}"#, to: index, on: group)
            clients[index]!.drag = .idle
            clients[index]!.nextActionAt = c.nextActionAt + moveInterval
        }
    }

    /// Leave-and-rejoin churn among listeners, at this worker's share of the rate.
    private func churn(elapsed: UInt64, on group: ClientGroupLoop) {
        guard configuration.churnRate > 0, !listeners.isEmpty else { return }
        churnCredit += configuration.churnRate / Double(max(configuration.threads, 1)) * Double(elapsed) / 1e6
        while churnCredit >= 1 {
            churnCredit -= 1
            let index = listeners[Int.random(in: 0..<listeners.count)]
            guard clients[index]?.phase == .joined else { continue }
            clients[index]!.phase = .leaving
            stats.churned += 1
            group.close(index, code: 1000)
        }
    }
}
