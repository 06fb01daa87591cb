"""Redis restarted under a cluster (stopped for a few seconds, started again on the same port,
empty): every join afterwards is answered — at the node that owned the session, and at another
node whose members were served through it — and what was acknowledged before is there."""

import asyncio
import time

import pytest

from meridian_client import Client, Closed, run

ANSWER_WITHIN = 15  # seconds for any join to be answered (a welcome or an error)


@pytest.fixture
def cluster(cluster_pair):
    return cluster_pair


async def answered_join(url, session, name):
    """Joins until welcomed; every attempt must be answered (welcome, error or close)."""
    deadline = time.monotonic() + ANSWER_WITHIN
    while True:
        c = await Client.open(url, name)
        try:
            answer, _ = await c.request({"type": "join", "session": session, "name": name, "role": "editor"}, timeout=ANSWER_WITHIN)
        except Closed:
            answer = {"type": "closed"}
        except asyncio.TimeoutError:
            pytest.fail(f"{name}: a join at {url} was not answered within {ANSWER_WITHIN} s")
        if answer["type"] == "welcome":
            c.welcome = answer
            return c
        await c.close()
        assert time.monotonic() < deadline, f"{name}: no welcome within {ANSWER_WITHIN} s; last answer {answer}"
        await asyncio.sleep(0.2)  # the next attempt, as a client's reconnect backoff


@pytest.mark.parametrize("round", range(3))
def test_joins_after_a_redis_restart_are_answered_at_every_node(cluster, redis, session_id, round):
    async def scenario():
        one, two = cluster.nodes
        a = await answered_join(one.url, session_id, "A")
        b = await answered_join(two.url, session_id, "B")
        await a.ok({"type": "annotation.add", "annotation": {"type": "point", "id": "kept", "coordinate": {"latitude": 1, "longitude": 2}}})
        redis.stop()
        await asyncio.sleep(4)  # Redis stays away for four seconds
        redis.start()
        deadline = time.monotonic() + ANSWER_WITHIN
        while not all(cluster.ready(n) for n in cluster.nodes):
            assert time.monotonic() < deadline, "the nodes did not become ready again"
            await asyncio.sleep(0.05)
        for c in (a, b):
            await c.close()
        again = await answered_join(one.url, session_id, "A")
        other = await answered_join(two.url, session_id, "B")
        assert [x["id"] for x in other.welcome["snapshot"]["annotations"]] == ["kept"]
        await again.ok({"type": "annotation.add", "annotation": {"type": "point", "id": "after", "coordinate": {"latitude": 1, "longitude": 3}}})
        ids = None
        while ids != ["after", "kept"]:
            m = await other.recv()
            if m["type"] == "annotation.added":
                ids = sorted(["kept", m["annotation"]["id"]])
        for c in (again, other):
            await c.close()
    run(scenario())
