"""Attribute filters of interest (SPEC §4.7) over real sockets, with the Python `websockets`
client: a filtered client's annotations equal the session's that its filter matches (inside its
area, with a viewport) while updates move annotations in and out of the filter and the area and
the client changes its filter; its stream accounts for every seq; a bad filter is refused with
`invalid_field` naming the position, and the connection survives."""

import random

from meridian_client import Client, run, snapshot
from test_viewport_interest import PLACES, ViewportMirror, intersects, near, refused_join


def meta(a, key):
    return a.get("metadata", {}).get(key)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# Each filter beside what it means, written out (SPEC §4.7: a missing field makes every
# comparison false but `= null`; `not` inverts).
FILTERS = [
    ("kind = 'truck'", lambda a: a.get("kind") == "truck"),
    ("metadata.team in ('red', 'blue') and metadata.load between 1 and 10",
     lambda a: meta(a, "team") in ("red", "blue") and number(meta(a, "load")) and 1 <= meta(a, "load") <= 10),
    ("not type = 'polygon' and (kind != 'car' or zIndex >= 2)",
     lambda a: a["type"] != "polygon" and ((a.get("kind") is not None and a.get("kind") != "car") or a.get("zIndex", 0) >= 2)),
    ("kind = null OR metadata['load'] > 8", lambda a: a.get("kind") is None or (number(meta(a, "load")) and meta(a, "load") > 8)),
    ("metadata.team not in ('red') and not draggable = true",
     lambda a: meta(a, "team") is not None and meta(a, "team") != "red" and not (a["type"] == "point" and a.get("draggable", False))),
]
KINDS = ["truck", "car", "road", None]
TEAMS = ["red", "blue", "green", None]


def metadata(rng):
    m = {}
    team = rng.choice(TEAMS)
    if team is not None:
        m["team"] = team
    if rng.random() < 0.8:
        m["load"] = rng.randrange(16)
    return m


def annotation(rng, id):
    place = rng.choice(PLACES)
    shape = rng.randrange(4)
    if shape == 0:
        a = {"type": "polyline", "id": id, "coordinates": [near(rng, place, 0.5) for _ in range(3)]}
    elif shape == 1:
        a = {"type": "polygon", "id": id, "coordinates": [near(rng, place, 0.5) for _ in range(4)]}
    else:
        a = {"type": "point", "id": id, "coordinate": near(rng, place, 0.3), "draggable": rng.random() < 0.7}
    kind = rng.choice(KINDS)
    if kind is not None:
        a["kind"] = kind
    a["metadata"] = metadata(rng)
    a["zIndex"] = rng.randrange(4)
    return a


def changes(rng, a):
    """An update that changes what the filters read, and now and then where the annotation is."""
    c = {}
    if rng.random() < 0.5:
        c["kind"] = rng.choice(KINDS)
    if rng.random() < 0.5:
        c["metadata"] = metadata(rng)
    if rng.random() < 0.3:
        c["zIndex"] = rng.randrange(4)
    if a["type"] == "point":
        if rng.random() < 0.3:
            c["draggable"] = rng.random() < 0.7
        if rng.random() < 0.3:
            c["coordinate"] = near(rng, rng.choice(PLACES), 0.3)
    elif rng.random() < 0.3:
        c["coordinates"] = [near(rng, rng.choice(PLACES), 0.5) for _ in range(3 if a["type"] == "polyline" else 4)]
    return c or {"kind": rng.choice(KINDS)}


class Watcher:
    """A filtered client and its mirror, built from its messages alone."""

    def __init__(self, client, welcome, interest, predicate):
        self.client = client
        self.mirror = ViewportMirror(welcome)
        self.interest = interest
        self.predicate = predicate
        # Annotations that events took out of the filter or area (`left` of an `interest` message
        # that answers no request of the watcher's).
        self.left = 0
        self.counting = False
        apply = self.mirror.apply

        def counting(m):
            if self.counting and m["type"] == "interest":
                self.left += len(m["left"])
            apply(m)
        self.mirror.apply = counting

    async def settle(self):
        """Reads everything sent before a ping's answer."""
        ref = await self.client.send({"type": "ping"})
        self.counting = True
        try:
            assert (await self.mirror.read_until_answer(self.client, ref))["type"] == "ack"
        finally:
            self.counting = False

    def expected(self, everything):
        return {a["id"]: a for a in everything if self.predicate(a) and intersects(a, self.mirror.area)}


