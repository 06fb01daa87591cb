"""The HTTP API over real sockets: list, read, create, configure, delete; 4xx with JSON errors."""

import http.client
import json
import socket
import tempfile
import time

import pytest

from meridian_client import Client, run


@pytest.fixture
def api(start_server):
    server = start_server("--data-dir", tempfile.mkdtemp(prefix="meridian-api-"))

    def call(method, path, body=None, raw=None):
        conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
        try:
            payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
            conn.request(method, path, body=payload, headers={"Content-Type": "application/json"} if payload else {})
            response = conn.getresponse()
            data = response.read()
            if response.status != 204:
                assert response.getheader("Content-Type") == "application/json"
            return response.status, (json.loads(data) if data else None)
        finally:
            conn.close()

    call.server = server
    return call


def test_create_read_list_configure_delete(api, session_id):
    started = time.time() * 1000
    status, created = api("POST", "/api/sessions", {"id": session_id, "settings": {"dragPolicy": "priority", "tint": "#ff0000"}})
    assert status == 201, created
    assert created["id"] == session_id
    assert created["snapshot"]["settings"]["dragPolicy"] == "priority"
    assert created["snapshot"]["settings"]["tint"] == "#ff0000"

    status, listed = api("GET", "/api/sessions")
    assert status == 200
    assert [s["id"] for s in listed["sessions"]] == [session_id]
    # Not loaded (nobody joined): its last activity is when it was stored.
    row, = listed["sessions"]
    assert row["loaded"] is False and started - 1 <= row["lastActivity"] <= time.time() * 1000 + 1

    status, changed = api("PATCH", f"/api/sessions/{session_id}/settings", {"leaseTimeoutMs": 5000, "styleURL": "https://s.example/x.json"})
    assert status == 200, changed
    assert changed["snapshot"]["settings"]["leaseTimeoutMs"] == 5000

    status, read = api("GET", f"/api/sessions/{session_id}")
    assert status == 200
    assert read["snapshot"]["settings"] == changed["snapshot"]["settings"]

    status, _ = api("DELETE", f"/api/sessions/{session_id}")
    assert status == 204
    status, error = api("GET", f"/api/sessions/{session_id}")
    assert status == 404 and error["error"] == "not_found"


def test_a_settings_change_reaches_members_and_the_snapshot_and_the_list_names_them(api, session_id):
    started = time.time() * 1000

    async def scenario():
        alice = await Client.open(api.server.url, "alice")
        try:
            await alice.join(session_id, "Alice", "owner")
            await alice.ok({"type": "annotation.add", "annotation": {"type": "point", "id": "pin", "coordinate": {"latitude": 1, "longitude": 2}}})
            status, body = api("PATCH", f"/api/sessions/{session_id}/settings", {"dragPolicy": "last-writer-wins"})
            assert status == 200, body
            event, _ = await alice.until(lambda m: m["type"] == "settings")
            assert event["settings"]["dragPolicy"] == "last-writer-wins"
            status, read = api("GET", f"/api/sessions/{session_id}")
            assert read["loaded"] is True and [a["id"] for a in read["snapshot"]["annotations"]] == ["pin"]
            status, listed = api("GET", "/api/sessions")
            row, = [r for r in listed["sessions"] if r["id"] == session_id]
            assert row["names"] == ["Alice"] and row["members"] == 1
            assert started <= row["lastActivity"] <= time.time() * 1000
            status, error = api("DELETE", f"/api/sessions/{session_id}")
            assert status == 409 and error["error"] == "session_in_use"
        finally:
            await alice.close()
    run(scenario())


@pytest.mark.parametrize("method, path, body, status, code", [
    ("POST", "/api/sessions", b"{not json", 400, "invalid_message"),
    ("POST", "/api/sessions", b'{"id": "has space"}', 400, "invalid_field"),
    ("POST", "/api/sessions", b'{"id": "ok", "extra": 1}', 400, "invalid_field"),
    ("POST", "/api/sessions", b'{"id": "ok", "settings": {"dragPolicy": "nobody"}}', 400, "invalid_field"),
    ("POST", "/api/sessions", b'{"id": "ok", "settings": {"leaseTimeoutMs": 1}}', 400, "invalid_field"),
    ("PATCH", "/api/sessions/none-such/settings", b'{"tint": "#000"}', 404, "not_found"),
    ("DELETE", "/api/sessions/none-such", None, 404, "not_found"),
    ("GET", "/api/sessions/bad%20id", None, 400, "invalid_field"),
    ("PUT", "/api/sessions", b"{}", 405, "method_not_allowed"),
    ("GET", "/api/sessions/x/other", None, 404, "not_found"),
])
def test_bad_requests_get_4xx_with_a_json_error(api, method, path, body, status, code):
    got, error = api(method, path, raw=body)
    assert got == status, error
    assert error["error"] == code and error["message"]


def test_creating_an_existing_session_conflicts(api, session_id):
    assert api("POST", "/api/sessions", {"id": session_id})[0] == 201
    status, error = api("POST", "/api/sessions", {"id": session_id})
    assert status == 409 and error["error"] == "already_exists"


def test_a_body_over_the_limit_is_refused(api):
    # Announce 5 MB and send none of it: the answer comes from the announced length.
    with socket.create_connection((api.server.host, api.server.port), timeout=10) as sock:
        sock.sendall(b"POST /api/sessions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 5000000\r\n\r\n")
        response = b""
        while b"\r\n\r\n" not in response or not response.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            response += chunk
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), head
    assert json.loads(body)["error"] == "body_too_large"
    # The server is still there.
    assert api("GET", "/api/sessions")[0] == 200
