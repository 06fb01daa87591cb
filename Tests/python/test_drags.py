"""Drag conflicts over real sockets: a 20-client race, holder disconnect, lease expiry."""

import asyncio

import pytest

from meridian_client import Client, check_seq_order, run, snapshot


def flag(lat=10.0, lon=20.0, id="flag"):
    return {"type": "point", "id": id, "coordinate": {"latitude": lat, "longitude": lon}, "draggable": True, "title": "Flag"}


class DragView:
    """What one client believes about drags, built only from the events it received."""

    def __init__(self):
        self.coordinate = {}
        self.active = {}

    def apply(self, m):
        if m["type"] == "annotation.added":
            a = m["annotation"]
            if a["type"] == "point":
                self.coordinate[a["id"]] = a["coordinate"]
        elif m["type"] == "drag":
            self.coordinate[m["id"]] = m["coordinate"]
            key = (m["id"], m["participant"])
            if m["state"] in ("starting", "dragging"):
                self.active[key] = m["state"]
            else:
                self.active.pop(key, None)


async def setup(url, session, editors, policy=None):
    owner = await Client.open(url, "owner")
    await owner.join(session, "Owner", "owner")
    if policy:
        await owner.ok({"type": "session.configure", "settings": {"dragPolicy": policy}})
    await owner.ok({"type": "annotation.add", "annotation": flag()})
    clients = []
    for i in range(editors):
        c = await Client.open(url, f"ed{i}")
        await c.join(session, f"Editor {i}", "editor")
        clients.append(c)
    return owner, clients


def test_concurrent_drag_race_exclusive(server, session_id):
    async def scenario():
        owner, eds = await setup(server.url, session_id, 20)
        try:
            starts = [{"type": "drag", "ref": f"start-{i}", "id": "flag", "state": "starting"} for i in range(20)]
            await asyncio.gather(*(c.send(m) for c, m in zip(eds, starts)))
            answers = await asyncio.gather(*(c.answer(m["ref"]) for c, m in zip(eds, starts)))
            acks = [i for i, (a, _) in enumerate(answers) if a["type"] == "ack"]
            errors = [a for a, _ in answers if a["type"] == "error"]
            assert len(acks) == 1, f"expected exactly one accepted starting, got {len(acks)}: {[a for a, _ in answers]}"
            winner = eds[acks[0]]
            assert len(errors) == 19
            for e in errors:
                assert e["code"] == "drag_conflict", e
                assert e["holder"]["id"] == winner.participant, e
                assert e["holder"]["name"] == f"Editor {acks[0]}", e

            target = {"latitude": 11.5, "longitude": 21.25}
            await winner.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 11, "longitude": 21}})
            await winner.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": target})
            end, _ = await winner.ok({"type": "drag", "id": "flag", "state": "ending"})

            for c in eds + [owner]:
                done = lambda m: m["type"] == "drag" and m["state"] == "none" and m["participant"] == winner.participant
                if not any(done(m) for m in c.log):
                    await c.until(done)
                view = DragView()
                for m in c.log:
                    view.apply(m)
                assert view.coordinate.get("flag") == target, f"{c.name} ends at {view.coordinate.get('flag')}"
                assert not view.active, f"{c.name} still sees drags {view.active}"
                drags = [(m["participant"], m["state"]) for m in c.log if m["type"] == "drag"]
                states = [s for _, s in drags]
                assert states[0] == "starting" and states[-2:] == ["ending", "none"], drags
                assert {p for p, _ in drags} == {winner.participant}, drags
                start = c.welcome["seq"] if c.welcome else 0
                check_seq_order([m for m in c.log if m is not c.welcome], start, c.name)

            snap = await snapshot(server.url, session_id)
            assert snap["drags"] == []
            (a,) = [a for a in snap["annotations"] if a["id"] == "flag"]
            assert a["coordinate"] == target
            assert snap["seq"] == end["seq"]
        finally:
            await asyncio.gather(*(c.close() for c in eds + [owner]))

    run(scenario())


