"""Undo and redo (SPEC §6.9) over real sockets with Python websockets: each participant undoes
and redoes only its own changes, everyone sees them in the session order with their marks, an
undo of a change someone else has changed since is refused, a drag race's loser cannot undo
the winner's drag, and a history survives a reconnect and a restart."""

import tempfile

from conftest import Server
from meridian_client import Client, members, pair, paired, pin, run, snapshot


def titles(snap):
    return {a["id"]: a.get("title") for a in snap["annotations"]}


def test_undo_and_redo_are_changes_everyone_sees_in_order(server, session_id):
    async def scenario():
        async with paired(server.url, session_id) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": pin(title="Berth 4")})
            await alice.ok({"type": "annotation.update", "id": "pin", "changes": {"title": "Berth 5"}})
            ack, events = await alice.ok({"type": "undo"})
            mark, updated = events
            assert mark == {"type": "change.undone", "seq": mark["seq"], "participant": alice.participant,
                            "annotation": "pin", "change": "annotation.update"}, mark
            assert updated["type"] == "annotation.updated" and updated["seq"] == mark["seq"] + 1 == ack["seq"], updated
            assert updated["annotation"]["title"] == "Berth 4" and updated["annotation"]["revision"] == updated["seq"], updated
            # Bob sees the mark and the change, in the same order and with the same seqs.
            seen, _ = await bob.until(lambda m: m["type"] == "annotation.updated" and m["seq"] == updated["seq"])
            assert [m for m in bob.log if m["type"] == "change.undone"] == [mark]
            assert seen == updated

            _, events = await alice.ok({"type": "redo"})
            assert events[0]["type"] == "change.redone" and events[1]["annotation"]["title"] == "Berth 5", events
            # Back to the add: undo twice removes it; redo brings it back.
            await alice.ok({"type": "undo"})
            _, events = await alice.ok({"type": "undo"})
            assert [e["type"] for e in events] == ["change.undone", "annotation.removed"], events
            assert titles(await snapshot(server.url, session_id)) == {}
            _, events = await alice.ok({"type": "redo"})
            assert [e["type"] for e in events] == ["change.redone", "annotation.added"], events
            assert titles(await snapshot(server.url, session_id)) == {"pin": "Berth 4"}

    run(scenario())


def test_nobody_undoes_anyone_elses_change(server, session_id):
    async def scenario():
        async with paired(server.url, session_id) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": pin("a", title="Alice's")})
            error, _ = await bob.request({"type": "undo"})
            assert error["type"] == "error" and error["code"] == "not_found" and "undo" in error["message"], error

            await alice.ok({"type": "annotation.update", "id": "a", "changes": {"title": "Alice's, renamed"}})
            _, events = await bob.ok({"type": "annotation.update", "id": "a", "changes": {"title": "Bob's"}})
            [bobs] = [e["annotation"] for e in events if e["type"] == "annotation.updated" and e["annotation"]["title"] == "Bob's"]
            error, _ = await alice.request({"type": "undo"})
            assert error["code"] == "revision_conflict", error
            assert error["annotation"] == bobs and error["revision"] == bobs["revision"], error
            assert titles(await snapshot(server.url, session_id)) == {"a": "Bob's"}
            # The refused step is forgotten; the add before it is Bob's to keep too (he changed it).
            error, _ = await alice.request({"type": "undo"})
            assert error["code"] == "revision_conflict", error
            # Bob undoes his own change: Alice's rename comes back.
            await bob.ok({"type": "undo"})
            assert titles(await snapshot(server.url, session_id)) == {"a": "Alice's, renamed"}

    run(scenario())


