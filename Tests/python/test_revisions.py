"""Annotation revisions and conditional writes (SPEC §6.3) over real sockets: revisions in the
welcome and in events, stale conditional writes refused with revision_conflict and the current
annotation, an edit queued while offline and replayed after a resume, and revisions that survive
a restart (also of annotations stored without one)."""

import http.client
import json
import sqlite3
import tempfile
from pathlib import Path

from conftest import Server
from meridian_client import Client, pair, paired, pin, run, snapshot, members


class Revisions:
    """What one client knows of each annotation's revision: from its snapshot and the events it
    received, as a client mirror keeps it."""

    def __init__(self, welcome):
        self.seen = {a["id"]: a["revision"] for a in welcome["snapshot"]["annotations"]}

    def apply(self, messages):
        for m in messages:
            if m["type"] in ("annotation.added", "annotation.updated"):
                self.seen[m["annotation"]["id"]] = m["annotation"]["revision"]
            elif m["type"] == "annotation.removed":
                self.seen.pop(m["id"], None)
            elif m["type"] == "drag" and m["state"] == "ending":
                self.seen[m["id"]] = m["revision"]


def test_revisions_in_the_welcome_and_in_events(server, session_id):
    async def scenario():
        async with paired(server.url, session_id) as (alice, bob):
            ack, events = await alice.ok({"type": "annotation.add", "annotation": pin()})
            added = events[0]
            assert added["annotation"]["revision"] == added["seq"] == ack["seq"], added
            _, events = await alice.ok({"type": "annotation.update", "id": "pin", "changes": {"title": "Quay"}})
            updated = events[0]
            assert updated["annotation"]["revision"] == updated["seq"] > added["seq"], updated

            # Drag starts and moves leave it; the ending carries the new one, its own seq.
            await bob.ok({"type": "drag", "id": "pin", "state": "starting"})
            await bob.ok({"type": "drag", "id": "pin", "state": "dragging", "coordinate": {"latitude": 11, "longitude": 21}})
            await bob.ok({"type": "drag", "id": "pin", "state": "dragging", "coordinate": {"latitude": 12, "longitude": 22}})
            mid = await snapshot(server.url, session_id)
            assert mid["annotations"][0]["revision"] == updated["seq"], mid
            _, events = await bob.ok({"type": "drag", "id": "pin", "state": "ending"})
            ending, none = events
            assert ending["state"] == "ending" and ending["revision"] == ending["seq"], ending
            assert none["state"] == "none" and "revision" not in none, none
            for m in alice.log:
                if m["type"] == "drag" and m["state"] != "ending":
                    assert "revision" not in m, m

            carol = await Client.open(server.url, "carol")
            try:
                welcome = await carol.join(session_id, "Carol", "viewer")
                [a] = welcome["snapshot"]["annotations"]
                assert a["revision"] == ending["seq"] and a["coordinate"] == {"latitude": 12, "longitude": 22}, a
            finally:
                await carol.close()

    run(scenario())


def test_a_stale_conditional_update_is_refused_with_the_current_annotation(server, session_id):
    async def scenario():
        async with paired(server.url, session_id) as (alice, bob):
            _, events = await alice.ok({"type": "annotation.add", "annotation": pin(title="Berth 4")})
            seen = events[0]["annotation"]["revision"]
            await bob.until(lambda m: m["type"] == "annotation.added")
            # Alice changes it; Bob, who saw only the add, edits against what he saw.
            _, events = await alice.ok({"type": "annotation.update", "id": "pin", "changes": {"title": "Berth 5"}, "ifRevision": seen})
            theirs = events[0]["annotation"]
            before = await snapshot(server.url, session_id)
            ref = await bob.send({"type": "annotation.update", "id": "pin", "changes": {"title": "Berth 6"}, "ifRevision": seen})
            error, _ = await bob.answer(ref)
            assert error["type"] == "error" and error["code"] == "revision_conflict", error
            assert error["field"] == "ifRevision", error
            assert error["revision"] == theirs["revision"] == events[0]["seq"], error
            assert error["annotation"] == theirs, error
            assert "annotation.update" in error["message"] and str(seen) in error["message"], error
            # Nothing changed, and nobody heard of it.
            assert await snapshot(server.url, session_id) == before
            _, extra = await alice.ping()
            assert extra == [], extra
            # Knowing theirs, Bob's edit goes through.
            _, events = await bob.ok({"type": "annotation.update", "id": "pin", "changes": {"title": "Berth 6"}, "ifRevision": error["revision"]})
            assert events[0]["annotation"]["title"] == "Berth 6"

    run(scenario())


