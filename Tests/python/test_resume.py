"""Reconnect with resume: exact missed events, else a fresh snapshot."""

import uuid

from meridian_client import Client, pair, run, snapshot


def point(id, lat):
    return {"type": "annotation.add", "annotation": {"type": "point", "id": id, "coordinate": {"latitude": lat, "longitude": 1}}}


def test_resume_receives_exactly_the_missed_events(server, session_id):
    async def scenario():
        alice, bob = await pair(server.url, session_id)
        try:
            await alice.ok(point("a1", 1))
            ack, _ = await bob.ping()
            epoch, last = bob.welcome["epoch"], ack["seq"]
            old = bob.participant
            await bob.close()
            left, _ = await alice.until(lambda m: m["type"] == "participant.left")
            _, e1 = await alice.ok(point("a2", 2))
            _, e2 = await alice.ok({"type": "annotation.update", "id": "a1", "changes": {"title": "Renamed", "zIndex": 3}})
            _, e3 = await alice.ok({"type": "select", "id": "a2"})
            # Transient changes: never replayed, but reflected in live.
            await alice.ok({"type": "camera.changing", "camera": {"center": {"latitude": 1, "longitude": 2}, "zoom": 5}})
            await alice.ok({"type": "location", "location": {"coordinate": {"latitude": 3, "longitude": 4}, "accuracy": 20, "heading": 90}})
            missed = [left] + e1 + e2 + e3
            assert all(not m.get("transient") for m in missed)

            bob2 = await Client.open(server.url, "bob2")
            try:
                welcome = await bob2.join(session_id, "Bob", "editor", resume={"epoch": epoch, "seq": last})
                assert welcome["resumed"] is True and welcome["resumedFrom"] == last, welcome
                assert "snapshot" not in welcome
                replay = [await bob2.recv() for _ in missed]
                assert replay == missed, "the replay differs from the events the others saw"
                joined = await bob2.recv()
                assert joined["type"] == "participant.joined" and joined["participant"]["id"] == welcome["participant"]
                assert joined["seq"] == welcome["seq"] == missed[-1]["seq"] + 1
                live = await bob2.recv()
                assert live["type"] == "live" and live["seq"] == welcome["seq"], live
                me = {p["id"]: p for p in live["participants"]}[alice.participant]
                assert me["camera"] == {"center": {"latitude": 1, "longitude": 2}, "zoom": 5, "pitch": 0, "bearing": 0}
                assert me["location"]["coordinate"] == {"latitude": 3, "longitude": 4} and me["location"]["heading"] == 90
                assert old not in {p["id"] for p in live["participants"]}
                _, extra = await bob2.ping()
                assert extra == [], extra
            finally:
                await bob2.close()
        finally:
            await alice.close()

    run(scenario())


async def resume_gives_snapshot(url, session, resume_for, history_changes=0):
    alice, bob = await pair(url, session)
    try:
        await alice.ok(point("a1", 1))
        ack, _ = await bob.ping()
        epoch, last = bob.welcome["epoch"], ack["seq"]
        await bob.close()
        for i in range(history_changes):
            await alice.ok({"type": "annotation.update", "id": "a1", "changes": {"title": f"t{i}"}})
        expected = await snapshot(url, session)
        bob2 = await Client.open(url, "bob2")
        try:
            welcome = await bob2.join(session, "Bob", "editor", resume=resume_for(epoch, last))
            assert welcome["resumed"] is False, welcome
            assert "resumedFrom" not in welcome
            snap = welcome["snapshot"]
            assert snap["seq"] == welcome["seq"] == expected["seq"] + 1
            assert snap["annotations"] == expected["annotations"]
            assert {p["id"] for p in snap["participants"]} == {alice.participant, welcome["participant"]}
            _, extra = await bob2.ping()
            assert extra == [], f"a fresh snapshot must not be followed by replayed events: {extra}"
        finally:
            await bob2.close()
    finally:
        await alice.close()


def test_resume_with_old_epoch_gets_fresh_snapshot(server, session_id):
    run(resume_gives_snapshot(server.url, session_id, lambda epoch, seq: {"epoch": "not-" + epoch, "seq": seq}))


def test_resume_from_the_future_gets_fresh_snapshot(server, session_id):
    run(resume_gives_snapshot(server.url, session_id, lambda epoch, seq: {"epoch": epoch, "seq": seq + 1000}))


def test_resume_older_than_history_gets_fresh_snapshot(start_server):
    s = start_server("--history-size", "8")
    run(resume_gives_snapshot(s.url, "t-" + uuid.uuid4().hex[:12], lambda epoch, seq: {"epoch": epoch, "seq": seq}, history_changes=20))


def test_resume_within_small_history_still_replays(start_server):
    s = start_server("--history-size", "8")

    async def scenario():
        session = "t-" + uuid.uuid4().hex[:12]
        alice, bob = await pair(s.url, session)
        try:
            ack, _ = await bob.ping()
            epoch, last = bob.welcome["epoch"], ack["seq"]
            await bob.close()
            # Bob's leave may reach the session after Alice's first add (his connection can be on
            # another service thread): the adds wait for it, so the order replayed is known.
            await alice.until(lambda m: m["type"] == "participant.left")
            for i in range(5):  # + participant.left = 6 missed events, within 8
                await alice.ok(point(f"a{i}", i))
            bob2 = await Client.open(s.url, "bob2")
            try:
                welcome = await bob2.join(session, "Bob", "editor", resume={"epoch": epoch, "seq": last})
                assert welcome["resumed"] is True, welcome
                replay = [await bob2.recv() for _ in range(6)]
                assert [m["seq"] for m in replay] == list(range(last + 1, last + 7))
                assert [m["type"] for m in replay] == ["participant.left"] + ["annotation.added"] * 5
            finally:
                await bob2.close()
        finally:
            await alice.close()

    run(scenario())
