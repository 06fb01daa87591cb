// A small app on the Swift client, as a map app would use it: joins a session over the portable
// transport (wss:// with a CA of one's own and a bearer token), follows another participant's
// drag of one annotation through the map binding's view model, then drags that annotation
// itself. It prints one JSON object per line: what it joined as, each position it showed, and
// the end of its own drag.
//
//   meridian-follow-example --url wss://localhost:8443/ --token TOKEN --session S --annotation flag \
//       --to 48.85,2.35 [--ca-file ca.pem] [--timeout 30]
import Foundation
import MeridianClient
import MeridianCore
import MeridianMapBinding

struct Options {
    var url = "", token: String?, session = "", annotation = "", caFile: String?, serverName: String?
    var target = Coordinate(latitude: 0, longitude: 0)
    var timeout = 30.0

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Failure("\(flag) needs a value") }
            switch flag {
            case "--url": url = value
            case "--token": token = value
            case "--session": session = value
            case "--annotation": annotation = value
            case "--ca-file": caFile = value
            case "--server-name": serverName = value
            case "--timeout": timeout = Double(value) ?? timeout
            case "--to":
                let parts = value.split(separator: ",").compactMap { Double($0) }
                guard parts.count == 2 else { throw Failure("--to LAT,LON") }
                target = Coordinate(latitude: parts[0], longitude: parts[1])
            default: throw Failure("unknown option \(flag)")
            }
        }
        guard !url.isEmpty, !session.isEmpty, !annotation.isEmpty else { throw Failure("--url, --session and --annotation are needed") }
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func say(_ object: [String: Any]) {
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

/// Waits until `holds` is true of the binding's model, checking on every change.
final class ModelWatch: @unchecked Sendable {
    private let condition = NSCondition()
    private var model = MapViewModel.empty
    private var shown: MapViewModel.AnnotationItem?

    init(_ binding: MeridianMapBinding, _ annotation: String) {
        binding.onChange = { [self] model in
            // The annotation as the map would draw it, each time its place or its draggers change.
            let item = model.annotations[annotation]
            let changed = condition.withLock {
                self.model = model
                defer { shown = item }
                return item != nil && (item?.coordinate != shown?.coordinate || item?.draggedBy != shown?.draggedBy)
            }
            condition.broadcast()
            if changed, let item {
                say(["shown": annotation, "latitude": item.coordinate?.latitude ?? .nan, "longitude": item.coordinate?.longitude ?? .nan,
                     "draggedBy": item.draggedBy])
            }
        }
    }

    func wait(_ seconds: Double, _ holds: (MapViewModel) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !holds(model) {
            if !condition.wait(until: deadline) { return holds(model) }
        }
        return true
    }
}

func run() throws {
    let options = try Options(CommandLine.arguments)
    let configuration = ClientConfiguration(session: options.session, name: "Follower", role: nil, token: options.token)
    let client = try MeridianClient(url: options.url, configuration: configuration,
                                    tls: ClientTLS(caFile: options.caFile, serverName: options.serverName), transport: .portable)
    defer { client.close() }
    let binding = MeridianMapBinding(client: client)
    let watch = ModelWatch(binding, options.annotation)
    let me = try client.connect().participant
    say(["joined": me])

    // Someone else drags the annotation: the view model shows it moving, with who drags it.
    let id = options.annotation
    guard watch.wait(options.timeout, { $0.annotations[id]?.draggedBy.contains { $0 != me } == true }) else { throw Failure("no drag of \(id) by another participant") }
    guard watch.wait(options.timeout, { $0.annotations[id].map { $0.draggedBy.isEmpty } == true }) else { throw Failure("their drag of \(id) did not end") }
    let followed = binding.model.annotations[id]?.coordinate
    say(["followed": id, "latitude": followed?.latitude ?? .nan, "longitude": followed?.longitude ?? .nan])

    // Then this app drags it, as the SDK's drag callbacks would tell the binding.
    let start = try followed ?? { throw Failure("\(id) has no coordinate") }()
    binding.dragStateChanged(annotation: id, to: .starting, coordinate: start)
    for step in 1...10 {
        let f = Double(step) / 10
        binding.annotationDragged(id, to: Coordinate(latitude: start.latitude + (options.target.latitude - start.latitude) * f,
                                                     longitude: start.longitude + (options.target.longitude - start.longitude) * f))
    }
    binding.dragStateChanged(annotation: id, to: .ending, coordinate: options.target)
    let landed = watch.wait(options.timeout) { model in
        guard let item = model.annotations[id], item.draggedBy.isEmpty, !item.isDraggedHere, let c = item.coordinate else { return false }
        return abs(c.latitude - options.target.latitude) < 1e-9 && abs(c.longitude - options.target.longitude) < 1e-9
    }
    if let refused = binding.model.refusedDrag { throw Failure("drag refused: \(refused.reason)") }
    guard landed else { throw Failure("own drag of \(id) did not land at the target") }
    say(["dragged": id, "latitude": options.target.latitude, "longitude": options.target.longitude])
}

do {
    try run()
} catch {
    FileHandle.standardError.write(Data("meridian-follow-example: \(error)\n".utf8))
    exit(1)
}