def test_conditional_remove_and_drag_start(server, session_id):
    async def scenario():
        async with paired(server.url, session_id) as (alice, bob):
            _, events = await alice.ok({"type": "annotation.add", "annotation": pin()})
            first = events[0]["annotation"]["revision"]
            await alice.ok({"type": "drag", "id": "pin", "state": "starting", "ifRevision": first})
            await alice.ok({"type": "drag", "id": "pin", "state": "dragging", "coordinate": {"latitude": 1, "longitude": 2}})
            _, events = await alice.ok({"type": "drag", "id": "pin", "state": "ending"})
            moved = events[0]["revision"]

            # Bob starts a drag and removes it against the revision before the move.
            for request in ({"type": "drag", "id": "pin", "state": "starting", "ifRevision": first},
                            {"type": "annotation.remove", "id": "pin", "ifRevision": first}):
                answer, _ = await bob.request(request)
                assert answer["type"] == "error" and answer["code"] == "revision_conflict", answer
                assert answer["revision"] == moved, answer
                assert answer["annotation"]["coordinate"] == {"latitude": 1, "longitude": 2}, answer
                assert request["type"] in answer["message"], answer

            await bob.ok({"type": "drag", "id": "pin", "state": "starting", "ifRevision": moved})
            await bob.ok({"type": "drag", "id": "pin", "state": "canceling"})
            _, events = await bob.ok({"type": "annotation.remove", "id": "pin", "ifRevision": moved})
            assert events[-1] == {"type": "annotation.removed", "seq": events[-1]["seq"], "id": "pin"}

    run(scenario())


def test_an_edit_queued_offline_and_replayed_after_a_resume_gets_the_conflict(server, session_id):
    async def scenario():
        alice, bob = await pair(server.url, session_id)
        try:
            await alice.ok({"type": "annotation.add", "annotation": pin(title="Pallet 7")})
            await bob.until(lambda m: m["type"] == "annotation.added")
            mirror = Revisions(bob.welcome)
            mirror.apply(bob.log)
            ack, _ = await bob.ping()
            epoch, last = bob.welcome["epoch"], ack["seq"]
            # Bob's truck enters a tunnel: the socket is really closed, and his edit waits in a queue.
            queued = {"type": "annotation.update", "id": "pin", "changes": {"title": "Pallet 7 (loaded)"}, "ifRevision": mirror.seen["pin"]}
            await bob.close()
            await alice.until(lambda m: m["type"] == "participant.left")
            _, events = await alice.ok({"type": "annotation.update", "id": "pin", "changes": {"title": "Pallet 7 (shipped)"}})
            theirs = events[0]["annotation"]

            back = await Client.open(server.url, "bob-again")
            try:
                welcome = await back.join(session_id, "Bob", "editor", resume={"epoch": epoch, "seq": last})
                assert welcome["resumed"] is True, welcome
                # The queued edit is replayed as soon as the connection is back.
                error, missed = await back.request(queued)
                assert error["type"] == "error" and error["code"] == "revision_conflict", error
                assert error["annotation"] == theirs and error["revision"] == theirs["revision"], error
                # The replay brought the change it conflicts with.
                assert any(m["type"] == "annotation.updated" and m["annotation"] == theirs for m in missed), missed
                mirror.apply(missed)
                assert mirror.seen["pin"] == error["revision"]
                assert (await snapshot(server.url, session_id))["annotations"][0]["title"] == "Pallet 7 (shipped)"
            finally:
                await back.close()
        finally:
            await alice.close()

    run(scenario())


