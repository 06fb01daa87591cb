"""Large sessions announce joins and leaves in batches (SPEC §5, §7.4), over real sockets with
the Python `websockets` client: everyone is announced exactly once, in fewer frames than joins,
with contiguous seqs, and every client's participant list converges to the server's."""

import asyncio

from meridian_client import Client, check_seq_order, run, snapshot

JOINERS = 40


def test_a_crowd_joining_at_once_is_announced_in_a_few_presence_events(start_server, session_id):
    server = start_server("--presence-batch-above", "5")

    async def scenario():
        watcher = await Client.open(server.url, "watcher")
        welcome = await watcher.join(session_id, "Watcher", "viewer")
        start = welcome["seq"]
        crowd = [await Client.open(server.url, f"c{i}") for i in range(JOINERS)]
        await asyncio.gather(*(c.join(session_id, f"C{i}", "viewer") for i, c in enumerate(crowd)))
        ids = {c.participant for c in crowd}

        # Everyone is announced once: by participant.joined while the session is small, then by presence.
        announced, frames = [], 0
        while set(announced) != ids:
            m = await watcher.recv()
            if m["type"] == "participant.joined":
                announced.append(m["participant"]["id"])
                frames += 1
            elif m["type"] == "presence":
                assert m["left"] == [], m
                announced += [p["id"] for p in m["joined"]]
                frames += 1
        assert sorted(announced) == sorted(ids), "announced twice or not at all"
        assert frames < JOINERS, f"{frames} frames for {JOINERS} joins: not batched"

        # Leaves too; then the watcher's list equals the server's.
        for c in crowd[:10]:
            await c.close()
        gone = {c.participant for c in crowd[:10]}
        left = set()
        while left != gone:
            m = await watcher.recv()
            if m["type"] == "presence":
                left |= {l["participant"] for l in m["left"]}
                assert all(l["reason"] == "disconnected" for l in m["left"]), m
            elif m["type"] == "participant.left":
                left.add(m["participant"])
        await watcher.ping()
        check_seq_order(watcher.log, start, "watcher")
        listed = {p["id"] for p in (await snapshot(server.url, session_id))["participants"]}
        assert listed == (ids - gone) | {watcher.participant}, listed
        for c in crowd[10:]:
            await c.close()
        await watcher.close()
    run(scenario())
