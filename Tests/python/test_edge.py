"""Facing the internet: Origin allowlist, connection limits and the handshake
timeout, seen by clients we did not write (Python `websockets`, raw sockets)."""

import asyncio
import socket
import time

import pytest
import urllib.request
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from meridian_client import SUBPROTOCOL, Client, open_when_accepted, run


async def refused_status(url, **kwargs):
    """Opens a WebSocket that must be refused; returns the HTTP status and body."""
    with pytest.raises(InvalidStatus) as refused:
        await asyncio.wait_for(connect(url, subprotocols=[SUBPROTOCOL], proxy=None, **kwargs), 10)
    return refused.value.response.status_code, refused.value.response.body.decode(errors="replace")


def test_origins_outside_the_allowlist_get_403(start_server):
    server = start_server("--allowed-origins", "https://app.example, https://other.example")

    async def scenario():
        status, body = await refused_status(server.url, origin="https://evil.example")
        assert status == 403 and "origin not allowed" in body
        for origin in ("https://app.example", "https://other.example", f"http://{server.host}:{server.port}", None):
            client = await Client.open(server.url, origin=origin)
            await client.ping()
            await client.close()

    run(scenario())


def test_per_ip_limit_answers_429_and_places_come_back(start_server):
    server = start_server("--max-connections-per-ip", "3")

    async def scenario():
        clients = [await Client.open(server.url) for _ in range(3)]
        status, body = await refused_status(server.url)
        assert status == 429 and "too many connections" in body
        for client in clients:
            await client.close()
        # Connect/close cycles, including connections dropped without a close frame.
        for _ in range(10):
            polite = await open_when_accepted(server.url, timeout=10)
            await polite.ping()
            await polite.close()
            rude = await open_when_accepted(server.url, timeout=10)
            rude.ws.transport.abort()
        clients = [await open_when_accepted(server.url, timeout=10) for _ in range(3)]
        for client in clients:
            await client.ping()
            await client.close()

    run(scenario())


def test_total_limit_answers_503(start_server):
    server = start_server("--max-connections", "2")

    async def scenario():
        clients = [await Client.open(server.url) for _ in range(2)]
        status, _ = await refused_status(server.url)
        assert status == 503
        with urllib.request.urlopen(f"http://{server.host}:{server.port}/healthz", timeout=10) as r:
            assert r.status == 200
        for client in clients:
            await client.close()

    run(scenario())


@pytest.mark.parametrize("partial", [b"GET / HTTP/1.1\r\nHost: x\r\nUpgr", b""])
def test_a_slowloris_request_is_dropped_after_the_handshake_timeout(start_server, partial):
    server = start_server("--handshake-timeout", "2")
    stalled = socket.create_connection((server.host, server.port), timeout=15)
    started = time.monotonic()
    stalled.sendall(partial)

    async def meanwhile():
        client = await Client.open(server.url)
        await client.ping()
        await client.close()

    run(meanwhile())
    try:
        data = stalled.recv(4096)  # blocks until the server closes (or the 15 s socket timeout)
    except ConnectionResetError:
        data = b""
    elapsed = time.monotonic() - started
    stalled.close()
    assert data == b"", data
    assert 1.5 <= elapsed <= 5, f"dropped after {elapsed:.1f} s"
