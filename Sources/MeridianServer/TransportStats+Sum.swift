import MeridianTransport

extension TransportStats {
    /// Adds another transport's counters (several threads' transports make one server).
    mutating func add(_ other: TransportStats) {
        conflatedFrames += other.conflatedFrames
        slowConsumerCloses += other.slowConsumerCloses
        openConnections += other.openConnections
        deliveries += other.deliveries
        for (type, count) in other.messagesOut.enumerated() { messagesOut[type] += count }
        bytesQueued += other.bytesQueued
        messagesReceived += other.messagesReceived
        bytesReceived += other.bytesReceived
        queuedBytes += other.queuedBytes
        sharedFrameBytes += other.sharedFrameBytes
        writeBufferBytes += other.writeBufferBytes
        admittedConnections += other.admittedConnections
        refusedHandshakes += other.refusedHandshakes
        messagesWaited += other.messagesWaited
        inputThrottles += other.inputThrottles
        deferredWrites += other.deferredWrites
        directWrites += other.directWrites
        batchedWrites += other.batchedWrites
        batchedWritesHandedOn += other.batchedWritesHandedOn
        writeBatchFailure = max(writeBatchFailure, other.writeBatchFailure)
        writeSlicesSpent += other.writeSlicesSpent
        pausedAccepts += other.pausedAccepts
        heldHandshakes += other.heldHandshakes
        mostUpgradesInAPass = max(mostUpgradesInAPass, other.mostUpgradesInAPass)
        keepalivePings += other.keepalivePings
        idleCloses += other.idleCloses
        messagesWaiting += other.messagesWaiting
    }
}
