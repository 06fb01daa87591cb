"""Viewport interest over real sockets, with the Python `websockets` client: a viewport client's
annotations equal the session's inside its area while everything changes and its camera moves
(over the antimeridian and near the poles too), its stream accounts for every seq, resume, and
refusals of bad interest fields."""

import random

from meridian_client import Client, run, snapshot

PLACES = [(51.5, -0.12), (35.68, 139.7), (-33.9, 151.2), (64.1, -21.9), (-17.7, 179.9), (-16.5, -179.9),
          (78.2, 15.6), (-77.8, 166.7), (40.7, -74.0), (1.3, 103.8)]


def wrap(lon):
    return lon - 360 if lon > 180 else lon + 360 if lon < -180 else lon


def near(rng, place, spread):
    lat, lon = place
    return {"latitude": max(-89.9, min(89.9, lat + rng.uniform(-spread, spread))), "longitude": wrap(lon + rng.uniform(-spread, spread))}


def annotation(rng, id):
    place = rng.choice(PLACES)
    kind = rng.randrange(5)
    if kind == 0:
        return {"type": "polyline", "id": id, "coordinates": [near(rng, place, 0.5) for _ in range(3)]}
    if kind == 1:
        return {"type": "polygon", "id": id, "coordinates": [near(rng, place, 0.5) for _ in range(4)]}
    return {"type": "point", "id": id, "coordinate": near(rng, place, 0.3), "draggable": True}


def extent(a):
    coords = [a["coordinate"]] if a["type"] == "point" else a["coordinates"]
    lats = [c["latitude"] for c in coords]
    lons = [c["longitude"] for c in coords]
    return min(lats), max(lats), min(lons), max(lons)


def intersects(a, area):
    """The annotation's extent meets the area (which crosses the antimeridian when west > east)."""
    south, north, west, east = extent(a)
    sw, ne = area["southWest"], area["northEast"]
    if south > ne["latitude"] or north < sw["latitude"]:
        return False
    if sw["longitude"] <= ne["longitude"]:
        return west <= ne["longitude"] and east >= sw["longitude"]
    return east >= sw["longitude"] or west <= ne["longitude"]


class ViewportMirror:
    """What a viewport client knows, from its messages alone."""

    def __init__(self, welcome):
        self.annotations = {a["id"]: a for a in welcome["snapshot"]["annotations"]} if "snapshot" in welcome else {}
        self.area = welcome["interest"]["area"]
        self.last = welcome["seq"]

    def apply(self, m):
        t = m["type"]
        if t == "interest":
            if m["complete"]:
                self.annotations = {}
            for a in m["entered"]:
                self.annotations[a["id"]] = a
            for id in m["left"]:
                self.annotations.pop(id, None)
            self.area = m["view"]["area"]
            self.last = max(self.last, m["seq"])
            return
        if t == "skipped":
            # A skipped marker never covers a seq the stream accounted for (an interest message's included).
            assert m["seq"] > self.last, f"skipped {m['seq']} after the stream accounted for {self.last}"
            self.last = m["seq"]
            return
        if t in ("ack", "error", "welcome", "live", "clusters") or "seq" not in m:
            return
        if not m.get("transient"):
            assert m["seq"] == self.last + 1, f"{t} has seq {m['seq']} after {self.last}: a hole no skipped marker covers"
            self.last = m["seq"]
        if t in ("annotation.added", "annotation.updated"):
            self.annotations[m["annotation"]["id"]] = m["annotation"]
        elif t == "annotation.removed":
            assert m["id"] in self.annotations, f"annotation.removed of {m['id']}, which the member does not hold"
            del self.annotations[m["id"]]
        elif t == "drag":
            assert m["id"] in self.annotations, f"drag {m['state']} of {m['id']}, which the member does not hold"
            self.annotations[m["id"]] = {**self.annotations[m["id"]], "coordinate": m["coordinate"]}
            if m["state"] == "ending":  # the commit's revision (SPEC §6.3)
                self.annotations[m["id"]]["revision"] = m["revision"]

    async def read_until_answer(self, client, ref):
        answer, messages = await client.answer(ref)
        for m in messages:
            self.apply(m)
        return answer


def camera(rng):
    lat, lon = rng.choice(PLACES)
    return {"center": {"latitude": max(-85, min(85, lat)), "longitude": lon}, "zoom": rng.choice([3, 6, 8, 10]),
            "bearing": rng.choice([0, 0, 45, 200])}


INTEREST = {"mode": "viewport", "margin": 0.25}


