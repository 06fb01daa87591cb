import Dispatch
import MeridianClient
import MeridianCore
import MeridianSync

/// The model behind an app's map view: the map SDK's delegate callbacks go in (named after
/// MKMapViewDelegate, MGLMapViewDelegate and MKAnnotationView.DragState), the session's
/// requests come out paced to its rate limit, and ``model`` says what to draw.
///
/// - Cameras: `regionWillChange` / `regionIsChanging` / `regionDidChange` become the
///   participant's own `camera.begin` / `camera.changing` / `camera.end`; a `did` always
///   follows a `will` (one is sent first if the SDK skipped it).
/// - Drags: the view's drag states become `drag` requests, its positions `dragging` steps.
///   While the participant drags, the model draws the annotation where the view has it; a drag
///   the session refuses or ends (another holder, a lease run out) snaps back to the
///   session's coordinate and is reported in ``MapViewModel/refusedDrag``, as the SDK's
///   `.canceling` does. A drag the connection dropped in the middle of starts again after the
///   reconnect, at the view's position.
/// - Gesture steps go out at most `stepsPerSecond` a second (half the server's default rate
///   limit of 200/s), the latest position of each gesture replacing a waiting one
///   (``GesturePacer``); the end of a gesture carries its final position.
/// - Edits go through the client's queue (``MeridianClient/submit(_:)``); one refused because
///   someone changed the annotation first shows in ``MapViewModel/conflicts`` until the app
///   resolves it: keep theirs, or take mine (sent again against their revision).
///
/// Every input is handled in order on the binding's own queue; ``onChange`` is called there
/// with each new model. The binding observes the client (``MeridianClient/observe(_:)``).
public final class MeridianMapBinding: @unchecked Sendable {
    /// The client whose session the binding draws and through which its requests go.
    public let client: MeridianClient
    /// Called with every new model, on the binding's queue.
    public var onChange: (@Sendable (MapViewModel) -> Void)? {
        get { published.withLock { $0.onChange } }
        set { published.withLock { $0.onChange = newValue } }
    }

    /// What to draw now.
    public var model: MapViewModel { published.withLock { $0.model } }

    /// How a conflict is resolved.
    public enum Resolution: Sendable {
        /// The other participant's change stays; the edit is dropped.
        case theirs
        /// The edit is sent again, against the annotation's current revision.
        case mine
    }

    private struct Published {
        var model = MapViewModel.empty
        var onChange: (@Sendable (MapViewModel) -> Void)?
    }

    private struct LocalDrag {
        var coordinate: Coordinate
        /// The connection dropped during the drag: the session has canceled it.
        var interrupted = false
        /// `ending` sent: drawn at its final position until the session has it.
        var ending = false
    }

    private let queue = DispatchQueue(label: "meridian.map-binding")
    private let published = Locked(Published())
    // Everything below belongs to `queue`.
    private var pacer: GesturePacer
    /// A wake-up for the next waiting step is armed.
    private var wakeUpArmed = false
    private var localDrags: [String: LocalDrag] = [:]
    private var cameraGesture = false
    private var conflicts: [EditConflict] = []
    private var refusal: DragRefusal?

    /// A binding for `client` (connected or not yet).
    public init(client: MeridianClient, stepsPerSecond: Double = 100) {
        self.client = client
        self.pacer = GesturePacer(stepsPerSecond: stepsPerSecond)
        client.observe { [weak self] update in
            guard let self else { return }
            self.queue.async { self.handle(update) }
        }
        queue.async { self.publish() }
    }

    // MARK: Camera (regionWillChangeAnimated / mapViewRegionIsChanging / regionDidChangeAnimated)

    /// The map's region is about to change (regionWillChangeAnimated): sends `camera.begin` for the
    /// own camera.
    public func regionWillChange(animated: Bool) {
        queue.async { [self] in
            cameraGesture = true
            send(.cameraBegin(target: .own, animated: animated))
        }
    }

    /// The map's camera is at `camera` during a change (mapViewRegionIsChanging): sends a paced
    /// `camera.changing`, after a `camera.begin` if none was sent.
    public func regionIsChanging(camera: Camera) {
        queue.async { [self] in
            if !cameraGesture {
                cameraGesture = true
                send(.cameraBegin(target: .own, animated: false))
            }
            send(.cameraChanging(target: .own, camera: camera))
        }
    }

    /// The map's region finished changing at `camera` (regionDidChangeAnimated): sends `camera.end`,
    /// after a `camera.begin` if none was sent.
    public func regionDidChange(camera: Camera, animated: Bool) {
        queue.async { [self] in
            if !cameraGesture { send(.cameraBegin(target: .own, animated: animated)) }
            cameraGesture = false
            send(.cameraEnd(target: .own, camera: camera, animated: animated))
        }
    }

    // MARK: Drags (MKAnnotationView.DragState, MGLAnnotationView.DragState)

    /// The annotation view's drag state changed to `state`; `coordinate` is the view's, when known.
    public func dragStateChanged(annotation id: String, to state: DragState, coordinate: Coordinate? = nil) {
        queue.async { [self] in
            switch state {
            case .starting:
                guard let start = coordinate ?? client.state?.annotations[id]?["coordinate"]?.coordinateValue else { return }
                localDrags[id] = LocalDrag(coordinate: start)
                refusal = nil
                send(.drag(id: id, state: .starting))
            case .dragging:
                if let coordinate { move(id, to: coordinate) }
            case .ending:
                guard var drag = localDrags[id], !drag.interrupted else { return }
                if let coordinate { drag.coordinate = coordinate }
                drag.ending = true
                localDrags[id] = drag
                send(.drag(id: id, state: .ending, coordinate: drag.coordinate))
            case .canceling:
                guard localDrags.removeValue(forKey: id) != nil else { return }
                send(.drag(id: id, state: .canceling))
            case .none:
                break
            }
            publish()
        }
    }

