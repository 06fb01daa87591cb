"""A cluster's event log is in its shared PostgreSQL: every node answers
GET /api/sessions/{id}/events with the same entries, and the history survives the owner's death."""

import time

import pytest

from meridian_client import Client, run
from test_cluster import point, settled_snapshot
from test_event_log import all_entries


@pytest.fixture
def cluster(cluster_pair):
    return cluster_pair


def logged_ids(node, session):
    return [e["event"]["annotation"]["id"] for e in all_entries(node, session) if "event" in e and e["event"]["type"] == "annotation.added"]


def wait_for_log(node, session, ids, timeout=15):
    """The event log reaches PostgreSQL a little after the acks (its own writer): polled."""
    deadline = time.monotonic() + timeout
    while logged_ids(node, session) != ids:
        assert time.monotonic() < deadline, f"log at {node.port}: {logged_ids(node, session)}, expected {ids}"
        time.sleep(0.05)


def test_every_node_reads_one_log_and_it_outlives_the_owner(cluster, session_id):
    async def scenario():
        first, second = cluster.nodes
        a = await Client.open(first.url, "a")
        await a.join(session_id, "A", "editor")
        for i in range(3):
            await a.ok({"type": "annotation.add", "annotation": point(f"p{i}")})
        await a.close()
        wait_for_log(first, session_id, ["p0", "p1", "p2"])
        wait_for_log(second, session_id, ["p0", "p1", "p2"])
        assert all_entries(first, session_id) == all_entries(second, session_id)

        # The owner dies; the other node takes the session over and goes on with the same log.
        deadline = time.monotonic() + 10
        while (owner := cluster.owner(session_id)) is None:
            assert time.monotonic() < deadline, cluster.describe(session_id)
            time.sleep(0.05)  # the lease as Redis holds it, polled
        survivor = second if owner is first else first
        cluster.kill(owner)
        await settled_snapshot(cluster, session_id)
        b = await Client.open(survivor.url, "b")
        await b.join(session_id, "B", "editor")
        await b.ok({"type": "annotation.add", "annotation": point("after")})
        await b.close()
        wait_for_log(survivor, session_id, ["p0", "p1", "p2", "after"])
        positions = [e["position"] for e in all_entries(survivor, session_id)]
        assert positions == sorted(positions) and len(set(positions)) == len(positions)
        epochs = {e["epoch"] for e in all_entries(survivor, session_id)}
        assert len(epochs) == 2, f"one epoch per owner: {epochs}"
    run(scenario())
