import Foundation
import MeridianCore
import MeridianStorage

/// A fresh temporary directory, removed by `cleanup`.
func temporaryDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("meridian-storage-\(UUID().uuidString)").path
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func cleanup(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

func coordinate(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

/// A record with every kind of annotation, a callout and non-default settings.
func sampleRecord(id: String = "map-1") -> SessionRecord {
    var settings = SessionSettings(styleURL: "https://tiles.example/style.json", tint: Color(red: 10, green: 20, blue: 30, alpha: 128),
                                   dragPolicy: .lastWriterWins, leaseTimeout: .milliseconds(2_500))
    settings.constraints = CameraConstraints(bounds: Bounds(southWest: coordinate(40, -10), northEast: coordinate(50, 10)),
                                             minZoom: 2, maxZoom: 18, maxPitch: 45, policy: .reject)
    let point = Annotation(id: "pin", shape: .point(Point(coordinate: coordinate(48.85, 2.35), image: "pin-red",
                                                          centerOffset: Offset(dx: 0, dy: -8), draggable: true, canShowCallout: true)),
                           title: "Paris", subtitle: "capital", zIndex: 3, kind: "city", metadata: ["pop": .number(2_100_000), "tags": .array([.string("fr")])],
                           revision: 42)
    let line = Annotation(id: "route", shape: .polyline(Polyline(coordinates: [coordinate(48, 2), coordinate(49, 3)], alpha: 0.7,
                                                                  strokeColor: Color(red: 255, green: 0, blue: 0), lineWidth: 5)), revision: 7)
    let area = Annotation(id: "zone", shape: .polygon(Polygon(
        coordinates: [coordinate(0, 0), coordinate(0, 1), coordinate(1, 1)], holes: [[coordinate(0.1, 0.1), coordinate(0.1, 0.2), coordinate(0.2, 0.2)]],
        fillColor: Color(red: 0, green: 0, blue: 255, alpha: 77))), enabled: false, revision: 30)
    let callout = Callout(title: "Meet here", detail: "at noon", accessory: .button(.detailDisclosure), anchor: .annotation("pin"))
    var earlier = point
    earlier.title = "Lutèce"
    earlier.revision = 40
    var gone = line
    gone.id = "gone"
    gone.revision = 5
    // One participant's undo history: an update and a removal to undo, an add to redo.
    let history = UndoHistory(
        undo: [UndoStep(change: .remove, annotation: "gone", before: gone, after: nil, at: 41, beforeAt: 5),
               UndoStep(change: .update, annotation: "pin", before: earlier, after: point, at: 42, beforeAt: 40)],
        redo: [UndoStep(change: .add, annotation: "route", before: nil, after: line, at: 7, beforeAt: 0)],
        lastChange: 42)
    return SessionRecord(id: id, settings: settings, annotations: [line, area, point].sorted { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) },
                         callout: callout, seq: 42, histories: ["ann": history, "bo": UndoHistory(lastChange: 3)])
}

/// A session with one annotation `a<i>` at seq `i`, written under `fence`.
func pinUpdate(_ session: String, _ i: Int, fence: UInt64? = nil) -> SessionUpdate {
    let a = Annotation(id: "a\(i)", shape: .point(Point(coordinate: coordinate(Double(i % 80), 0))), revision: UInt64(max(i, 1)))
    return SessionUpdate(id: session, epoch: "e", seq: UInt64(i), settings: SessionSettings(), callout: nil, upserted: [a], fence: fence)
}
