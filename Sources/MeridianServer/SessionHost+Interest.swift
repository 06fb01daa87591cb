import MeridianCore
import MeridianProtocol
import MeridianTransport

/// Viewport interest (SPEC §4.7): members that receive only the annotations in their view that
/// their filter matches, or, with a filter alone, the annotations it matches.
/// Everything here runs only once a member asked for it; other sessions broadcast as before.
extension SessionHost {
    /// Queues `e`'s frame for the members that receive it: every member for an event not about
    /// one annotation, else the everything-members and the viewport members whose area holds
    /// the annotation before or after it (an `interest` message first when a drag brings it
    /// into the member's area, after when the event takes it out). Then a member whose own
    /// camera moved gets its area's change.
    func routeThroughInterest(
        _ e: Emitted, following: ArraySlice<Emitted>, _ frame: OutboundFrame, departed: Annotation?, superseding previous: OutboundFrame?,
        except skip: ConnectionID?, on server: any Outbound
    ) {
        let route = router!.route(e, in: session, departed: departed, following: following)
        for (member, seq) in route.skipped where member != skip {
            server.send(OutboundFrame(text: ServerMessage.skipped(seq: seq)), to: member)
        }
        if route.everyone {
            server.broadcast(frame, to: memberIDs, except: skip, superseding: previous, transient: e.conflation != nil)
            deliveriesOut += memberIDs.count
        } else {
            // The entering message shows the area as of just before the event; the leaving one as of the event.
            let before = e.isTransient ? e.seq : e.seq - 1
            for (member, annotation) in route.entering where member != skip {
                guard let view = router!.view(of: member) else { continue }
                server.send(OutboundFrame(text: ServerMessage.interest(
                    seq: before, view: view, entering: annotation, drags: route.enteringDrags)), to: member)
            }
            let everyone = everythingIDs
            server.broadcast(frame, to: everyone, except: skip, superseding: previous, transient: e.conflation != nil)
            server.broadcast(frame, to: route.recipients, except: skip, superseding: previous, transient: e.conflation != nil)
            deliveriesOut += everyone.count + route.recipients.count
            for member in route.leaving where member != skip {
                guard let view = router!.view(of: member) else { continue }
                server.send(OutboundFrame(text: ServerMessage.interest(
                    seq: e.seq, view: view, entered: [], left: [route.annotation!], complete: false, session: session)), to: member)
            }
        }
        if case .camera(.own, let pid, _, _) = e.event, let member = connection(of: pid), interests[member] != nil {
            refreshView(of: member, on: server)
        }
    }

    /// Keeps a large session's annotation index current (building it once the session grows
    /// past SessionHost.indexAbove annotations).
    func trackAnnotations(_ e: Emitted) {
        guard Self.isScoped(e.event) else { return }
        if annotationIndex != nil {
            InterestRouter<ConnectionID>.track(e, in: &annotationIndex!)
        } else if session.annotations.count >= Self.indexAbove {
            annotationIndex = InterestRouter<ConnectionID>.annotationIndex(of: session)
        }
    }

    /// Sets `member`'s interest. Returns its view and what its area holds (everything for a
    /// member that had no viewport interest or filter before, or when `complete`); nil for
    /// everything-interest without a filter.
    @discardableResult
    func setInterest(_ interest: Interest, of member: ConnectionID, complete: Bool) -> (view: InterestView, change: InterestRouter<ConnectionID>.AreaChange)? {
        everythingCache = nil
        guard interest.isNarrowed else {
            interests[member] = nil
            router?.remove(member)
            sentClusters[member] = nil
            return nil
        }
        if router == nil {
            router = InterestRouter(session: session, index: annotationIndex)
            annotationIndex = nil
        }
        let wasFiltered = interests.updateValue(interest, forKey: member) != nil
        let view = InterestView(interest, participant: participant(of: member).flatMap { session.participants[$0] })
        let change = router!.setView(view, of: member, seq: session.seq, complete: complete || !wasFiltered, in: session)
        return (view, change)
    }

    /// Answers an `interest` request: the member's new view and area (an `interest` message,
    /// complete when it had no viewport interest before), then clusters when it clusters; or
    /// why `asked` is invalid, nothing changed.
    func changeInterest(_ asked: Interest, of member: ConnectionID, on server: any Outbound) throws(SessionError) {
        let interest = try session.validated(asked)
        let wasFiltered = interests[member] != nil
        guard let (view, change) = setInterest(interest, of: member, complete: false) else {
            // Back to everything: the whole session, as a complete area.
            server.send(OutboundFrame(text: ServerMessage.interest(
                seq: session.seq, view: InterestView(Interest.everything, participant: nil), entered: session.orderedAnnotations,
                left: [], complete: true, session: session)), to: member)
            return
        }
        sentClusters[member] = nil
        send(change, view: view, announce: true, complete: !wasFiltered, to: member, on: server)
    }

    /// After the member's own camera moved: what entered and left its area, and its clusters.
    func refreshView(of member: ConnectionID, on server: any Outbound) {
        guard let interest = interests[member], let old = router?.view(of: member) else { return }
        let view = InterestView(interest, participant: participant(of: member).flatMap { session.participants[$0] })
        guard view != old else { return }
        let change = router!.setView(view, of: member, seq: session.seq, in: session)
        send(change, view: view, announce: view.clusters != old.clusters, complete: false, to: member, on: server)
    }

    /// An `interest` message when the area gained or lost annotations (or `announce`), then
    /// the clusters of a clustering member when they differ from those it has.
    private func send(
        _ change: InterestRouter<ConnectionID>.AreaChange, view: InterestView, announce: Bool, complete: Bool,
        to member: ConnectionID, on server: any Outbound
    ) {
        if announce || complete || !change.entered.isEmpty || !change.left.isEmpty {
            server.send(OutboundFrame(text: ServerMessage.interest(
                seq: session.seq, view: view, entered: change.entered, left: change.left, complete: complete, session: session)), to: member)
            router!.accountThrough(session.seq, for: member)
        }
        if view.clusters { sendClusters(to: member, view: view, on: server) }
    }

    /// On every tick: clustering members whose clusters changed get the new ones.
    func tickClusters(on server: any Outbound) {
        guard router?.takeClusterChange() == true else { return }
        for member in router!.clusterMembers {
            guard let view = router!.view(of: member) else { continue }
            sendClusters(to: member, view: view, on: server)
        }
    }

    /// The member's clusters, unless it was last sent the same view and clusters (its area moves
    /// cell by cell, so a pan within its cells sends nothing, and one across them always does).
    func sendClusters(to member: ConnectionID, view: InterestView, on server: any Outbound) {
        guard let cells = view.cells, let index = router?.clusters else { return }
        let clusters = index.clusters(in: cells)
        if let sent = sentClusters[member], sent.view == view, sent.clusters == clusters { return }
        sentClusters[member] = (view, clusters)
        server.send(OutboundFrame(text: ServerMessage.clusters(seq: session.seq, view: view, clusters)), to: member)
    }

    /// A viewport joiner's welcome: its view, and a snapshot of what its area holds.
    func filteredWelcome(ref: RequestRef, participant pid: ParticipantID, view: InterestView, entered: [Annotation]) -> OutboundFrame {
        let ids = Set(entered.lazy.map(\.id))
        return OutboundFrame(text: ServerMessage.welcome(
            ref: ref, session: session, participant: pid, resumedFrom: nil, annotations: ServerMessage.annotationsJSON(entered),
            view: view, dragsOf: ids.contains))
    }
}
