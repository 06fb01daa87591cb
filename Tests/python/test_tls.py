"""TLS on the server's port: wss:// and https:// with a certificate made at test
time, large messages over TLS, and a clear refusal of a missing certificate."""

import asyncio
import json
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest
from websockets.exceptions import InvalidMessage, InvalidStatus

from conftest import binary
from meridian_client import Client, run


def self_signed(directory, cert, key, subject, extension):
    """A self-signed P-256 certificate valid for a day, written to `directory`: (cert path, key path)."""
    cert, key = directory / cert, directory / key
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", subject,
                    "-addext", extension], check=True, capture_output=True)
    return str(cert), str(key)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return self_signed(tmp_path_factory.mktemp("tls"), "cert.pem", "key.pem", "/CN=localhost",
                       "subjectAltName=DNS:localhost,IP:127.0.0.1")


def trusting(cert):
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.load_verify_locations(cert)
    return context


def test_wss_carries_the_protocol_and_large_snapshots(start_server, certificate, session_id):
    cert, key = certificate
    # 2,500 adds in a burst: above the default per-connection rate limit.
    server = start_server("--tls-cert", cert, "--tls-key", key, "--rate-limit", "1000000", "--rate-burst", "1000000")
    assert server.url.startswith("wss://")
    context = trusting(cert)

    async def scenario():
        alice = await Client.open(server.url, "alice", ssl=context)
        await alice.join(session_id, "Alice", "owner")
        refs = [await alice.send({"type": "annotation.add", "annotation": {
            "type": "point", "id": f"point-{i:05d}", "coordinate": {"latitude": (i % 170) - 85, "longitude": i % 180}}})
            for i in range(2500)]
        await alice.answer(refs[-1], timeout=30)
        bob = await Client.open(server.url, "bob", ssl=context)
        welcome = await bob.join(session_id, "Bob")
        size = len(json.dumps(welcome))
        assert len(welcome["snapshot"]["annotations"]) == 2500
        assert size > 200_000, size
        await bob.ping()
        await alice.close()
        await bob.close()

    run(scenario())


def test_https_answers_health_and_plain_clients_are_not_served(start_server, certificate):
    cert, key = certificate
    server = start_server("--tls-cert", cert, "--tls-key", key)
    with urllib.request.urlopen(f"https://{server.host}:{server.port}/healthz", context=trusting(cert), timeout=10) as r:
        assert r.status == 200 and json.loads(r.read()) == {"status": "ok"}
    with pytest.raises(Exception):
        urllib.request.urlopen(f"http://{server.host}:{server.port}/healthz", timeout=5).read()


def test_an_untrusting_client_refuses_the_self_signed_certificate(start_server, certificate):
    cert, key = certificate
    server = start_server("--tls-cert", cert, "--tls-key", key)

    async def scenario():
        with pytest.raises(ssl.SSLCertVerificationError):
            await Client.open(server.url, ssl=ssl.create_default_context())

    run(scenario())


def test_a_missing_certificate_stops_start_up_with_a_clear_error(certificate):
    _, key = certificate
    result = subprocess.run([str(binary()), "serve", "--port", "0", "--auth", "none", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", key],
                            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "cannot read the TLS certificate /nonexistent/cert.pem" in result.stderr
    assert "listening" not in result.stdout


def test_a_certificate_without_a_key_is_refused(certificate):
    cert, _ = certificate
    result = subprocess.run([str(binary()), "serve", "--print-config", "--tls-cert", cert],
                            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert result.returncode != 0
    assert "tlsCert and tlsKey must be set together" in result.stderr


def test_a_client_that_never_starts_tls_is_dropped_after_the_handshake_timeout(start_server, certificate):
    cert, key = certificate
    server = start_server("--tls-cert", cert, "--tls-key", key, "--handshake-timeout", "2")
    stalled = socket.create_connection((server.host, server.port), timeout=15)
    started = time.monotonic()
    try:
        data = stalled.recv(4096)  # no ClientHello: blocks until the server gives up
    except ConnectionResetError:
        data = b""
    elapsed = time.monotonic() - started
    stalled.close()
    assert data == b""
    assert 1.5 <= elapsed <= 5, f"dropped after {elapsed:.1f} s"


@pytest.fixture(scope="module")
def client_certificate(tmp_path_factory):
    """A self-signed client certificate, which the server trusts as its own client CA."""
    return self_signed(tmp_path_factory.mktemp("tls-client"), "client.pem", "client.key", "/CN=meridian-client",
                       "extendedKeyUsage=clientAuth")


def test_mutual_tls_admits_certified_clients_on_every_service_thread(start_server, certificate, client_certificate, session_id):
    cert, key = certificate
    client_cert, client_key = client_certificate
    server = start_server("--tls-cert", cert, "--tls-key", key, "--tls-client-ca", client_cert, "--threads", "2")
    certified = trusting(cert)
    certified.load_cert_chain(client_cert, client_key)

    async def scenario():
        # Connections are spread over both threads; each joins and gets its answers over TLS.
        clients = await asyncio.gather(*(Client.open(server.url, f"c{i}", ssl=certified) for i in range(8)))
        for i, c in enumerate(clients):
            await c.join(f"{session_id}-{i % 3}", f"C{i}")
            await c.ping()
        # Without a certificate the handshake fails; the certified clients are unaffected.
        # (TLS 1.3: the client finishes its side first, and sees the alert as a missing HTTP answer.)
        with pytest.raises((ssl.SSLError, OSError, ConnectionError, EOFError, InvalidMessage)):
            stranger = await Client.open(server.url, "stranger", ssl=trusting(cert))
            await stranger.join(session_id, "Stranger")
        for c in clients:
            await c.ping()
            await c.close()

    run(scenario())
    assert server.alive()


def test_a_client_ca_that_cannot_be_read_or_has_no_certificate_stops_start_up(certificate):
    cert, key = certificate
    result = subprocess.run([str(binary()), "serve", "--port", "0", "--auth", "none", "--tls-cert", cert, "--tls-key", key,
                             "--tls-client-ca", "/nonexistent/ca.pem"],
                            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "cannot read the TLS client CA /nonexistent/ca.pem" in result.stderr
    result = subprocess.run([str(binary()), "serve", "--port", "0", "--auth", "none", "--tls-client-ca", cert],
                            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert result.returncode != 0
    assert "a client CA needs TLS" in result.stderr, result.stderr