@pytest.mark.parametrize("how", ["close", "abort"])
def test_holder_disconnect_cancels_drag(server, session_id, how):
    async def scenario():
        owner, (holder, other) = await setup(server.url, session_id, 2)
        try:
            await holder.ok({"type": "drag", "id": "flag", "state": "starting"})
            await holder.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 5, "longitude": 5}})
            await holder.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 6, "longitude": 6}})
            pid = holder.participant
            if how == "close":
                await holder.close()
            else:
                holder.abort()
            for watcher in (other, owner):
                cancel, _ = await watcher.until(lambda m: m["type"] == "drag" and m["state"] == "canceling" and m["participant"] == pid)
                none = await watcher.recv()
                left = await watcher.recv()
                origin = {"latitude": 10, "longitude": 20}
                assert cancel["state"] == "canceling" and cancel.get("reason") == "holder_left" and cancel["coordinate"] == origin, cancel
                assert none["type"] == "drag" and none["state"] == "none" and none.get("reason") == "holder_left" and none["coordinate"] == origin, none
                assert none["seq"] == cancel["seq"] + 1
                assert left["type"] == "participant.left" and left["participant"] == pid and left["reason"] == "disconnected", left
                assert left["seq"] == none["seq"] + 1
            snap = await snapshot(server.url, session_id)
            assert snap["drags"] == []
            assert [a["coordinate"] for a in snap["annotations"] if a["id"] == "flag"] == [{"latitude": 10, "longitude": 20}]
            # The annotation can be dragged again at once.
            await other.ok({"type": "drag", "id": "flag", "state": "starting"})
        finally:
            for c in (owner, holder, other):
                if how == "abort" and c is holder:
                    continue
                await c.close()

    run(scenario())


def test_lease_expiry(start_server, session_id):
    s = start_server("--lease-timeout", "0.5")

    async def scenario():
        owner, (holder, other) = await setup(s.url, session_id, 2)
        try:
            snap = await snapshot(s.url, session_id)
            assert snap["settings"]["leaseTimeoutMs"] == 500
            await holder.ok({"type": "drag", "id": "flag", "state": "starting"})
            loop = asyncio.get_running_loop()
            await holder.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 7, "longitude": 8}})
            last_move = loop.time()
            pid = holder.participant
            for watcher in (other, holder):
                cancel, _ = await watcher.until(lambda m: m["type"] == "drag" and m["state"] == "canceling", timeout=5)
                if watcher is other:
                    elapsed = loop.time() - last_move
                    assert elapsed >= 0.4, f"lease expired after {elapsed:.3f} s, before the 0.5 s timeout"
                none = await watcher.recv()
                assert cancel["participant"] == pid and cancel.get("reason") == "lease_expired", cancel
                assert cancel["coordinate"] == {"latitude": 10, "longitude": 20}, cancel
                assert none["type"] == "drag" and none["state"] == "none" and none.get("reason") == "lease_expired", none
            # The expired holder is back in state none: a move is illegal, a new starting works.
            err, _ = await holder.request({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 1, "longitude": 1}})
            assert err["type"] == "error" and err["code"] == "illegal_drag_transition", err
            await other.ok({"type": "drag", "id": "flag", "state": "starting"})
        finally:
            for c in (owner, holder, other):
                await c.close()

    run(scenario())


def test_priority_preemption_then_cancel_restores_committed_coordinate(server, session_id):
    """After an owner preempts an editor's drag, the owner's own cancel must restore
    the last committed coordinate, not the preempted drag's uncommitted one."""

    async def scenario():
        owner, (editor,) = await setup(server.url, session_id, 1, policy="priority")
        try:
            await editor.ok({"type": "drag", "id": "flag", "state": "starting"})
            moved, _ = await editor.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 1, "longitude": 1}})
            _, events = await owner.ok({"type": "drag", "id": "flag", "state": "starting"})
            events = [e for e in events if e["type"] == "drag" and e["seq"] > moved["seq"]]
            assert [(e["participant"], e["state"], e.get("reason")) for e in events] == [
                (editor.participant, "canceling", "preempted"), (editor.participant, "none", "preempted"), (owner.participant, "starting", None)]
            committed = {"latitude": 10, "longitude": 20}
            assert all(e["coordinate"] == committed for e in events), events
            _, events = await owner.ok({"type": "drag", "id": "flag", "state": "canceling"})
            events = [e for e in events if e["type"] == "drag"]
            assert [e["coordinate"] for e in events] == [committed, committed], events
            snap = await snapshot(server.url, session_id)
            assert [a["coordinate"] for a in snap["annotations"]] == [committed]
        finally:
            await owner.close()
            await editor.close()

    run(scenario())