async def filtered_session(server, session_id, interests):
    """An owner with 50 annotations, then one watcher per (interest, predicate). Returns the
    shapes of the annotations by id too."""
    rng = random.Random(20261126)
    owner = await Client.open(server.url, "owner")
    await owner.join(session_id, "Owner", "owner")
    shapes = {}
    for i in range(50):
        a = annotation(rng, f"a{i}")
        shapes[a["id"]] = a["type"]
        await owner.ok({"type": "annotation.add", "annotation": a})
    watchers = []
    for n, (interest, predicate) in enumerate(interests):
        client = await Client.open(server.url, f"watcher{n}")
        welcome = await client.join(session_id, f"Watcher{n}", "viewer", interest=interest)
        assert welcome["interest"]["filter"] == interest["filter"], welcome["interest"]
        watchers.append(Watcher(client, welcome, interest, predicate))
    return rng, owner, watchers, shapes


async def churn(server, session_id, rng, owner, watchers, shapes, steps=200):
    """Random adds, removes, updates and drags; every 10 steps one watcher changes its filter,
    and every watcher's mirror is compared with the session."""
    moved_out = 0
    for step in range(steps):
        ids = sorted(shapes)
        roll = rng.random()
        if roll < 0.08:
            a = annotation(rng, f"n{step}")
            shapes[a["id"]] = a["type"]
            await owner.ok({"type": "annotation.add", "annotation": a})
        elif roll < 0.14 and ids:
            id = rng.choice(ids)
            del shapes[id]
            await owner.ok({"type": "annotation.remove", "id": id})
        elif roll < 0.85 and ids:
            id = rng.choice(ids)
            await owner.ok({"type": "annotation.update", "id": id, "changes": changes(rng, {"type": shapes[id]})})
        else:
            points = [id for id in ids if shapes[id] == "point"]
            if points:
                id = rng.choice(points)
                answer, _ = await owner.request({"type": "drag", "id": id, "state": "starting"})
                if answer["type"] == "ack":
                    await owner.ok({"type": "drag", "id": id, "state": "dragging", "coordinate": near(rng, rng.choice(PLACES), 0.2)})
                    await owner.ok({"type": "drag", "id": id, "state": rng.choice(["ending", "canceling"])})
        if step % 10 == 9:
            w = rng.choice(watchers)
            text, w.predicate = rng.choice(FILTERS)
            interest = {**w.interest, "filter": text}
            w.interest = interest
            ref = await w.client.send({"type": "interest", **interest})
            assert (await w.mirror.read_until_answer(w.client, ref))["type"] == "ack"
            everything = (await snapshot(server.url, session_id))["annotations"]
            for w in watchers:
                await w.settle()
                expected = w.expected(everything)
                assert w.mirror.annotations == expected, f"step {step} [{w.interest['filter']}]: {sorted(set(w.mirror.annotations) ^ set(expected))}"
                moved_out += len(everything) - len(expected)
    assert moved_out > 0, "the scenario never left anything outside a filter"
    assert all(w.left > 0 for w in watchers), "an update took an annotation out of every watcher's filter or area"


def test_filter_alone_and_with_a_viewport_mirror_the_matching_annotations(server, session_id):
    async def scenario():
        london = {"center": {"latitude": 51.5, "longitude": -0.12}, "zoom": 3}
        alone = {"mode": "everything", "filter": FILTERS[0][0]}
        viewport = {"mode": "viewport", "margin": 0.5, "camera": london, "viewport": {"width": 1024, "height": 768},
                    "filter": FILTERS[1][0]}
        rng, owner, watchers, shapes = await filtered_session(server, session_id, [(alone, FILTERS[0][1]), (viewport, FILTERS[1][1])])
        everything = (await snapshot(server.url, session_id))["annotations"]
        for w in watchers:
            assert w.mirror.annotations == w.expected(everything), "the welcome holds exactly the matching annotations"
            assert 0 < len(w.mirror.annotations) < len(everything)
        try:
            await churn(server, session_id, rng, owner, watchers, shapes)
        finally:
            await owner.close()
            for w in watchers:
                await w.client.close()
    run(scenario())