def test_the_loser_of_a_drag_race_cannot_undo_the_winners_drag(server, session_id):
    async def scenario():
        async with paired(server.url, session_id) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": pin("boat", 10, 20)})
            # Both start at once; the exclusive policy gives it to one of them.
            ra = await alice.send({"type": "drag", "id": "boat", "state": "starting"})
            rb = await bob.send({"type": "drag", "id": "boat", "state": "starting"})
            a, _ = await alice.answer(ra)
            b, _ = await bob.answer(rb)
            assert sorted([a["type"], b["type"]]) == ["ack", "error"], (a, b)
            winner, loser = (alice, bob) if a["type"] == "ack" else (bob, alice)
            refusal = b if winner is alice else a
            assert refusal["code"] == "drag_conflict", refusal
            # While the winner drags, the loser's undo cannot reach the boat: Alice's add is under
            # the winner's drag; Bob has changed nothing.
            error, _ = await loser.request({"type": "undo"})
            if loser is alice:
                assert error["code"] == "being_dragged" and error["holder"]["id"] == winner.participant, error
            else:
                assert error["code"] == "not_found", error
            await winner.ok({"type": "drag", "id": "boat", "state": "dragging", "coordinate": {"latitude": 11, "longitude": 21}})
            await winner.ok({"type": "drag", "id": "boat", "state": "ending"})
            # After the drag, Alice's add is no longer the boat's last change: her undo is refused.
            if winner is bob:
                error, _ = await alice.request({"type": "undo"})
                assert error["code"] == "revision_conflict" and error["annotation"]["coordinate"] == {"latitude": 11, "longitude": 21}, error
            assert (await snapshot(server.url, session_id))["annotations"][0]["coordinate"] == {"latitude": 11, "longitude": 21}
            # The winner undoes its own drag: the boat goes back where it was.
            _, events = await winner.ok({"type": "undo"})
            assert events[0]["type"] == "change.undone" and events[0]["change"] == "drag", events
            assert events[1]["annotation"]["coordinate"] == {"latitude": 10, "longitude": 20}, events

    run(scenario())


def test_a_history_survives_a_reconnect_and_a_resume(server, session_id):
    async def scenario():
        alice, bob = await pair(server.url, session_id)
        try:
            await bob.ok({"type": "annotation.add", "annotation": pin("crate", title="Crate 9")})
            await bob.ok({"type": "annotation.remove", "id": "crate"})
            ack, _ = await bob.ping()
            first, epoch = bob.participant, bob.welcome["epoch"]
            await bob.close()
            await alice.until(lambda m: m["type"] == "participant.left" and m["participant"] == first)

            back = await Client.open(server.url, "bob-again")
            try:
                welcome = await back.join(session_id, "Bob", "editor", resume={"epoch": epoch, "seq": ack["seq"]},
                                          previousParticipant=first)
                assert welcome["resumed"] is True and back.participant != first, welcome
                _, events = await back.ok({"type": "undo"})
                mark = next(i for i, e in enumerate(events) if e["type"] == "change.undone")
                assert events[mark]["change"] == "annotation.remove" and events[mark + 1]["type"] == "annotation.added", events
                assert titles(await snapshot(server.url, session_id)) == {"crate": "Crate 9"}
                # A participant still in the session keeps its history to itself.
                carol = await Client.open(server.url, "carol")
                try:
                    await carol.join(session_id, "Carol", "editor", previousParticipant=back.participant)
                    error, _ = await carol.request({"type": "undo"})
                    assert error["code"] == "not_found", error
                finally:
                    await carol.close()
            finally:
                await back.close()
        finally:
            await alice.close()

    run(scenario())


def test_a_history_survives_a_restart(session_id):
    data = tempfile.mkdtemp(prefix="meridian-undo-")
    first = Server("--data-dir", data)
    try:
        async def edit():
            async with members(first.url, session_id, ("alice", "owner")) as (alice,):
                await alice.ok({"type": "annotation.add", "annotation": pin("a", title="one")})
                await alice.ok({"type": "annotation.update", "id": "a", "changes": {"title": "two"}})
                return alice.participant

        pid = run(edit())
    finally:
        first.stop()

    second = Server("--data-dir", data)
    try:
        async def undo():
            async with members(second.url, session_id, ("alice", "owner", {"previousParticipant": pid})) as (alice,):
                _, events = await alice.ok({"type": "undo"})
                assert events[1]["annotation"]["title"] == "one", events
                _, events = await alice.ok({"type": "undo"})
                assert events[1] == {"type": "annotation.removed", "seq": events[1]["seq"], "id": "a"}, events

        run(undo())
    finally:
        second.stop()
