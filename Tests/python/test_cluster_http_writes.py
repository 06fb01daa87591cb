"""HTTP API creates and deletes in a cluster: a node writes a session that is not loaded on it
only under the session's lease, like an owner, so it never deletes or overwrites a session
another node holds; a deleted session's fence stays in PostgreSQL after it."""

import http.client
import json
import time

from meridian_client import Client, run
from test_cluster import point


def call(node, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=15)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json"} if payload else {})
        response = conn.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else None)
    finally:
        conn.close()


def wait_for_owner(cluster, session, node, timeout=10):
    deadline = time.monotonic() + timeout
    while cluster.owner(session) is not node:
        assert time.monotonic() < deadline, cluster.describe(session)
        time.sleep(0.05)  # the lease as Redis holds it, polled


def test_a_node_neither_deletes_nor_recreates_a_session_another_node_holds(cluster_pair, session_id):
    cluster = cluster_pair
    here, owner = cluster.nodes

    async def scenario():
        member = await Client.open(owner.url, "m")
        await member.join(session_id, "M", "owner")
        await member.ok({"type": "annotation.add", "annotation": point("kept")})
        wait_for_owner(cluster, session_id, owner)

        status, body = call(here, "DELETE", f"/api/sessions/{session_id}")
        assert status == 409 and body["error"] == "owned_elsewhere", body
        status, body = call(here, "POST", "/api/sessions", {"id": session_id})
        assert status == 409 and body["error"] == "already_exists", body
        # Nothing changed: the owner still holds it, with its annotation, and serves its member.
        assert cluster.owner(session_id) is owner
        status, body = call(here, "GET", f"/api/sessions/{session_id}")
        assert status == 200 and [a["id"] for a in body["snapshot"]["annotations"]] == ["kept"], body
        await member.ok({"type": "annotation.add", "annotation": point("after")})
        await member.close()
    run(scenario())


def test_a_create_and_a_delete_take_the_lease_and_give_it_up(cluster_pair, postgres_server, postgres_url, session_id):
    cluster = cluster_pair
    here, other = cluster.nodes

    async def scenario():
        status, body = call(here, "POST", "/api/sessions", {"id": session_id, "settings": {"dragPolicy": "last-writer-wins"}})
        assert status == 201, body
        # The lease taken for the create is given up: a join at the other node loads the session there.
        member = await Client.open(other.url, "m")
        welcome = await member.join(session_id, "M", "owner")
        assert welcome["snapshot"]["settings"]["dragPolicy"] == "last-writer-wins"
        wait_for_owner(cluster, session_id, other)
        await member.close()
        status, body = call(here, "DELETE", f"/api/sessions/{session_id}")
        assert status == 409 and body["error"] == "owned_elsewhere", body

        # A session not loaded anywhere: deleted under a lease of its own, whose fence stays stored.
        gone = session_id + "-gone"
        assert call(here, "POST", "/api/sessions", {"id": gone})[0] == 201
        fence_at_create = int(postgres_server.psql(postgres_url, f"SELECT fence FROM sessions WHERE id = '{gone}'"))
        status, _ = call(other, "DELETE", f"/api/sessions/{gone}")
        assert status == 204
        row = postgres_server.psql(postgres_url, f"SELECT deleted, fence FROM sessions WHERE id = '{gone}'")
        deleted, fence = row.split("|")
        assert deleted == "t" and int(fence) > fence_at_create, row
        assert call(here, "GET", f"/api/sessions/{gone}")[0] == 404
        assert gone not in [s["id"] for s in call(here, "GET", "/api/sessions")[1]["sessions"]]
        # A join creates it afresh, under a newer fence still.
        member = await Client.open(here.url, "n")
        welcome = await member.join(gone, "N", "owner")
        assert welcome["snapshot"]["annotations"] == []
        await member.ok({"type": "annotation.add", "annotation": point("new")})
        await member.close()
        row = postgres_server.psql(postgres_url, f"SELECT deleted, fence FROM sessions WHERE id = '{gone}'")
        assert row.split("|")[0] == "f" and int(row.split("|")[1]) > int(fence), row
    run(scenario())
