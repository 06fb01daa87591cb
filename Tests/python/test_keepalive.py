"""Keepalive over real sockets (--ping-interval 1 --idle-timeout 2): a quiet client is pinged;
Python websockets answers with a PONG and stays connected however long it says nothing; a
client that never answers is dropped at the idle timeout, its session seeing it leave."""

import asyncio
import json
import time

import websockets

from meridian_client import Client, run
from raw_websocket import RawWebSocket


def test_a_client_that_answers_pings_stays_and_one_that_does_not_is_dropped(start_server, session_id):
    server = start_server("--ping-interval", "1", "--idle-timeout", "2")

    async def scenario():
        watcher = await Client.open(server.url, "watcher")
        await watcher.join(session_id, "Watcher", "owner")
        silent = RawWebSocket.open(server)
        silent.send_frame(0x1, b'{"type":"join","ref":"j","session":"%s","name":"Silent","role":"viewer"}' % session_id.encode())
        welcome = json.loads(silent.read_frame()[2])
        assert welcome["type"] == "welcome", welcome
        silent_id = welcome["participant"]
        opened = time.monotonic()
        async with websockets.connect(f"ws://{server.host}:{server.port}/", subprotocols=["meridian.v1"],
                                      ping_interval=None, compression=None) as quiet:
            # The silent raw client: a PING (with a payload), then the end, at about the idle timeout.
            frames = []
            while (frame := await asyncio.to_thread(silent.read_frame)) is not None:
                frames.append(frame[1])
            assert 0x9 in frames and time.monotonic() - opened >= 1.9, frames
            # Its session sees it leave.
            await watcher.until(lambda m: (m["type"] == "participant.left" and m["participant"] == silent_id)
                                or (m["type"] == "presence" and any(l["participant"] == silent_id for l in m["left"])))
            # Python websockets answered every PING: still open after more than twice the idle timeout.
            await asyncio.sleep(max(0.0, opened + 4.5 - time.monotonic()))  # stays quiet for the test's length
            await quiet.send('{"type":"ping","ref":"p"}')
            assert '"ack"' in await asyncio.wait_for(quiet.recv(), 5)
        await watcher.close()
    run(scenario())