def test_an_update_out_of_the_filter_is_followed_by_left(server, session_id):
    async def scenario():
        owner = await Client.open(server.url, "owner")
        await owner.join(session_id, "Owner", "owner")
        await owner.ok({"type": "annotation.add", "annotation": {"type": "point", "id": "t", "kind": "truck",
                                                                  "coordinate": {"latitude": 1, "longitude": 2}}})
        viewer = await Client.open(server.url, "viewer")
        welcome = await viewer.join(session_id, "Viewer", "viewer", interest={"mode": "everything", "filter": "kind = 'truck'"})
        assert [a["id"] for a in welcome["snapshot"]["annotations"]] == ["t"]
        ack, _ = await owner.ok({"type": "annotation.update", "id": "t", "changes": {"kind": "car"}})
        _, messages = await viewer.ping()
        assert [m["type"] for m in messages] == ["annotation.updated", "interest"], messages
        assert messages[1]["left"] == ["t"] and messages[1]["seq"] == ack["seq"] and messages[1]["view"]["filter"] == "kind = 'truck'"
        # Not matching: an update is skipped, and the next one that matches brings it back whole.
        await owner.ok({"type": "annotation.update", "id": "t", "changes": {"title": "x"}})
        ack, _ = await owner.ok({"type": "annotation.update", "id": "t", "changes": {"kind": "truck"}})
        _, messages = await viewer.ping()
        assert [m["type"] for m in messages] == ["skipped", "annotation.updated"], messages
        assert messages[0]["seq"] == ack["seq"] - 1 and messages[1]["annotation"]["title"] == "x"
        await owner.close()
        await viewer.close()
    run(scenario())


def test_bad_filter_is_refused_naming_the_position_and_the_connection_survives(server, session_id):
    async def scenario():
        c = await Client.open(server.url, "c")
        cases = [
            ({"mode": "everything", "filter": "kind = 'truck' and metadata.team in ("}, "interest.filter",
             "at 38: expected a value after \"metadata.team in (\""),
            ({"mode": "viewport", "filter": "colour = 'red'"}, "interest.filter", "at 1: unknown field \"colour\""),
            ({"mode": "everything", "filter": "zIndex = 'x'"}, "interest.filter", "at 10: zIndex is a number"),
            ({"mode": "everything", "filter": "kind = '" + "x" * 1020 + "'"}, "interest.filter", "at 1025: the filter is longer than 1024 bytes (1029)"),
            ({"mode": "viewport", "clusterBelow": 5, "filter": "kind = 'a'"}, "interest.filter", "cannot be combined with clusterBelow"),
            ({"mode": "everything", "filter": 3}, "interest.filter", "must be a string"),
        ]
        for interest, field, message in cases:
            answer = await refused_join(c, session_id, interest, field)
            assert message in answer["message"], (message, answer)
        await c.join(session_id, "C", "editor", interest={"mode": "everything", "filter": "kind = 'a'"})
        answer, _ = await c.answer(await c.send({"type": "interest", "mode": "everything", "filter": "kind in ('a' 'b')"}, check=False))
        assert answer["type"] == "error" and answer["field"] == "filter" and "at 14: expected \",\" or \")\"" in answer["message"], answer
        # The filter in force is unchanged, and the connection serves on.
        answer, messages = await c.request({"type": "interest", "mode": "everything", "filter": "kind = 'a'"})
        assert answer["type"] == "ack" and messages[-1]["view"]["filter"] == "kind = 'a'", (answer, messages)
        await c.ping()
        await c.close()
    run(scenario())
