import Testing
@testable import MeridianCore

@Suite struct CameraValidationTests {
    @Test(arguments: [
        (cam(.nan, 0), "camera.center.latitude"),
        (cam(0, .infinity), "camera.center.longitude"),
        (cam(0, 0, zoom: .nan), "camera.zoom"),
        (cam(0, 0, pitch: -.infinity), "camera.pitch"),
        (cam(0, 0, bearing: .nan), "camera.bearing"),
        (cam(91, 0), "camera.center.latitude"),
        (cam(-91, 0), "camera.center.latitude"),
        (cam(0, 0, zoom: -1), "camera.zoom"),
        (cam(0, 0, zoom: 24.5), "camera.zoom"),
        (cam(0, 0, pitch: -1), "camera.pitch"),
        (cam(0, 0, pitch: 86), "camera.pitch"),
    ])
    func invalidCameraIsRefusedNamingTheField(camera: Camera, field: String) throws {
        var (w, o, e, _) = try trio()
        try w.refuse(.camera(.own, .end(camera, animated: false), viewport: nil), by: e, .invalidField, field: field)
        try w.refuse(.camera(.own, .changing(camera), viewport: nil), by: e, .invalidField, field: field)
        try w.ok(.acquireCameraLease(force: false), by: o)
        try w.refuse(.camera(.shared, .end(camera, animated: true), viewport: nil), by: o, .invalidField, field: field)
    }

    @Test(arguments: [
        (cam(89, 0), cam(85.0511, 0)),
        (cam(-89, 0), cam(-85.0511, 0)),
        (cam(0, 190), cam(0, -170)),
        (cam(0, 180), cam(0, -180)),
        (cam(0, -540), cam(0, -180)),
        (cam(0, 0, bearing: -90), cam(0, 0, bearing: 270)),
        (cam(0, 0, bearing: 360), cam(0, 0, bearing: 0)),
        (cam(0, 0, bearing: 725), cam(0, 0, bearing: 5)),
    ])
    func cameraIsNormalised(sent: Camera, applied: Camera) throws {
        var (w, _, e, _) = try trio()
        let accepted = try w.ok(.camera(.own, .end(sent, animated: true), viewport: nil), by: e)
        #expect(accepted.camera == applied)
        #expect(accepted.events.map(\.event) == [.camera(.own, participant: e, .end(applied, animated: true), viewport: nil)])
        #expect(w.participant(e)?.camera == applied)
    }

    @Test func validCameraIsAppliedAsSentWithoutAdjustment() throws {
        var (w, _, e, _) = try trio()
        let c = cam(45, 7, zoom: 24, pitch: 85, bearing: 359)
        let accepted = try w.ok(.camera(.own, .end(c, animated: false), viewport: nil), by: e)
        #expect(accepted.camera == nil)
        #expect(w.participant(e)?.camera == c)
        let edge = cam(-85.0511, -180, zoom: 0, pitch: 0, bearing: 0)
        #expect(try w.ok(.camera(.own, .end(edge, animated: false), viewport: nil), by: e).camera == nil)
    }

    @Test(arguments: [
        (Viewport(width: 0, height: 100), "viewport.width"),
        (Viewport(width: 100, height: .nan), "viewport.height"),
        (Viewport(width: 100_001, height: 100), "viewport.width"),
        (Viewport(width: 100, height: -5), "viewport.height"),
    ])
    func invalidViewportIsRefused(viewport: Viewport, field: String) throws {
        var (w, _, e, _) = try trio()
        try w.refuse(.camera(.own, .begin(animated: true), viewport: viewport), by: e, .invalidField, field: field)
    }

    @Test func viewportIsStoredWithTheOwnCamera() throws {
        var (w, _, _, v) = try trio()
        let vp = Viewport(width: 390, height: 844)
        let events = try w.events(.camera(.own, .begin(animated: true), viewport: vp), by: v)
        #expect(events == [.camera(.own, participant: v, .begin(animated: true), viewport: vp)])
        #expect(w.participant(v)?.viewport == vp)
        #expect(w.participant(v)?.camera == nil)
    }

