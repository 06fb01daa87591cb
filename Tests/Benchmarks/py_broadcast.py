"""Baseline for `make bench`: a Python `websockets` broadcast server.

One session, no state: answers `join` with a welcome, every other request with an ack, and
rebroadcasts drag / camera / selection requests to every client as events with an increasing
seq (websockets.broadcast: one write per message per client).
Run: python3 py_broadcast.py PORT  (prints "listening on http://127.0.0.1:PORT")
"""
import asyncio
import json
import sys

import websockets

clients = set()
state = {"seq": 0, "participant": 0}
BROADCAST = ("drag", "camera.begin", "camera.changing", "camera.end", "select", "deselect")


async def handler(ws):
    clients.add(ws)
    try:
        async for text in ws:
            request = json.loads(text)
            kind, ref = request.get("type"), request.get("ref")
            if kind == "join":
                state["participant"] += 1
                seq = state["seq"]
                await ws.send(json.dumps({
                    "type": "welcome", "ref": ref, "session": request.get("session"), "epoch": "py",
                    "participant": f"p{state['participant']}", "seq": seq, "resumed": False,
                    "snapshot": {"seq": seq, "annotations": [], "participants": []},
                }, separators=(",", ":")))
                continue
            if kind in BROADCAST:
                state["seq"] += 1
                event = {"type": kind, "seq": state["seq"]}
                event.update({k: v for k, v in request.items() if k not in ("type", "ref")})
                websockets.broadcast(clients, json.dumps(event, separators=(",", ":")))
            await ws.send(json.dumps({"type": "ack", "ref": ref, "seq": state["seq"]}, separators=(",", ":")))
    except websockets.ConnectionClosed:
        pass
    finally:
        clients.discard(ws)


async def main(port):
    async with websockets.serve(handler, "127.0.0.1", port, subprotocols=["meridian.v1"],
                                max_queue=None, ping_interval=None, compression=None):
        print(f"py_broadcast listening on http://127.0.0.1:{port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 9002))
