/// The code that owns one libwebsockets context and everything lws calls back into: the
/// server, a client connection, a client group.
///
/// It is confined to its ``ServiceThread``: every method here, its lws callbacks and the work
/// items handed to ``ServiceThread/execute(_:)`` run on that thread, and nothing else calls
/// into it. The thread holds it strongly from ``ServiceThread/start(_:)`` until after
/// `lws_context_destroy`, so the unretained pointer a context keeps as its user data stays valid.
package protocol ServiceLoop: AnyObject, SendableMetatype {
    /// Called every ``ServiceStart/tickInterval`` while the loop runs.
    func serviceTick()
    /// When true, ``servicePassEnded(began:)`` is told when each pass began (a clock read per pass).
    static var timesServicePasses: Bool { get }
    /// After each `lws_service` pass.
    func servicePassEnded(began: ContinuousClock.Instant)
    /// After each `lws_service` pass, before the next: work the loop spreads over passes (the
    /// server's received messages waiting for their turn).
    func serviceAfterPass()
    /// After the work handed to ``ServiceThread/execute(_:)`` ran, before the next pass (which
    /// may sleep until a socket or timer wakes it).
    func serviceAfterWork()
    /// The loop has ended; the context is about to be destroyed (which delivers the close
    /// callbacks of connections still open).
    func serviceWillDestroyContext()
    /// The context is destroyed: free what lws pointed at (names, protocol arrays, a foreign loop).
    func serviceDidDestroyContext()
}

extension ServiceLoop {
    package func serviceTick() {}
    package static var timesServicePasses: Bool { false }
    package func servicePassEnded(began: ContinuousClock.Instant) {}
    package func serviceAfterPass() {}
    package func serviceAfterWork() {}
    package func serviceWillDestroyContext() {}
    package func serviceDidDestroyContext() {}
}

/// What a ``ServiceThread``'s set-up hands back, on the service thread, once the context exists.
package struct ServiceStart<Loop: ServiceLoop, Ready: Sendable> {
    /// The loop-confined owner of the context; it never leaves the service thread.
    package var loop: Loop
    /// The context, created on the service thread; destroyed there when the loop ends.
    package var context: OpaquePointer
    /// What ``ServiceThread/start(_:)`` returns to its caller (the server's bound port).
    package var ready: Ready
    /// How often ``ServiceLoop/serviceTick()`` is called; nil for no tick.
    package var tickInterval: Duration?

    package init(loop: Loop, context: OpaquePointer, ready: Ready, tickInterval: Duration? = nil) {
        self.loop = loop
        self.context = context
        self.ready = ready
        self.tickInterval = tickInterval
    }
}

extension ServiceStart where Ready == Void {
    package init(loop: Loop, context: OpaquePointer, tickInterval: Duration? = nil) {
        self.init(loop: loop, context: context, ready: (), tickInterval: tickInterval)
    }
}