    @Test func sharedCameraHasNoViewport() throws {
        var (w, o, _, _) = try trio()
        try w.ok(.acquireCameraLease(force: false), by: o)
        try w.refuse(.camera(.shared, .begin(animated: true), viewport: Viewport(width: 10, height: 10)), by: o, .invalidField, field: "viewport")
    }
}

@Suite struct CameraLifecycleTests {
    @Test func beginAndEndAreDiscreteChangingIsTransient() throws {
        var (w, _, e, _) = try trio()
        let seq0 = w.session.seq
        let begin = try w.ok(.camera(.own, .begin(animated: true), viewport: nil), by: e).events
        #expect(begin.count == 1)
        #expect(begin[0].seq == seq0 + 1)
        #expect(begin[0].conflation == nil)

        let frame = try w.ok(.camera(.own, .changing(cam(1, 1)), viewport: nil), by: e).events
        #expect(frame.count == 1)
        #expect(frame[0].seq == seq0 + 1)
        #expect(frame[0].conflation == .ownCamera(e))
        #expect(frame[0].isTransient)
        #expect(w.participant(e)?.camera == cam(1, 1))

        let end = try w.ok(.camera(.own, .end(cam(2, 2), animated: false), viewport: nil), by: e).events
        #expect(end[0].seq == seq0 + 2)
        #expect(end[0].conflation == nil)
        #expect(w.session.seq == seq0 + 2)
        #expect(w.participant(e)?.camera == cam(2, 2))
    }

    @Test func everyOwnCameraFrameCarriesTheCurrentViewport() throws {
        // A newer changing frame replaces an unsent older one for slow
        // receivers, so each frame must carry the viewport in force.
        var (w, _, e, _) = try trio()
        let vp = Viewport(width: 320, height: 480)
        try w.ok(.camera(.own, .changing(cam(1, 1)), viewport: vp), by: e)
        #expect(try w.events(.camera(.own, .changing(cam(2, 2)), viewport: nil), by: e) == [.camera(.own, participant: e, .changing(cam(2, 2)), viewport: vp)])
        #expect(try w.events(.camera(.own, .end(cam(3, 3), animated: false), viewport: nil), by: e) == [.camera(.own, participant: e, .end(cam(3, 3), animated: false), viewport: vp)])
        #expect(w.participant(e)?.viewport == vp)
    }

    @Test func sharedCameraChangingFramesUseTheSharedKey() throws {
        var (w, o, _, _) = try trio()
        try w.ok(.acquireCameraLease(force: false), by: o)
        let frame = try w.ok(.camera(.shared, .changing(cam(3, 3)), viewport: nil), by: o).events
        #expect(frame.map(\.conflation) == [.sharedCamera])
        #expect(frame.map(\.event) == [.camera(.shared, participant: o, .changing(cam(3, 3)), viewport: nil)])
        #expect(w.session.sharedCamera == cam(3, 3))
        try w.ok(.camera(.shared, .end(cam(4, 4), animated: true), viewport: nil), by: o)
        #expect(w.session.sharedCamera == cam(4, 4))
        #expect(w.participant(o)?.camera == nil)
    }
}

@Suite struct CameraConstraintTests {
    func world(_ c: CameraConstraints) throws -> (World, ParticipantID) {
        let (w, _, e, _) = try trio(SessionSettings(constraints: c))
        return (w, e)
    }

    static let alps = Bounds(southWest: C(45, 5), northEast: C(48, 11))
    static let polar = Bounds(southWest: C(86, 179), northEast: C(90, 180))
    static let fiji = Bounds(southWest: C(-20, 170), northEast: C(-10, -170))

