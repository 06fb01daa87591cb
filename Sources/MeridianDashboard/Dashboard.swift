import Foundation
import MeridianTransport

/// The browser dashboard: static files (HTML, CSS, ES modules) answered from
/// memory. Files are read once, when the dashboard is created.
public struct Dashboard: Sendable {
    /// What the dashboard serves: a tile layer under its map, files of one's own instead of the
    /// built-in ones, and the map libraries of the example pages.
    public struct Configuration: Sendable {
        /// Optional raster tile URL template (`{z}`, `{x}`, `{y}`) drawn under the
        /// annotations; without it the map draws the offline basemap.
        public var tileURL: String?
        /// Optional MapLibre style URL (a style JSON, e.g. vector streets) drawn under the session
        /// view's annotations instead of the offline basemap or the tiles.
        public var styleURL: String?
        /// Serve files from this directory instead of the built-in ones.
        public var directory: URL?
        /// Leaflet (Debian's `libjs-leaflet`), served at /vendor/leaflet/ for the
        /// Leaflet example page when the directory exists.
        public var leafletDirectory: URL?
        /// MapLibre GL JS (`maplibre-gl.js`, `maplibre-gl.css` and its `LICENSE.txt`, which
        /// `make web-deps` takes from a pinned release), served at /vendor/maplibre-gl/ for the
        /// MapLibre example page when the directory holds them.
        public var mapLibreDirectory: URL?

        /// A configuration; by default no tile layer, the built-in files, Leaflet from Debian's
        /// path under /usr/share/javascript and MapLibre from /usr/local/share/javascript.
        public init(tileURL: String? = nil, styleURL: String? = nil, directory: URL? = nil,
                    leafletDirectory: URL? = URL(fileURLWithPath: "/usr/share/javascript/leaflet"),
                    mapLibreDirectory: URL? = URL(fileURLWithPath: "/usr/local/share/javascript/maplibre-gl")) {
            self.tileURL = tileURL
            self.styleURL = styleURL
            self.directory = directory
            self.leafletDirectory = leafletDirectory
            self.mapLibreDirectory = mapLibreDirectory
        }
    }

    /// A map library a page of the dashboard loads, missing from where the configuration says.
    public struct MissingLibrary: Sendable, Equatable, CustomStringConvertible {
        /// The library, as its page's title names it.
        public let library: String
        /// The page that cannot work without it.
        public let page: String
        /// Where it was looked for.
        public let directory: String
        /// The file that was not there.
        public let file: String
        /// What else does without it, and how; nil when nothing else uses it.
        public var elsewhere: String? = nil

        /// One line for the log: what is missing, where, which page it leaves blank and what
        /// else does without it.
        public var description: String {
            "\(library) not found (no \(file) in \(directory)): \(page) cannot load"
                + (elsewhere.map { "; \($0)" } ?? "") + "; `make web-deps` installs it"
        }
    }

    private let files: [String: HTTPResponse]
    /// The example pages' libraries that are configured but missing, for a warning at start.
    public let missingLibraries: [MissingLibrary]

    /// Reads the dashboard's files (and the map libraries whose directories exist) into memory.
    /// Throws ``DashboardError/missingFiles`` without an `index.html`, or the error of a file that
    /// cannot be read.
    public init(configuration: Configuration = Configuration()) throws {
        guard let root = configuration.directory ?? Bundle.module.url(forResource: "Static", withExtension: nil) else {
            throw DashboardError.missingFiles
        }
        var files = try Self.load(root, at: "/dashboard/")
        var missing: [MissingLibrary] = []
        if let leaflet = configuration.leafletDirectory {
            if FileManager.default.fileExists(atPath: leaflet.appendingPathComponent("leaflet.esm.js").path) {
                files.merge(try Self.load(leaflet, at: "/vendor/leaflet/", only: ["leaflet.css", "leaflet.esm.js"])) { a, _ in a }
                files.merge(try Self.load(leaflet.appendingPathComponent("images"), at: "/vendor/leaflet/images/")) { a, _ in a }
            } else {
                missing.append(MissingLibrary(library: "Leaflet", page: "/dashboard/leaflet.html", directory: leaflet.path, file: "leaflet.esm.js"))
            }
        }
        if let mapLibre = configuration.mapLibreDirectory {
            if FileManager.default.fileExists(atPath: mapLibre.appendingPathComponent("maplibre-gl.js").path) {
                files.merge(try Self.load(mapLibre, at: "/vendor/maplibre-gl/", only: ["maplibre-gl.js", "maplibre-gl.css", "LICENSE.txt"])) { a, _ in a }
            } else {
                missing.append(MissingLibrary(library: "MapLibre GL JS", page: "/dashboard/maplibre.html", directory: mapLibre.path,
                                              file: "maplibre-gl.js", elsewhere: "the session view draws its basemap on its canvas instead"))
            }
        }
        self.missingLibraries = missing
        guard let index = files["/dashboard/index.html"] else { throw DashboardError.missingFiles }
        files["/"] = index
        files["/dashboard"] = index
        files["/dashboard/"] = index
        let config = try JSONSerialization.data(withJSONObject: [
            "tileURL": configuration.tileURL.map { $0 as Any } ?? NSNull(),
            "styleURL": configuration.styleURL.map { $0 as Any } ?? NSNull(),
        ], options: [.sortedKeys])
        files["/dashboard/config.json"] = HTTPResponse(status: 200, contentType: "application/json", body: Array(config))
        self.files = files
    }

    /// The servable files of `directory` (not its subdirectories), keyed by `prefix` + name.
    private static func load(_ directory: URL, at prefix: String, only: Set<String>? = nil) throws -> [String: HTTPResponse] {
        var files: [String: HTTPResponse] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where only?.contains(name) ?? true {
            guard let type = contentType(of: name) else { continue }
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            files[prefix + name] = HTTPResponse(status: 200, contentType: type, body: Array(data))
        }
        return files
    }

    /// The file for a GET or HEAD of `request.path`, else nil.
    public func response(to request: HTTPRequest) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD" else { return nil }
        return files[request.path]
    }

    /// Paths served, for logs and tests.
    public var paths: [String] { files.keys.sorted() }

    static func contentType(of name: String) -> String? {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "gif": "image/gif"
        case "ts": "application/typescript; charset=utf-8"
        case "txt": "text/plain; charset=utf-8"
        default: nil
        }
    }
}

/// The dashboard's files could not be found.
public struct DashboardError: Error, CustomStringConvertible {
    private enum Kind { case missingFiles }
    private let kind: Kind
    /// No files to serve: neither the built-in ones nor the configured directory, or no `index.html`.
    public static let missingFiles = DashboardError(kind: .missingFiles)
    /// The error in words, for the log.
    public var description: String {
        switch kind {
        case .missingFiles: "the dashboard's files (index.html and the rest) were not found"
        }
    }
}
