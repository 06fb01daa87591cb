// MapKit glue: an MKMapViewDelegate that forwards the SDK's callbacks to a MeridianMapBinding,
// and draws the binding's view model on the map. Compiled on Apple platforms only; everything
// it calls is the platform-neutral binding, tested on Linux against the real server.
#if canImport(MapKit)
import MapKit
import MeridianCore
import MeridianMapBinding

/// A session's point as MapKit sees it. MapKit moves a dragged annotation by setting its
/// coordinate: each of those is a drag step for the binding.
@MainActor
public final class MeridianAnnotation: NSObject, MKAnnotation {
    /// The id of the session's annotation.
    public let id: String
    weak var binding: MeridianMapBinding?
    /// Where MapKit draws the point; while it is dragged, each new value goes to the binding as a
    /// drag step.
    @objc public dynamic var coordinate: CLLocationCoordinate2D {
        didSet { if isDragged { binding?.annotationDragged(id, to: Coordinate(coordinate)) } }
    }
    var isDragged = false

    init(id: String, coordinate: CLLocationCoordinate2D, binding: MeridianMapBinding) {
        self.id = id
        self.coordinate = coordinate
        self.binding = binding
    }
}

/// An MKMapViewDelegate that forwards the map's camera, drag, selection and callout callbacks
/// to a ``MeridianMapBinding``, and draws its model with ``apply(_:to:)``. Open to subclass for
/// the callbacks it does not handle.
@MainActor
open class MeridianMapViewDelegate: NSObject, MKMapViewDelegate {
    /// The binding the callbacks go to.
    public let binding: MeridianMapBinding

    /// A delegate forwarding to `binding`.
    public init(binding: MeridianMapBinding) { self.binding = binding }

    /// Forwards the start of a region change (``MeridianMapBinding/regionWillChange(animated:)``).
    public func mapView(_ mapView: MKMapView, regionWillChangeAnimated animated: Bool) { binding.regionWillChange(animated: animated) }
    /// Forwards the map's camera as a step of the region change in progress.
    public func mapViewDidChangeVisibleRegion(_ mapView: MKMapView) { binding.regionIsChanging(camera: Camera(of: mapView)) }
    /// Forwards the end of a region change with the map's final camera.
    public func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
        binding.regionDidChange(camera: Camera(of: mapView), animated: animated)
    }

    /// Forwards a ``MeridianAnnotation``'s new drag state with its coordinate; other annotations are
    /// ignored.
    public func mapView(_ mapView: MKMapView, annotationView view: MKAnnotationView,
                        didChange newState: MKAnnotationView.DragState, fromOldState oldState: MKAnnotationView.DragState) {
        guard let annotation = view.annotation as? MeridianAnnotation, let state = DragState(newState) else { return }
        annotation.isDragged = state == .starting || state == .dragging
        binding.dragStateChanged(annotation: annotation.id, to: state, coordinate: Coordinate(annotation.coordinate))
    }

    /// Forwards the selection of a ``MeridianAnnotation``.
    public func mapView(_ mapView: MKMapView, didSelect view: MKAnnotationView) {
        if let annotation = view.annotation as? MeridianAnnotation { binding.didSelect(annotation: annotation.id) }
    }
    /// Forwards the deselection of a ``MeridianAnnotation``.
    public func mapView(_ mapView: MKMapView, didDeselect view: MKAnnotationView) {
        if let annotation = view.annotation as? MeridianAnnotation { binding.didDeselect(annotation: annotation.id) }
    }
    #if canImport(UIKit)
    /// Forwards a tap on the callout's accessory control (UIKit only).
    public func mapView(_ mapView: MKMapView, annotationView view: MKAnnotationView, calloutAccessoryControlTapped control: UIControl) {
        binding.calloutAccessoryTapped()
    }
    #endif

    /// Draws `model` (from ``MeridianMapBinding/onChange``, on the main actor): points added,
    /// moved (a remote drag in progress, a refused drag snapped back) and removed.
    public func apply(_ model: MapViewModel, to mapView: MKMapView) {
        var shown = Dictionary(uniqueKeysWithValues: mapView.annotations.compactMap { $0 as? MeridianAnnotation }.map { ($0.id, $0) })
        for (id, item) in model.annotations {
            guard let c = item.coordinate else { continue }
            if let annotation = shown.removeValue(forKey: id) {
                if !annotation.isDragged { annotation.coordinate = CLLocationCoordinate2D(latitude: c.latitude, longitude: c.longitude) }
            } else {
                mapView.addAnnotation(MeridianAnnotation(id: id, coordinate: CLLocationCoordinate2D(latitude: c.latitude, longitude: c.longitude), binding: binding))
            }
        }
        mapView.removeAnnotations(Array(shown.values))
    }
}

extension Coordinate {
    init(_ c: CLLocationCoordinate2D) { self.init(latitude: c.latitude, longitude: c.longitude) }
}

extension Camera {
    /// The map's camera in the session's terms: web-mercator zoom from the visible span.
    @MainActor init(of mapView: MKMapView) {
        let span = max(mapView.region.span.longitudeDelta, 1e-9)
        self.init(center: Coordinate(mapView.centerCoordinate), zoom: log2(360 * Double(mapView.bounds.width) / 256 / span),
                  pitch: Double(mapView.camera.pitch), bearing: mapView.camera.heading)
    }
}

extension DragState {
    init?(_ state: MKAnnotationView.DragState) {
        switch state {
        case .none: self = .none
        case .starting: self = .starting
        case .dragging: self = .dragging
        case .canceling: self = .canceling
        case .ending: self = .ending
        @unknown default: return nil
        }
    }
}
#endif
