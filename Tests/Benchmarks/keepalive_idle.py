#!/usr/bin/env python3
"""Keepalive cost: a server with N idle WebSocket connections that answer every PING (Python
websockets answers with a PONG), pinged every second (--ping-interval 1 --idle-timeout 5), its
CPU measured over a window once they are all open. With lws's own keepalive each PONG moved the
connection's timer to the end of one sorted list (a walk past every other connection's); the
server's sweep costs the same per connection whatever their number.

Usage: keepalive_idle.py MERIDIAN_BINARY [CONNECTIONS [WINDOW_SECONDS]]; prints one JSON line:
connections, window, server CPU ms over the window, PINGs answered (server-side counter)."""
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

import websockets

ADDRESSES = [f"127.0.0.{i}" for i in range(20, 40)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ms(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def pings(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    match = re.search(r"^meridian_keepalive_pings_total(?:\{[^}]*\})? (\S+)", text, re.M)
    return float(match.group(1)) if match else None


async def main():
    binary, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    window = float(sys.argv[3]) if len(sys.argv) > 3 else 10
    port = free_port()
    server = subprocess.Popen([*(["taskset", "-c", "0"] if os.cpu_count() > 1 else []), binary, "serve", "--port", str(port),
                               "--auth", "none", "--log-level", "error", "--ping-interval", "1", "--idle-timeout", "5",
                               "--max-connections", str(count + 100), "--max-connections-per-ip", str(count)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                await asyncio.sleep(0.1)
        sockets = []
        for start in range(0, count, 200):
            sockets += await asyncio.gather(*(websockets.connect(
                f"ws://127.0.0.1:{port}/", subprotocols=["meridian.v1"], ping_interval=None, open_timeout=30,
                compression=None, local_addr=(ADDRESSES[i % len(ADDRESSES)], 0)) for i in range(start, min(start + 200, count))))

        async def drain(ws):
            try:
                async for _ in ws:
                    pass
            except websockets.ConnectionClosed:
                pass
        readers = [asyncio.create_task(drain(ws)) for ws in sockets]
        await asyncio.sleep(2)  # every connection pinged at least once before the window opens
        before, pinged_before = cpu_ms(server.pid), pings(port)
        await asyncio.sleep(window)  # the measurement window
        after, pinged_after = cpu_ms(server.pid), pings(port)
        alive = sum(1 for ws in sockets if ws.close_code is None)
        for r in readers:
            r.cancel()
        print(json.dumps({"connections": count, "alive": alive, "windowSeconds": window,
                          "serverCpuMs": round(after - before, 1),
                          "pingsInWindow": None if pinged_before is None else pinged_after - pinged_before}))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    asyncio.run(main())
