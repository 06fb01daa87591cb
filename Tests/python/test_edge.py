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


def test_behind_a_trusted_proxy_the_per_ip_limit_counts_the_forwarded_client(start_server):
    """Clients behind a reverse proxy on 127.0.0.1 (--trusted-proxies): each X-Forwarded-For
    client has its own allowance; an untrusted peer's header counts for nothing."""
    server = start_server("--max-connections-per-ip", "2", "--trusted-proxies", "127.0.0.1, 10.0.0.0/8")
    plain = start_server("--max-connections-per-ip", "2")

    def via(client, spoofed=None):
        chain = f"{spoofed}, {client}" if spoofed else client
        return {"additional_headers": {"X-Forwarded-For": chain}}

    async def scenario():
        # Two clients behind the proxy, two connections each: four from one TCP address.
        opened = [await Client.open(server.url, **via(c)) for c in ("198.51.100.1", "198.51.100.2") for _ in range(2)]
        for c in opened:
            await c.ping()
        # The third of one client is refused, whatever it wrote to the left of the proxy's entry.
        status, body = await refused_status(server.url, **via("198.51.100.1", spoofed="203.0.113.77"))
        assert status == 429 and "too many connections" in body
        third = await Client.open(server.url, **via("198.51.100.3"))
        await third.ping()
        # Straight to a server that trusts no proxy: the header changes nothing.
        direct = [await Client.open(plain.url, **via(f"198.51.100.{i}")) for i in range(2)]
        status, _ = await refused_status(plain.url, **via("198.51.100.9"))
        assert status == 429
        for c in opened + [third] + direct:
            await c.close()

    run(scenario())


def test_a_malformed_trusted_proxy_is_refused_by_name():
    from test_config import meridian
    result = meridian("--trusted-proxies", "10.0.0.0/33", "--print-config")
    assert result.returncode != 0
    assert 'trustedProxies "10.0.0.0/33"' in result.stderr


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