    @Test(arguments: [
        (alps, cam(46, 8), cam(46, 8)),
        (alps, cam(50, 8), cam(48, 8)),
        (alps, cam(40, 0), cam(45, 5)),
        (alps, cam(46, 20), cam(46, 11)),
        // Across the antimeridian: 175 and -175 are inside.
        (fiji, cam(-15, 175), cam(-15, 175)),
        (fiji, cam(-15, -175), cam(-15, -175)),
        (fiji, cam(-15, 180), cam(-15, -180)),
        (fiji, cam(-15, 160), cam(-15, 170)),
        (fiji, cam(-15, -160), cam(-15, -170)),
        (fiji, cam(-30, 10), cam(-20, 170)),
        (fiji, cam(-30, -1), cam(-20, -170)),
        (fiji, cam(-30, 1), cam(-20, 170)),
        // Bounds reaching where no camera looks: the clamped camera is still in normal form.
        (polar, cam(0, 0), cam(Geo.maxMercatorLatitude, 179)),
        (polar, cam(0, -170), cam(Geo.maxMercatorLatitude, -180)),
    ])
    func boundsClampTheCenter(bounds: Bounds, sent: Camera, applied: Camera) throws {
        var (w, e) = try world(CameraConstraints(bounds: bounds, policy: .clamp))
        let accepted = try w.ok(.camera(.own, .end(sent, animated: true), viewport: nil), by: e)
        #expect(w.participant(e)?.camera == applied)
        #expect(accepted.camera == (sent == applied ? nil : applied))
        #expect(accepted.events.map(\.event) == [.camera(.own, participant: e, .end(applied, animated: true), viewport: nil)])
    }

    /// Bounds whose corners share a latitude, or are one point, pin the centre there (as the
    /// schema allows them: Protocol/openapi.yaml); inverted latitudes are refused, naming the field.
    @Test func degenerateBoundsPinTheCenterAndInvertedOnesAreRefused() throws {
        let (w, o, _, _) = try trio()
        var world = w
        let point = Bounds(southWest: C(46, 8), northEast: C(46, 8))
        try world.ok(.configure(settingsPatch { $0.constraints = CameraConstraints(bounds: point) }), by: o)
        #expect(try world.ok(.camera(.own, .end(cam(50, 0), animated: false), viewport: nil), by: o).camera == cam(46, 8))
        let line = Bounds(southWest: C(46, 5), northEast: C(46, 11))
        try world.ok(.configure(settingsPatch { $0.constraints = CameraConstraints(bounds: line) }), by: o)
        #expect(try world.ok(.camera(.own, .end(cam(40, 7), animated: false), viewport: nil), by: o).camera == cam(46, 7))
        let inverted = Bounds(southWest: C(47, 5), northEast: C(46, 11))
        let before = world.session.settings
        try world.refuse(.configure(settingsPatch { $0.constraints = CameraConstraints(bounds: inverted) }), by: o, .invalidField, field: "settings.constraints.bounds")
        #expect(world.session.settings == before)
    }

    @Test func zoomAndPitchLimitsClamp() throws {
        var (w, e) = try world(CameraConstraints(minZoom: 3, maxZoom: 12, maxPitch: 45))
        let low = try w.ok(.camera(.own, .changing(cam(0, 0, zoom: 1, pitch: 60)), viewport: nil), by: e)
        #expect(low.camera == cam(0, 0, zoom: 3, pitch: 45))
        #expect(low.events.map(\.event) == [.camera(.own, participant: e, .changing(cam(0, 0, zoom: 3, pitch: 45)), viewport: nil)])
        let high = try w.ok(.camera(.own, .end(cam(0, 0, zoom: 20, pitch: 10), animated: false), viewport: nil), by: e)
        #expect(high.camera == cam(0, 0, zoom: 12, pitch: 10))
        #expect(w.participant(e)?.camera == cam(0, 0, zoom: 12, pitch: 10))
    }

    @Test func clampedSharedCameraIsReturnedAndBroadcast() throws {
        var (w, o, _, _) = try trio(SessionSettings(constraints: CameraConstraints(bounds: Self.alps, maxZoom: 10)))
        try w.ok(.acquireCameraLease(force: false), by: o)
        let a = try w.ok(.camera(.shared, .end(cam(60, 8, zoom: 15), animated: true), viewport: nil), by: o)
        #expect(a.camera == cam(48, 8, zoom: 10))
        #expect(a.events.map(\.event) == [.camera(.shared, participant: o, .end(cam(48, 8, zoom: 10), animated: true), viewport: nil)])
        #expect(w.session.sharedCamera == cam(48, 8, zoom: 10))
    }