def test_viewport_mirror_equals_the_session_inside_the_area(server, session_id):
    async def scenario():
        rng = random.Random(20261123)
        owner = await Client.open(server.url, "owner")
        await owner.join(session_id, "Owner", "owner")
        ids = []
        for i in range(60):
            ids.append(f"a{i}")
            await owner.ok({"type": "annotation.add", "annotation": annotation(rng, f"a{i}")})
        viewer = await Client.open(server.url, "viewer")
        welcome = await viewer.join(session_id, "Viewer", "viewer", interest={
            **INTEREST, "camera": camera(rng), "viewport": {"width": 1024, "height": 768}})
        mirror = ViewportMirror(welcome)
        assert len(mirror.annotations) < len(ids), "the welcome holds only the area's annotations"
        filtered_away = 0
        try:
            for step in range(240):
                points = [i for i in ids if i.startswith("a")]
                roll = rng.random()
                if roll < 0.1:
                    ids.append(f"n{step}")
                    await owner.ok({"type": "annotation.add", "annotation": annotation(rng, f"n{step}")})
                elif roll < 0.2 and ids:
                    victim = ids.pop(rng.randrange(len(ids)))
                    await owner.ok({"type": "annotation.remove", "id": victim})
                elif roll < 0.55 and points:
                    # A whole drag, ending somewhere else: in or out of the viewer's area.
                    id = rng.choice(points)
                    answer, _ = await owner.request({"type": "drag", "id": id, "state": "starting"})
                    if answer["type"] == "ack":
                        for _ in range(3):
                            await owner.ok({"type": "drag", "id": id, "state": "dragging", "coordinate": near(rng, rng.choice(PLACES), 0.2)})
                        await owner.ok({"type": "drag", "id": id, "state": rng.choice(["ending", "canceling"])})
                else:
                    ref = await viewer.send({"type": rng.choice(["camera.changing", "camera.end"]), "camera": camera(rng),
                                             "viewport": {"width": rng.choice([400, 1024]), "height": 768}})
                    assert (await mirror.read_until_answer(viewer, ref))["type"] == "ack"
                if step % 20 == 19:
                    # The same interest again: the answer names the server's area exactly.
                    ref = await viewer.send({"type": "interest", **INTEREST})
                    assert (await mirror.read_until_answer(viewer, ref))["type"] == "ack"
                    everything = (await snapshot(server.url, session_id))["annotations"]
                    inside = {a["id"]: a for a in everything if intersects(a, mirror.area)}
                    assert mirror.annotations == inside, f"step {step}: {sorted(set(mirror.annotations) ^ set(inside))}"
                    filtered_away += len(everything) - len(inside)
            assert filtered_away > 0, "the scenario never left anything outside the area"
        finally:
            await owner.close()
            await viewer.close()
    run(scenario())


def test_resumed_viewport_join_gets_a_complete_area(server, session_id):
    async def scenario():
        owner = await Client.open(server.url, "owner")
        await owner.join(session_id, "Owner", "owner")
        london = {"center": {"latitude": 51.5, "longitude": -0.12}, "zoom": 10}
        pin = lambda id, lat, lon: {"type": "annotation.add", "annotation": {"type": "point", "id": id, "coordinate": {"latitude": lat, "longitude": lon}}}
        await owner.ok(pin("london", 51.5, -0.12))
        viewer = await Client.open(server.url, "viewer")
        interest = {"mode": "viewport", "camera": london, "viewport": {"width": 800, "height": 600}}
        welcome = await viewer.join(session_id, "Viewer", "viewer", interest=interest)
        assert [a["id"] for a in welcome["snapshot"]["annotations"]] == ["london"]
        ack, _ = await viewer.ping()
        await viewer.close()
        await owner.ok(pin("tokyo", 35.68, 139.7))
        await owner.ok(pin("soho", 51.51, -0.13))
        await owner.ok({"type": "annotation.remove", "id": "london"})
        await owner.ok({"type": "select", "id": "soho"})

        again = await Client.open(server.url, "viewer2")
        welcome = await again.join(session_id, "Viewer", "viewer", interest=interest, resume={"epoch": welcome["epoch"], "seq": ack["seq"]})
        assert welcome["resumed"] is True and welcome["interest"]["area"] is not None
        mirror = ViewportMirror(welcome)
        mirror.last = ack["seq"]
        mirror.annotations = {"london": {"type": "point", "id": "london", "coordinate": {"latitude": 51.5, "longitude": -0.12}}}
        messages = []
        while True:
            m = await again.recv()
            messages.append(m)
            mirror.apply(m)
            if m["type"] == "interest":
                break
        kinds = [m["type"] for m in messages]
        assert "annotation.added" not in kinds and "annotation.removed" not in kinds, kinds
        assert "skipped" in kinds and "selection" in kinds and "live" in kinds, kinds
        assert messages[-1]["complete"] is True
        assert sorted(mirror.annotations) == ["soho"]
        await owner.close()
        await again.close()
    run(scenario())


async def refused_join(c, session, interest, field):
    """Has `c` ask to join `session` as "C", an editor, with `interest` (sent as it is, unchecked
    against the schema); the error, which must be invalid_field naming `field`."""
    ref = await c.send({"type": "join", "session": session, "name": "C", "role": "editor", "interest": interest}, check=False)
    answer, _ = await c.answer(ref)
    assert answer["type"] == "error" and answer["code"] == "invalid_field" and answer.get("field") == field, (interest, answer)
    return answer


def test_bad_interest_is_refused_by_field_and_the_connection_survives(server, session_id):
    async def scenario():
        c = await Client.open(server.url, "c")
        cases = [
            ({"mode": "viewport", "margin": 5}, "interest.margin"),
            ({"mode": "viewport", "clusterBelow": 0}, "interest.clusterBelow"),
            ({"mode": "sideways"}, "interest.mode"),
            ({"margin": 1}, "interest.mode"),
            ({"mode": "viewport", "camera": {"center": {"latitude": 0, "longitude": 0}, "zoom": 30}}, "interest.camera.zoom"),
            ({"mode": "viewport", "viewport": {"width": 0, "height": 10}}, "interest.viewport.width"),
            ({"mode": "everything", "clusterBelow": 3}, "interest.mode"),
            ({"mode": "viewport", "extra": 1}, "interest.extra"),
        ]
        for interest, field in cases:
            await refused_join(c, session_id, interest, field)
        answer, _ = await c.request({"type": "interest", "mode": "viewport"})
        assert answer["code"] == "not_joined"
        await c.join(session_id, "C", "editor")
        answer, _ = await c.answer(await c.send({"type": "interest", "mode": "viewport", "margin": -1}, check=False))
        assert answer["type"] == "error" and answer["field"] == "margin", answer
        await c.ping()
        await c.close()
    run(scenario())
