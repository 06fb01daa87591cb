"""Refs and numbers as written (SPEC §2 rules 5 and 8, §7), over a real socket with the Python
`websockets` client, reading the server's raw text so nothing is re-parsed on the way."""

import json

from websockets.asyncio.client import connect

from meridian_client import Client, run

SUBPROTOCOL = "meridian.v1"


async def raw_answer(ws, text):
    """Sends `text` and returns the raw text of the next answer (ack, error or welcome)."""
    await ws.send(text)
    while True:
        raw = await ws.recv()
        if json.loads(raw)["type"] in ("ack", "error", "welcome"):
            return raw


def test_refs_are_echoed_byte_for_byte(server):
    async def scenario():
        async with connect(server.url, subprotocols=[SUBPROTOCOL], proxy=None) as ws:
            for ref in ["9007199254740992", "9007199254740993", "123456789012345678901234567890", "-0", "1.0", "7",
                        '"\\u00e9t\\u00e9"', '"plain"']:
                raw = await raw_answer(ws, '{"type":"ping","ref":%s}' % ref)
                assert raw.startswith('{"type":"ack","ref":%s,"seq":' % ref), (ref, raw)
            # Invalid refs are refused, and still echoed as written.
            for ref in ["1.5", "[1, 2]", '""']:
                raw = await raw_answer(ws, '{"type":"ping","ref":%s}' % ref)
                assert raw.startswith('{"type":"error","ref":%s,"code":"invalid_field"' % ref), (ref, raw)
    run(scenario())


def test_metadata_integers_beyond_2_53_are_refused_and_smaller_ones_kept_exactly(server, session_id):
    async def scenario():
        owner = await Client.open(server.url, "owner")
        await owner.join(session_id, "Owner", "owner")
        point = {"type": "point", "id": "pin", "coordinate": {"latitude": 1, "longitude": 2}}
        refused, _ = await owner.request({"type": "annotation.add", "annotation": {
            **point, "metadata": {"ok": 1, "ids": [5, 9007199254740993]}}})
        assert refused["type"] == "error" and refused["code"] == "invalid_field", refused
        assert refused["field"] == "annotation.metadata.ids[1]", refused
        assert "9007199254740991" in refused["message"], refused
        async with connect(server.url, subprotocols=[SUBPROTOCOL], proxy=None) as watcher:
            await raw_answer(watcher, json.dumps({"type": "join", "ref": 1, "session": session_id, "name": "W", "role": "viewer"}))
            ack, _ = await owner.request({"type": "annotation.add", "annotation": {
                **point, "metadata": {"big": 9007199254740991, "small": -3, "float": 0.5, "e": 9.1e15}}})
            assert ack["type"] == "ack", ack
            while True:
                raw = await watcher.recv()
                if '"annotation.added"' in raw:
                    break
            assert '"metadata":{"big":9007199254740991,"e":9.1e+15,"float":0.5,"small":-3}' in raw, raw
        await owner.close()
    run(scenario())
