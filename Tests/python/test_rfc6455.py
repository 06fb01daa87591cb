"""RFC 6455 server duties and handshake refusals (SPEC §1, §1.1, §1.2), over a
plain socket with hand-built frames: what no WebSocket library would send."""

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from meridian_client import SUBPROTOCOL, run
from raw_websocket import RawWebSocket


# ---- handshake refusals (defect: an offer of other subprotocols got no answer at all)

@pytest.mark.parametrize("offer", [("chat",), ("meridian.v2",), ("chat", "meridian.v2"), ()])
def test_an_upgrade_without_our_subprotocol_is_answered_400_with_json(server, offer):
    ws = RawWebSocket(server.host, server.port)
    try:
        status, headers, body = ws.upgrade(offer)
    finally:
        ws.close()
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": "handshake_refused", "status": 400,
                                "message": f"subprotocol {SUBPROTOCOL} required"}


def test_our_subprotocol_among_others_is_chosen(server):
    ws = RawWebSocket(server.host, server.port)
    try:
        status, headers, _ = ws.upgrade(("chat", SUBPROTOCOL, "meridian.v2"))
    finally:
        ws.close()
    assert (status, headers["sec-websocket-protocol"]) == (101, SUBPROTOCOL)


def test_a_websockets_client_offering_another_version_sees_400(server):
    async def scenario():
        with pytest.raises(InvalidStatus) as refused:
            await asyncio.wait_for(connect(server.url, subprotocols=["meridian.v2"], proxy=None), 10)
        response = refused.value.response
        assert response.status_code == 400
        assert json.loads(response.body)["error"] == "handshake_refused"

    run(scenario())
