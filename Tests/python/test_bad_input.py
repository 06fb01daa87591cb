"""Bad input over a real socket: the documented error, the ref echoed when readable,
the session unchanged, and the connection still usable unless the spec closes it."""

import asyncio
import contextlib
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake

from meridian_client import Client, members, run, snapshot

POINT = {"type": "point", "id": "pin", "coordinate": {"latitude": 10, "longitude": 20}, "draggable": True}

# (name, raw frame, expected code, expected ref, expected field)
CASES = [
    ("invalid JSON", '{"type": "ping", "ref": "j1"', "invalid_message", None, None),
    ("not an object", '["ping"]', "invalid_message", None, None),
    ("unknown type", '{"type": "teleport", "ref": "u1"}', "unknown_type", "u1", "type"),
    ("missing field", '{"type": "annotation.remove", "ref": "m1"}', "invalid_field", "m1", "id"),
    ("missing ref", '{"type": "ping"}', "invalid_field", None, "ref"),
    ("unknown field", '{"type": "ping", "ref": "x1", "extra": 1}', "invalid_field", "x1", "extra"),
    ("nested unknown field", json.dumps({"type": "annotation.add", "ref": "x2", "annotation": {**POINT, "id": "n", "lineWidth": 2}}), "invalid_field", "x2", "annotation.lineWidth"),
    ("wrong-typed field", '{"type": "select", "ref": "w1", "id": 5}', "invalid_field", "w1", "id"),
    ("wrong-typed number", json.dumps({"type": "annotation.add", "ref": "w2", "annotation": {**POINT, "id": "n", "coordinate": {"latitude": "10", "longitude": 20}}}), "invalid_field", "w2", "annotation.coordinate.latitude"),
    ("NaN literal", '{"type": "annotation.add", "ref": "n1", "annotation": {"type": "point", "id": "n", "coordinate": {"latitude": %s, "longitude": 20}}}' % json.dumps(float("nan")), "invalid_message", None, None),
    ("Infinity literal", '{"type": "camera.changing", "ref": "i1", "camera": {"center": {"latitude": 1, "longitude": 2}, "zoom": %s}}' % json.dumps(float("inf")), "invalid_message", None, None),
    ("latitude 91", json.dumps({"type": "annotation.add", "ref": "l1", "annotation": {**POINT, "id": "n", "coordinate": {"latitude": 91, "longitude": 20}}}), "invalid_field", "l1", "annotation.coordinate.latitude"),
    ("zoom 25", json.dumps({"type": "camera.end", "ref": "z1", "camera": {"center": {"latitude": 1, "longitude": 2}, "zoom": 25}}), "invalid_field", "z1", "camera.zoom"),
    ("bad colour", json.dumps({"type": "annotation.update", "ref": "c1", "id": "pin", "changes": {"title": "x", "image": "i", "zIndex": 1, "strokeColor": "red"}}), "invalid_field", "c1", "changes.strokeColor"),
    ("unknown annotation", json.dumps({"type": "annotation.remove", "ref": 77, "id": "nope"}), "not_found", 77, "id"),
    ("join twice", json.dumps({"type": "join", "ref": "jj", "session": "other", "name": "X", "role": "editor"}), "already_joined", "jj", None),
]


@contextlib.asynccontextmanager
async def joined(url, session, *others):
    """The session's owner, who has added the pin, then a client for each (id, role) of `others`
    joined after it (as `members` joins them); all closed when the block ends, however it ends."""
    async with members(url, session, ("owner", "owner")) as (owner,):
        await owner.ok({"type": "annotation.add", "annotation": POINT})
        async with members(url, session, *others) as rest:
            yield (owner, *rest)


async def assert_usable(c):
    ack, extra = await c.ping()
    assert extra == [], f"unexpected messages after the error: {extra}"


@pytest.mark.parametrize("name,raw,code,ref,field", CASES, ids=[c[0] for c in CASES])
def test_bad_request_is_refused_cleanly(server, session_id, name, raw, code, ref, field):
    async def scenario():
        async with joined(server.url, session_id) as (owner,):
            before = await snapshot(server.url, session_id)
            await owner.send_raw(raw)
            err = await owner.recv()
            assert err["type"] == "error", err
            assert err["code"] == code, err
            assert err["ref"] == ref, err
            if field is not None:
                assert err.get("field") == field, err
            assert err["message"]
            await assert_usable(owner)
            assert await snapshot(server.url, session_id) == before

    run(scenario())


def test_illegal_drag_transition_starting_to_none(server, session_id):
    async def scenario():
        async with joined(server.url, session_id) as (owner,):
            await owner.ok({"type": "drag", "id": "pin", "state": "starting"})
            before = await snapshot(server.url, session_id)
            assert [d["state"] for d in before["drags"]] == ["starting"]
            err, _ = await owner.request({"type": "drag", "id": "pin", "state": "starting"})
            assert err["code"] == "illegal_drag_transition" and err.get("field") == "state", err
            await owner.send_raw(json.dumps({"type": "drag", "ref": "sn", "id": "pin", "state": "none"}))
            err = await owner.recv()
            assert err["type"] == "error" and err["ref"] == "sn", err
            assert err["code"] == "illegal_drag_transition" and err.get("field") == "state", err
            await assert_usable(owner)
            assert await snapshot(server.url, session_id) == before
            _, events = await owner.ok({"type": "drag", "id": "pin", "state": "canceling"})
            assert [e["state"] for e in events] == ["canceling", "none"]

    run(scenario())


