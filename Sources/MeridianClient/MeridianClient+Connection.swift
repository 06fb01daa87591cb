import Foundation
import MeridianCore
import MeridianProtocol

extension MeridianClient {
    /// Opens a transport and joins (resuming from `resume` when given). Nothing but the answer
    /// can arrive before the welcome, since the connection is in no session yet.
    func handshake(resume: (epoch: String, seq: UInt64)?) throws -> (any ClientTransport, Welcome) {
        let t = makeTransport(shared.withLock { $0.currentToken })
        try t.connect(timeout: configuration.connectTimeout)
        var join: [String: JSONValue] = [
            "type": .string("join"), "ref": .string("join"), "session": .string(configuration.session),
            "name": .string(configuration.name), "hidden": .bool(configuration.hidden),
            // A move of the session to another node of a cluster is taken in place (§4.4.1).
            "handover": .bool(true),
        ]
        if let role = configuration.role { join["role"] = .string(role.rawValue) }
        if let token = shared.withLock({ $0.currentToken }) { join["token"] = .string(token) }
        if let color = configuration.color { join["color"] = .string(color) }
        if let interest = configuration.interest { join["interest"] = .interest(interest) }
        if let resume {
            join["resume"] = .object(["epoch": .string(resume.epoch), "seq": .number(Double(resume.seq))])
        }
        // The id of the last connection: its undo history follows this one (protocol §6.9).
        if let previous = shared.withLock({ $0.lastWelcome?.participant }) { join["previousParticipant"] = .string(previous) }
        t.send(String(decoding: JSONValue.object(join).encoded, as: UTF8.self))
        do {
            switch try t.receive(timeout: configuration.requestTimeout) {
            case .text(let text):
                switch try IncomingMessage.decode(text) {
                case .welcome(_, let welcome): return (t, welcome)
                case .error(_, let error):
                    throw error
                default: throw ClientError.protocolViolation("expected the answer to join")
                }
            case .closed: throw ClientError.disconnected
            }
        } catch {
            t.close()
            throw error
        }
    }

    /// Reads until the client is closed, reconnecting whenever the connection ends or a gap shows.
    func readLoop(_ first: any ClientTransport) {
        var t = first
        while true {
            var code: UInt16?
            reading: while true {
                let message: TransportMessage
                do { message = try t.receive(timeout: .seconds(3600)) } catch { continue }
                switch message {
                case .text(let text):
                    if !handle(text) {
                        // A seq gap: this connection lost events. Drop it and resume.
                        t.close()
                        break reading
                    }
                case .closed(let c):
                    code = c
                    break reading
                }
            }
            guard let next = reconnect(after: code) else {
                emit(.didClose)
                updatesContinuation.finish()
                return
            }
            t = next
        }
    }

    /// Applies one message; false when it reveals missing events.
    private func handle(_ text: String) -> Bool {
        guard let message = try? IncomingMessage.decode(text) else { return true }
        switch message {
        case .ack(let ref, let seq, let camera):
            if let ref = ref.numberValue.flatMap(Int.init(exactly:)) {
                finish(ref: ref) { _ in .success(Ack(seq: seq, camera: camera)) }
            }
        case .error(let ref, _) where ref.stringValue == "join":
            // The join made for a move was refused: join again as after a close, with backoff.
            return !shared.withLock { shared in
                defer { shared.awaitingHandover = false }
                return shared.awaitingHandover
            }
        case .error(let ref, let error):
            if let ref = ref.numberValue.flatMap(Int.init(exactly:)) {
                finish(ref: ref) { _ in .failure(error) }
            }
        case .event(let e):
            let result = shared.withLock { $0.mirror?.apply(e) ?? .stale }
            switch result {
            case .applied:
                delegate?.client(self, didApply: e)
                emit(ClientUpdate(e))
            case .stale: break
            case .gap: return false
            }
        case .live(let live):
            shared.withLock { $0.mirror?.applyLive(live) }
            emit(.liveStateRestored)
        case .area(let message):
            shared.withLock { $0.mirror?.applyArea(message) }
            emit(.areaDidChange(message))
        case .skipped(let seq):
            shared.withLock { $0.mirror?.skip(through: seq) }
        case .clusters(let message):
            emit(.clustersDidChange(message))
        case .moved:
            // The server joins this connection again (the join's ref is "join"): requests not
            // answered yet went to the session's old life, as at a 4012 close.
            let closed = shared.withLock { shared in
                shared.awaitingHandover = true
                return shared.isClosed
            }
            failPending(closed ? .closed : .disconnected)
            emit(.didDisconnect(code: 4012))
        case .welcome(_, let welcome):
            let moved = shared.withLock { shared in
                guard shared.awaitingHandover else { return false }
                shared.awaitingHandover = false
                shared.adopt(welcome)
                return true
            }
            if moved { emit(.didConnect(welcome)) }
        }
        return true
    }

    /// Waits with backoff and joins again with `resume`; nil when closed or out of attempts.
    private func reconnect(after code: UInt16?) -> (any ClientTransport)? {
        let closed = shared.withLock { shared in
            shared.transport = nil
            return shared.isClosed
        }
        failPending(closed ? .closed : .disconnected)
        if closed { return nil }
        emit(.didDisconnect(code: code))
        // What the close code says to do (SPEC §10, the server's own table): reconnect, at once
        // or with backoff, with a new token, or stay closed and say why.
        let advice = CloseCode.advice(after: code)
        if let code, !advice.reconnects, advice != .renewToken || !renewToken() {
            stop(code: code, advice: advice)
            return nil
        }
        var attempt = 0
        while true {
            if let max = configuration.reconnect.maxAttempts, attempt >= max { close(); return nil }
            let wait = attempt == 0 && advice == .reconnectNow ? .zero : configuration.reconnect.delay(attempt: attempt)
            attempt += 1
            // Waits out the backoff unless the client is closed meanwhile; a close is final, so
            // its wake-up is passed on to any other waiter.
            if !shared.withLock({ $0.isClosed }), closing.wait(timeout: .now() + wait.timeInterval) == .success {
                closing.signal()
            }
            let (resume, closed) = shared.withLock { shared in
                (shared.lastWelcome.map { (epoch: $0.epoch, seq: shared.mirror?.seq ?? $0.seq) }, shared.isClosed)
            }
            if closed { return nil }
            let t: any ClientTransport, welcome: Welcome
            do {
                (t, welcome) = try handshake(resume: resume)
            } catch let error as ClientError where ["unauthorized", "token_expired"].contains(error.code ?? "") {
                // The token no longer admits this client: only a new one can help.
                if renewToken() { continue }
                stop(code: CloseCode.tokenExpired, advice: .renewToken)
                return nil
            } catch let error as ClientError where error.code == "forbidden" {
                // The token does not admit this session: retrying cannot help.
                close()
                return nil
            } catch {
                continue
            }
            let closedMeanwhile = shared.withLock { shared in
                guard !shared.isClosed else { return true }
                shared.transport = t
                shared.adopt(welcome)
                return false
            }
            if closedMeanwhile { t.close(); return nil }
            emit(.didConnect(welcome))
            return t
        }
    }

    /// Asks the app for a new token (``ClientConfiguration/renewToken``); true when one came.
    private func renewToken() -> Bool {
        guard let token = configuration.renewToken?() else { return false }
        shared.withLock { $0.currentToken = token }
        return true
    }

    /// Stays closed after a close the client must not answer by reconnecting, saying why.
    private func stop(code: UInt16, advice: CloseCode.Advice) {
        emit(.didStop(code: code, advice: advice))
        close()
    }
}
