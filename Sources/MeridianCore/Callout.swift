/// The session's shared callout (ArcGIS `AGSCallout` fields).
public struct Callout: Hashable, Sendable {
    /// The callout's title (≤ 256 characters).
    public var title: String
    /// The text under the title (≤ 1 024 characters); nil for none.
    public var detail: String?
    /// The name of a shared image shown in the callout; nil for none.
    public var image: String?
    /// The button shown beside the text; `.hidden` for none.
    public var accessory: Accessory
    /// The background colour; nil leaves the client's default.
    public var backgroundColor: Color?
    /// The title's colour; nil leaves the client's default.
    public var titleColor: Color?
    /// The detail text's colour; nil leaves the client's default.
    public var detailColor: Color?
    /// What the callout points at: a coordinate, an annotation or a participant's location.
    public var anchor: Anchor

    /// Builds a callout pointing at `anchor`; the fields other than the title default to none (no accessory).
    public init(
        title: String, detail: String? = nil, image: String? = nil, accessory: Accessory = .hidden,
        backgroundColor: Color? = nil, titleColor: Color? = nil, detailColor: Color? = nil, anchor: Anchor
    ) {
        self.title = title
        self.detail = detail
        self.image = image
        self.accessory = accessory
        self.backgroundColor = backgroundColor
        self.titleColor = titleColor
        self.detailColor = detailColor
        self.anchor = anchor
    }

    /// Where the callout points.
    public enum Anchor: Hashable, Sendable {
        /// Points at a fixed coordinate.
        case coordinate(Coordinate)
        /// Follows the annotation (also while dragged), shifted by its `calloutOffset`.
        case annotation(String)
        /// Follows the participant's shared location.
        case participant(ParticipantID)
    }

    /// The accessory button.
    public enum Accessory: Hashable, Sendable {
        /// No accessory.
        case hidden
        /// A standard system button of the given type.
        case button(ButtonType)
        /// A custom button showing a shared image.
        case image(String)
    }

    /// The standard accessory buttons, by their UIKit `UIButton.ButtonType` names.
    public enum ButtonType: String, Hashable, Sendable, CaseIterable {
        /// The system detail-disclosure, light info, dark info and contact-add (+) buttons.
        case detailDisclosure, infoLight, infoDark, contactAdd
    }

    /// The part of the callout that was tapped.
    public enum Part: String, Hashable, Sendable, CaseIterable {
        /// `body`: the callout itself; `accessory`: its accessory button.
        case body, accessory
    }
}
