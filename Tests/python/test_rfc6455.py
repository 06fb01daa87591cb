"""RFC 6455 server duties and handshake refusals (SPEC §1, §1.1, §1.2), over a
plain socket with hand-built frames: what no WebSocket library would send."""

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from meridian_client import SUBPROTOCOL, run
from raw_websocket import BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, RawWebSocket, close_payload, frame

PING_REQUEST = json.dumps({"type": "ping", "ref": 1}).encode()


def closed_by_server(server, *frames, until_end=True):
    """Sends `frames` on a fresh connection; returns (close code, reason, frames seen before it).
    The server's close is answered unless the client's last frame was a close of its own; with
    `until_end`, the end of the TCP connection is waited for too.

    After a close it sends for a frame its parser refuses, or for a close frame the server
    refuses, lws 4.1.6 ends the TCP connection only when its 5-s wait for a close
    acknowledgement runs out (it ignores the client's answer, or the client sent its close
    first and owes none). Tests of those closes stop at the close frame; the end of the
    connection is shown once for each (`..._ends_the_connection`)."""
    ws = RawWebSocket.open(server)
    try:
        for f in frames:
            ws.send(f)
        return ws.closed(answer=frames[-1][0] & 0xF != CLOSE, until_end=until_end)
    finally:
        ws.close()


def answered(server, *frames):
    """Sends `frames` then a ping request; returns the answers' payloads, in order, up to the ack."""
    ws = RawWebSocket.open(server)
    try:
        for f in frames:
            ws.send(f)
        ws.send(frame(TEXT, PING_REQUEST))
        seen = []
        while True:
            got = ws.read_frame()
            assert got is not None, f"connection ended; seen {seen}"
            _, opcode, payload = got
            seen.append((opcode, payload))
            if opcode == TEXT and json.loads(payload).get("type") == "ack":
                return seen
    finally:
        ws.close()


# ---- frames a server must refuse with 1002

@pytest.mark.parametrize("rsv", [1, 2, 4, 7])
def test_reserved_bits_without_an_extension_close_1002(server, rsv):
    code, _, seen = closed_by_server(server, frame(TEXT, PING_REQUEST, rsv=rsv), until_end=False)
    assert (code, seen) == (1002, [])


def test_a_frame_the_parser_refuses_ends_the_connection(server):
    code, _, seen = closed_by_server(server, frame(TEXT, PING_REQUEST, rsv=1), until_end=True)
    assert (code, seen) == (1002, [])


@pytest.mark.parametrize("opcode", [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF])
def test_unknown_opcodes_close_1002(server, opcode):
    code, _, seen = closed_by_server(server, frame(opcode, PING_REQUEST))
    assert (code, seen) == (1002, [])


@pytest.mark.parametrize("opcode", [PING, PONG, CLOSE])
def test_fragmented_control_frames_close_1002(server, opcode):
    code, _, seen = closed_by_server(server, frame(opcode, b"ab", fin=False), frame(CONTINUATION, b"cd"))
    assert (code, seen) == (1002, [])


def test_a_continuation_without_a_start_closes_1002(server):
    code, _, seen = closed_by_server(server, frame(CONTINUATION, PING_REQUEST))
    assert (code, seen) == (1002, [])


@pytest.mark.parametrize("opcode", [TEXT, BINARY])
def test_a_new_data_frame_inside_a_fragmented_message_closes_1002(server, opcode):
    code, _, seen = closed_by_server(server, frame(TEXT, b'{"type":', fin=False), frame(opcode, PING_REQUEST))
    assert (code, seen) == (1002, [])


@pytest.mark.parametrize("code", [0, 999, 1004, 1005, 1006, 1012, 1013, 1014, 1015, 1016, 1100, 2000, 2999, 5000, 65535])
def test_close_codes_a_client_may_not_send_are_answered_1002(server, code):
    answer, _, _ = closed_by_server(server, frame(CLOSE, close_payload(code)), until_end=False)
    assert answer == 1002


def test_a_close_frame_the_server_refuses_ends_the_connection(server):
    answer, _, _ = closed_by_server(server, frame(CLOSE, close_payload(5000)), until_end=True)
    assert answer == 1002


@pytest.mark.parametrize("code", [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4000, 4999])
def test_close_codes_a_client_may_send_are_echoed(server, code):
    answer, _, _ = closed_by_server(server, frame(CLOSE, close_payload(code, "bye ☂".encode())))
    assert answer == code


def test_a_close_frame_with_a_1_byte_payload_is_answered_1002(server):
    answer, _, _ = closed_by_server(server, frame(CLOSE, b"\x03"), until_end=False)
    assert answer == 1002