    @Test(arguments: [
        cam(50, 8), cam(46, 20), cam(46, 8, zoom: 2), cam(46, 8, zoom: 13), cam(46, 8, pitch: 50),
    ])
    func rejectPolicyRefusesOutOfBounds(camera: Camera) throws {
        var (w, e) = try world(CameraConstraints(bounds: Self.alps, minZoom: 3, maxZoom: 12, maxPitch: 45, policy: .reject))
        try w.ok(.camera(.own, .end(cam(46, 8), animated: false), viewport: nil), by: e)
        try w.refuse(.camera(.own, .end(camera, animated: false), viewport: nil), by: e, .cameraOutOfBounds, field: "camera")
        try w.refuse(.camera(.own, .changing(camera), viewport: nil), by: e, .cameraOutOfBounds)
        #expect(w.participant(e)?.camera == cam(46, 8))
    }

    @Test func rejectPolicyAcceptsInsideAndAcrossTheAntimeridian() throws {
        var (w, e) = try world(CameraConstraints(bounds: Self.fiji, policy: .reject))
        try w.ok(.camera(.own, .end(cam(-15, 179), animated: false), viewport: nil), by: e)
        // 190 wraps to -170: inside.
        #expect(try w.ok(.camera(.own, .end(cam(-15, 190), animated: false), viewport: nil), by: e).camera == cam(-15, -170))
        try w.refuse(.camera(.own, .end(cam(-15, 0), animated: false), viewport: nil), by: e, .cameraOutOfBounds)
    }

    @Test func theAntimeridianIsInsideBoundsEndingAtEitherSideOfIt() throws {
        // 180 is stored as -180: both name the eastern edge of these bounds.
        var (w, e) = try world(CameraConstraints(bounds: Bounds(southWest: C(-20, 170), northEast: C(-10, 180)), policy: .reject))
        #expect(try w.ok(.camera(.own, .end(cam(-15, 180), animated: false), viewport: nil), by: e).camera == cam(-15, -180))
        try w.ok(.camera(.own, .end(cam(-15, -180), animated: false), viewport: nil), by: e)
        try w.refuse(.camera(.own, .end(cam(-15, -179), animated: false), viewport: nil), by: e, .cameraOutOfBounds)
        var (west, p) = try world(CameraConstraints(bounds: Bounds(southWest: C(-20, -180), northEast: C(-10, -170)), policy: .reject))
        try west.ok(.camera(.own, .end(cam(-15, 180), animated: false), viewport: nil), by: p)
    }

    @Test func beginIsNotConstrained() throws {
        var (w, e) = try world(CameraConstraints(bounds: Self.alps, policy: .reject))
        try w.ok(.camera(.own, .begin(animated: false), viewport: nil), by: e)
    }
}

@Suite struct CameraLeaseTests {
    @Test func sharedCameraNeedsTheLease() throws {
        var (w, o, e, v) = try trio()
        try w.refuse(.camera(.shared, .end(cam(1, 1), animated: true), viewport: nil), by: o, .cameraLeaseRequired)
        try w.refuse(.camera(.shared, .begin(animated: true), viewport: nil), by: e, .cameraLeaseRequired)
        try w.refuse(.camera(.shared, .changing(cam(1, 1)), viewport: nil), by: v, .forbidden)
        try w.ok(.acquireCameraLease(force: false), by: e)
        let err = try w.refuse(.camera(.shared, .end(cam(1, 1), animated: true), viewport: nil), by: o, .cameraLeaseRequired)
        #expect(err.holder == e)
        try w.ok(.camera(.shared, .end(cam(1, 1), animated: true), viewport: nil), by: e)
        #expect(w.session.sharedCamera == cam(1, 1))
    }