def test_revision_fields_clients_may_not_send(server, session_id):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": pin()})
            bad = [
                ({"type": "annotation.add", "annotation": pin("p2", revision=5)}, "annotation.revision"),
                ({"type": "annotation.update", "id": "pin", "changes": {"revision": 5}}, "changes.revision"),
                ({"type": "annotation.update", "id": "pin", "changes": {"title": "T"}, "ifRevision": "1"}, "ifRevision"),
                ({"type": "annotation.update", "id": "pin", "changes": {"title": "T"}, "ifRevision": 0}, "ifRevision"),
                ({"type": "annotation.remove", "id": "pin", "ifRevision": -3}, "ifRevision"),
                ({"type": "annotation.remove", "id": "pin", "ifRevision": 1.5}, "ifRevision"),
                ({"type": "annotation.remove", "id": "pin", "ifRevision": 9007199254740992}, "ifRevision"),
                ({"type": "drag", "id": "pin", "state": "dragging", "coordinate": {"latitude": 1, "longitude": 1}, "ifRevision": 1}, "ifRevision"),
            ]
            for request, field in bad:
                ref = await alice.send(request, check=False)
                error, events = await alice.answer(ref)
                assert error["type"] == "error" and error["code"] == "invalid_field", (request, error)
                assert error["field"] == field, (request, error)
                assert events == [], events
            # null counts as no condition (SPEC conventions).
            answer, _ = await alice.answer(await alice.send({"type": "annotation.remove", "id": "pin", "ifRevision": None}, check=False))
            assert answer["type"] == "ack", answer

    run(scenario())


def _read_session(server, session):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        conn.request("GET", f"/api/sessions/{session}")
        response = conn.getresponse()
        assert response.status == 200
        return json.loads(response.read())
    finally:
        conn.close()


def test_revisions_survive_a_restart_and_older_records_load(session_id):
    data = tempfile.mkdtemp(prefix="meridian-rev-")
    first = Server("--data-dir", data)
    try:
        async def edit():
            async with members(first.url, session_id, ("alice", "owner")) as (alice,):
                await alice.ok({"type": "annotation.add", "annotation": pin("a")})
                await alice.ok({"type": "annotation.add", "annotation": pin("b")})
                await alice.ok({"type": "annotation.update", "id": "a", "changes": {"title": "A"}})
                await alice.ok({"type": "drag", "id": "b", "state": "starting"})
                await alice.ok({"type": "drag", "id": "b", "state": "dragging", "coordinate": {"latitude": 5, "longitude": 5}})
                await alice.ok({"type": "drag", "id": "b", "state": "ending"})
                return {a["id"]: a["revision"] for a in (await snapshot(first.url, session_id))["annotations"]}

        revisions = run(edit())
        assert revisions["b"] > revisions["a"] > 1, revisions
        api = _read_session(first, session_id)
        assert {a["id"]: a["revision"] for a in api["snapshot"]["annotations"]} == revisions
    finally:
        first.stop()

    second = Server("--data-dir", data)
    try:
        restored = run(snapshot(second.url, session_id))
        assert {a["id"]: a["revision"] for a in restored["annotations"]} == revisions
        stored = _read_session(second, session_id)
        assert {a["id"]: a["revision"] for a in stored["snapshot"]["annotations"]} == revisions
    finally:
        second.stop()

    # A record written before revisions existed: its annotations get the record's seq.
    db = sqlite3.connect(Path(data) / "meridian.sqlite")
    try:
        db.execute("UPDATE annotations SET body = json_remove(body, '$.revision') WHERE session_id = ?", (session_id,))
        db.commit()
        (seq,) = db.execute("SELECT seq FROM sessions WHERE id = ?", (session_id,)).fetchone()
    finally:
        db.close()
    third = Server("--data-dir", data)
    try:
        restored = run(snapshot(third.url, session_id))
        assert {a["id"]: a["revision"] for a in restored["annotations"]} == {"a": seq, "b": seq}
    finally:
        third.stop()