def test_viewer_cannot_change_shared_state(server, session_id):
    async def scenario():
        async with joined(server.url, session_id, ("viewer", "viewer")) as (owner, viewer):
            before = await snapshot(server.url, session_id)
            for request in (
                {"type": "annotation.add", "ref": "v1", "annotation": {**POINT, "id": "v"}},
                {"type": "annotation.remove", "ref": "v2", "id": "pin"},
                {"type": "drag", "ref": "v3", "id": "pin", "state": "starting"},
                {"type": "session.configure", "ref": "v4", "settings": {"tint": "#000"}},
                {"type": "callout.show", "ref": "v5", "callout": {"title": "t", "anchor": {"coordinate": {"latitude": 0, "longitude": 0}}}},
            ):
                await viewer.send(request)
                err = await viewer.recv()
                assert err["type"] == "error" and err["ref"] == request["ref"] and err["code"] == "forbidden", err
            await assert_usable(viewer)
            assert await snapshot(server.url, session_id) == before

    run(scenario())


def test_editor_cannot_configure(server, session_id):
    async def scenario():
        async with joined(server.url, session_id, ("editor", "editor")) as (owner, editor):
            err, _ = await editor.request({"type": "session.configure", "settings": {"dragPolicy": "priority"}})
            assert err["type"] == "error" and err["code"] == "forbidden", err

    run(scenario())


def test_command_before_join(server, session_id):
    async def scenario():
        async with joined(server.url, session_id) as (owner,):
            c = await Client.open(server.url, "early")
            try:
                before = await snapshot(server.url, session_id)
                await c.send_raw(json.dumps({"type": "select", "ref": "early-1", "id": "pin"}))
                err = await c.recv()
                assert err == {**err, "type": "error", "ref": "early-1", "code": "not_joined"}, err
                await c.send_raw(json.dumps({"type": "leave", "ref": "early-2"}))
                err = await c.recv()
                assert err["code"] == "not_joined" and err["ref"] == "early-2", err
                ack, _ = await c.ping()
                assert ack["seq"] == 0
                assert await snapshot(server.url, session_id) == before
                await c.join(session_id, "Late", "viewer")
            finally:
                await c.close()

    run(scenario())


async def expect_close(c, code):
    got, seen = await c.wait_closed()
    assert got == code, f"expected close code {code}, got {got} (after {seen})"


def test_oversized_frame_closes_1009(server, session_id):
    async def scenario():
        async with joined(server.url, session_id, ("other", "editor")) as (owner, other):
            await owner.until(lambda m: m["type"] == "participant.joined")
            before = await snapshot(server.url, session_id)
            big = json.dumps({"type": "annotation.update", "ref": "big", "id": "pin", "changes": {"title": "x" * (2 * 1024 * 1024)}})
            try:
                await asyncio.wait_for(other.send_raw(big), 10)
            except Exception:
                pass  # the server may close before the whole frame is written
            await expect_close(other, 1009)
            left, _ = await owner.until(lambda m: m["type"] == "participant.left")
            assert left["reason"] == "disconnected", left
            after = await snapshot(server.url, session_id)
            assert after["annotations"] == before["annotations"]
            await assert_usable(owner)

    run(scenario())


def test_binary_frame_closes_1003(server, session_id):
    async def scenario():
        c = await Client.open(server.url, "binary")
        try:
            await c.join(session_id, "Binary", "editor")
            await c.ws.send(b'{"type":"ping","ref":1}')
            await expect_close(c, 1003)
        finally:
            await c.close()

    run(scenario())


def test_invalid_utf8_closes_1007(server, session_id):
    async def scenario():
        c = await Client.open(server.url, "utf8", compression=None)
        try:
            # A text frame whose payload is not UTF-8, written below the websockets API.
            c.ws.protocol.send_text(b'{"type":"ping","ref":"\xff\xfe"}')
            c.ws.send_data()
            await expect_close(c, 1007)
        finally:
            await c.close()

    run(scenario())


def test_too_many_invalid_requests_closes_4009(server):
    async def scenario():
        c = await Client.open(server.url, "abusive")
        try:
            errors = 0
            for i in range(101):
                await c.send_raw("not json %d" % i)
            code, seen = await c.wait_closed(timeout=20)
            errors = sum(1 for m in seen if m["type"] == "error" and m["code"] == "invalid_message")
            assert code == 4009, f"closed with {code}"
            # Answers still queued when the server closes are discarded (SPEC §10).
            assert 1 <= errors <= 101 and len(seen) == errors, seen
        finally:
            await c.close()

    run(scenario())


def test_hundred_invalid_requests_are_tolerated(server):
    async def scenario():
        c = await Client.open(server.url, "clumsy")
        try:
            for i in range(100):
                await c.send_raw("not json %d" % i)
            for _ in range(100):
                m = await c.recv()
                assert m["code"] == "invalid_message"
            await assert_usable(c)
        finally:
            await c.close()

    run(scenario())


@pytest.mark.parametrize("subprotocols", [None, ["meridian.v2"]], ids=["none", "other"])
def test_connection_without_subprotocol_is_refused(server, subprotocols):
    async def scenario():
        kwargs = {"proxy": None, "open_timeout": 10}
        if subprotocols:
            kwargs["subprotocols"] = subprotocols
        with pytest.raises((InvalidHandshake, ConnectionError, EOFError)):
            ws = await connect(server.url, **kwargs)
            await ws.close()

    run(scenario())
