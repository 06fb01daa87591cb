/// The session's shared callout (ArcGIS `AGSCallout` fields).
public struct Callout: Hashable, Sendable {
    public var title: String
    public var detail: String?
    public var image: String?
    public var accessory: Accessory
    public var backgroundColor: Color?
    public var titleColor: Color?
    public var detailColor: Color?
    public var anchor: Anchor

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
        case coordinate(Coordinate)
        /// Follows the annotation (also while dragged), shifted by its `calloutOffset`.
        case annotation(String)
        /// Follows the participant's shared location.
        case participant(ParticipantID)
    }

    /// The accessory button.
    public enum Accessory: Hashable, Sendable {
        case hidden
        case button(ButtonType)
        /// A custom button showing a shared image.
        case image(String)
    }

    public enum ButtonType: String, Hashable, Sendable, CaseIterable {
        case detailDisclosure, infoLight, infoDark, contactAdd
    }

    /// The part of the callout that was tapped.
    public enum Part: String, Hashable, Sendable, CaseIterable {
        case body, accessory
    }
}