    /// The view moved the annotation it drags to `coordinate`.
    public func annotationDragged(_ id: String, to coordinate: Coordinate) {
        queue.async { [self] in
            move(id, to: coordinate)
            publish()
        }
    }

    private func move(_ id: String, to coordinate: Coordinate) {
        guard var drag = localDrags[id], !drag.ending else { return }
        drag.coordinate = coordinate
        localDrags[id] = drag
        if !drag.interrupted { send(.drag(id: id, state: .dragging, coordinate: coordinate)) }
    }

    // MARK: Selection and the callout

    /// The view selected annotation `id` (didSelect): sends `select`.
    public func didSelect(annotation id: String) { queue.async { [self] in send(.select(id: id)) } }
    /// The view deselected an annotation (didDeselect): sends `deselect`.
    public func didDeselect(annotation id: String) { queue.async { [self] in send(.deselect) } }
    /// The callout's accessory control was tapped (calloutAccessoryControlTapped).
    public func calloutAccessoryTapped() { queue.async { [self] in send(.calloutTap(part: .accessory)) } }

    // MARK: Edits

    /// Sends an annotation edit through the client's queue (``MeridianClient/submit(_:)``).
    @discardableResult
    public func edit(_ request: SessionRequest) throws(ClientError) -> OfflineEdit {
        try client.submit(request)
    }

    /// Resolves a conflict: keeps their change, or sends the edit again against their revision.
    public func resolve(_ conflict: EditConflict, keeping resolution: Resolution) {
        queue.async { [self] in
            conflicts.removeAll { $0 == conflict }
            if resolution == .mine { _ = try? client.submit(conflict.edit.request.against(conflict.theirs.revision)) }
            publish()
        }
    }

    // MARK: Sending

    private func send(_ request: SessionRequest) {
        // A step whose time has come goes first, whether or not its wake-up has run yet.
        let now = ContinuousClock.now
        post(pacer.due(at: now) + pacer.offer(request, at: now))
        schedule()
    }

    private func post(_ requests: [SessionRequest]) {
        for request in requests {
            client.post(request) { [weak self] result in
                guard let self, case .failure(let error) = result, let error = error as? ClientError else { return }
                self.queue.async { self.refused(request, error) }
            }
        }
    }

    /// Arms a wake-up for the next waiting step (one at a time).
    private func schedule() {
        guard !wakeUpArmed, let due = pacer.nextDue else { return }
        wakeUpArmed = true
        let wait = max(.zero, due - .now)
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        queue.asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self else { return }
            wakeUpArmed = false
            fire()
        }
    }

    private func fire() {
        post(pacer.due(at: .now))
        schedule()
    }

    /// A request the session refused. A drag's refusal snaps the view back.
    private func refused(_ request: SessionRequest, _ error: ClientError) {
        guard case .drag(let id, _, _, _) = request, error.code != nil, localDrags.removeValue(forKey: id) != nil else { return }
        refusal = DragRefusal(annotation: id, reason: error.code ?? "refused", holder: error.holder)
        publish()
    }

    // MARK: The session

    private func handle(_ update: ClientUpdate) {
        let me = client.welcome?.participant
        switch update {
        case .didDisconnect:
            for id in localDrags.keys { localDrags[id]?.interrupted = true }
            cameraGesture = false
        case .didConnect:
            // A drag the drop interrupted starts again where the view has it.
            for (id, drag) in localDrags.sorted(by: { $0.key < $1.key }) where drag.interrupted {
                if drag.ending {
                    localDrags[id] = nil
                    continue
                }
                localDrags[id]?.interrupted = false
                send(.drag(id: id, state: .starting))
                send(.drag(id: id, state: .dragging, coordinate: drag.coordinate))
            }
        case .dragStateDidChange(let d) where d.participant == me:
            if d.state == .none || d.state == .ending, localDrags[d.annotation]?.ending == true {
                localDrags[d.annotation] = nil
            } else if d.state == .canceling, d.reason != nil, localDrags.removeValue(forKey: d.annotation) != nil {
                // The session ended the drag (lease run out, preempted): the view snaps back.
                refusal = DragRefusal(annotation: d.annotation, reason: d.reason ?? "canceled", holder: nil)
            }
        case .editSettled(let edit, .conflict(let theirs)):
            conflicts.append(EditConflict(edit: edit, theirs: theirs))
        default:
            break
        }
        publish()
    }

    private func publish() {
        let drags = localDrags.mapValues(\.coordinate)
        let model = MapViewModel(state: client.state, me: client.welcome?.participant, localDrags: drags, conflicts: conflicts, refusedDrag: refusal)
        let callback = published.withLock { p -> (@Sendable (MapViewModel) -> Void)? in
            guard p.model != model else { return nil }
            p.model = model
            return p.onChange
        }
        callback?(model)
    }
}

extension SessionRequest {
    /// The edit made conditional on `revision` instead of the one it carried.
    func against(_ revision: UInt64) -> SessionRequest {
        switch self {
        case .annotationUpdate(let id, let changes, _): .annotationUpdate(id: id, changes: changes, ifRevision: revision)
        case .annotationRemove(let id, _): .annotationRemove(id: id, ifRevision: revision)
        default: self
        }
    }
}