def test_a_close_reason_that_is_not_utf8_is_answered_1007(server):
    answer, _, _ = closed_by_server(server, frame(CLOSE, close_payload(1000, b"bye \xff")), until_end=False)
    assert answer == 1007


def test_a_control_frame_over_125_bytes_fails_the_connection(server):
    # lws 4.1.6 rejects the frame header and closes the TCP connection without a close frame
    # (SPEC §1.2); what follows is never processed.
    code, _, seen = closed_by_server(server, frame(PING, b"x" * 126), frame(TEXT, PING_REQUEST))
    assert (code, seen) == (None, [])


def test_control_frames_up_to_125_bytes_and_between_fragments_are_served(server):
    seen = answered(server, frame(PING, b"p" * 125), frame(TEXT, b'{"type":"ping",', fin=False),
                    frame(PING, b"between"), frame(CONTINUATION, b'"ref":"frag"}'))
    assert seen[0] == (PONG, b"p" * 125)
    assert seen[1] == (PONG, b"between")
    assert json.loads(seen[2][1]) == {"type": "ack", "ref": "frag", "seq": 0}


@pytest.mark.xfail(strict=True, reason="lws 4.1.6 does not check client masking and exposes no way to tell (SPEC §1.2)")
def test_an_unmasked_client_frame_closes_1002(server):
    # The first frame back is the verdict: a close, or (lws 4.1.6) the request's answer.
    ws = RawWebSocket.open(server)
    try:
        ws.send(frame(TEXT, PING_REQUEST, mask=False))
        got = ws.read_frame()
    finally:
        ws.close()
    assert got is not None and (got[1], got[2][:2]) == (CLOSE, close_payload(1002)), got


@pytest.mark.xfail(strict=True, reason="lws 4.1.6 fails the connection without a close frame (SPEC §1.2)")
def test_a_control_frame_over_125_bytes_closes_1002(server):
    code, _, _ = closed_by_server(server, frame(PING, b"x" * 126))
    assert code == 1002


# ---- invalid UTF-8: 1007 whatever the size or fragmentation

@pytest.mark.parametrize("size", [1_000, 4_000, 70_000])
def test_invalid_utf8_closes_1007_whatever_the_size(server, size):
    code, _, seen = closed_by_server(server, frame(TEXT, b"\xff" * size))
    assert (code, seen) == (1007, [])


def late_invalid_utf8(size):
    return b'{"type":"ping","ref":"' + b"a" * (size - 26) + b'\xc0\xaf"}'


@pytest.mark.parametrize("size", [1_000, 4_000, 65_536])
def test_invalid_utf8_at_the_end_of_a_message_closes_1007(server, size):
    code, _, seen = closed_by_server(server, frame(TEXT, late_invalid_utf8(size)))
    assert (code, seen) == (1007, [])


def test_the_first_violation_in_arrival_order_decides(server):
    # 70,000 bytes whose only invalid byte lies beyond the 65,536-byte limit (SPEC §1.2).
    code, _, _ = closed_by_server(server, frame(TEXT, late_invalid_utf8(70_000)))
    assert code == 1009


def test_invalid_utf8_split_across_fragments_closes_1007(server):
    # E2 82 starts a three-byte character; the next fragment does not continue it.
    code, _, seen = closed_by_server(server, frame(TEXT, b'{"type":"ping","ref":"\xe2\x82', fin=False),
                                     frame(CONTINUATION, b'("}'))
    assert (code, seen) == (1007, [])


def test_a_message_ending_inside_a_character_closes_1007(server):
    code, _, seen = closed_by_server(server, frame(TEXT, b'{"type":"ping","ref":"x"}', fin=False),
                                     frame(CONTINUATION, b"\xf0\x9f\x98"))
    assert (code, seen) == (1007, [])


def test_characters_split_between_fragments_are_valid(server):
    text = '{"type":"ping","ref":"é😀€"}'.encode()
    pieces = [text[:23], text[23:24], text[24:26], text[26:29], text[29:]]  # every multi-byte character split
    frames = [frame(TEXT, pieces[0], fin=False)] + [frame(CONTINUATION, p, fin=False) for p in pieces[1:-1]]
    frames.append(frame(CONTINUATION, pieces[-1]))
    ws = RawWebSocket.open(server)
    try:
        for f in frames:
            ws.send(f)
        _, opcode, payload = ws.read_frame()
        assert opcode == TEXT and json.loads(payload) == {"type": "ack", "ref": "é😀€", "seq": 0}
    finally:
        ws.close()


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