    @Test func acquireAndReleaseAreBroadcast() throws {
        var (w, _, e, _) = try trio()
        #expect(try w.events(.acquireCameraLease(force: false), by: e) == [.cameraLease(holder: e, reason: "acquired")])
        #expect(w.session.cameraLeaseHolder == e)
        // Acquiring again is a no-op.
        #expect(try w.events(.acquireCameraLease(force: false), by: e) == [])
        #expect(try w.events(.releaseCameraLease, by: e) == [.cameraLease(holder: nil, reason: "released")])
        #expect(w.session.cameraLeaseHolder == nil)
        try w.refuse(.releaseCameraLease, by: e, .cameraLeaseRequired)
    }

    @Test func heldLeaseConflictNamesTheHolder() throws {
        var (w, o, e, _) = try trio()
        let e2 = try w.join("Eve", .editor)
        try w.ok(.acquireCameraLease(force: false), by: e)
        let err = try w.refuse(.acquireCameraLease(force: false), by: e2, .cameraLeaseHeld)
        #expect(err.holder == e)
        #expect(err.message.contains("Ed"))
        // Editors cannot force; owners need force.
        #expect(try w.refuse(.acquireCameraLease(force: true), by: e2, .cameraLeaseHeld).holder == e)
        #expect(try w.refuse(.acquireCameraLease(force: false), by: o, .cameraLeaseHeld).holder == e)
        try w.refuse(.releaseCameraLease, by: o, .cameraLeaseRequired)
    }

    @Test func ownerForcesTakeOverFromEditorButNotFromOwner() throws {
        var (w, o, e, _) = try trio()
        let o2 = try w.join("Otto", .owner)
        try w.ok(.acquireCameraLease(force: false), by: e)
        #expect(try w.events(.acquireCameraLease(force: true), by: o) == [.cameraLease(holder: o, reason: "taken_over")])
        #expect(w.session.cameraLeaseHolder == o)
        try w.refuse(.camera(.shared, .end(cam(1, 1), animated: true), viewport: nil), by: e, .cameraLeaseRequired)
        #expect(try w.refuse(.acquireCameraLease(force: true), by: o2, .cameraLeaseHeld).holder == o)
    }

    @Test func leaseIsReleasedWhenTheHolderLeaves() throws {
        var (w, _, e, _) = try trio()
        try w.ok(.acquireCameraLease(force: false), by: e)
        let events = w.session.leave(e, reason: "closed", at: w.now).map(\.event)
        #expect(events == [.cameraLease(holder: nil, reason: "holder_left"), .participantLeft(e, reason: "closed")])
        #expect(w.session.cameraLeaseHolder == nil)
    }
}

@Suite struct FollowTests {
    @Test func followParticipantOrSharedAndStop() throws {
        var (w, o, _, v) = try trio()
        #expect(try w.events(.follow(.participant(o)), by: v) == [.follow(v, .participant(o))])
        #expect(w.participant(v)?.following == .participant(o))
        #expect(try w.events(.follow(.shared), by: v) == [.follow(v, .shared)])
        #expect(w.participant(v)?.following == .shared)
        #expect(try w.events(.follow(nil), by: v) == [.follow(v, nil)])
        #expect(w.participant(v)?.following == nil)
    }

    @Test func cannotFollowSelfUnknownOrHidden() throws {
        var (w, _, e, v) = try trio()
        let h = try w.join("Dash", .viewer, hidden: true)
        try w.refuse(.follow(.participant(v)), by: v, .invalidField, field: "target")
        try w.refuse(.follow(.participant("p99")), by: e, .notFound, field: "target")
        try w.refuse(.follow(.participant(h)), by: e, .notFound, field: "target")
    }

    @Test func followingEndsWhenTheFollowedLeaves() throws {
        var (w, o, _, v) = try trio()
        try w.ok(.follow(.participant(o)), by: v)
        _ = w.session.leave(o, reason: "closed", at: w.now)
        #expect(w.participant(v)?.following == nil)
    }
}
