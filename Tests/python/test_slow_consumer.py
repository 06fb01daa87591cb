"""A client that stops reading is closed with 4008 while the others keep every discrete event."""

import asyncio

from meridian_client import Client, Closed, check_seq_order, run

FLOOD = 4000
WINDOW = 16
BLOB = "x" * 2000  # ~2 KB per event (titles are limited to 256 characters; metadata holds up to 4096 bytes)


def test_slow_consumer_is_closed_with_4008(start_server, session_id):
    # The watcher reads all along but may stall briefly on a busy machine: the
    # limits leave it room, while the slow client, which never reads, passes them.
    # The editor sends as fast as its acks come (faster than the default 200 requests/s): the
    # rate limit is lifted, the subject here is the slow reader.
    s = start_server("--queue-high-water", "262144", "--queue-hard-limit", "2097152", "--slow-consumer-grace", "1",
                     "--close-timeout", "120", "--rate-limit", "1000000", "--rate-burst", "1000000")

    async def scenario():
        editor = await Client.open(s.url, "editor")
        await editor.join(session_id, "Editor", "owner")
        await editor.ok({"type": "annotation.add", "annotation": {"type": "point", "id": "p", "coordinate": {"latitude": 0, "longitude": 0}}})
        watcher = await Client.open(s.url, "watcher")
        await watcher.join(session_id, "Watcher", "viewer")
        slow = await Client.open_slow(s.host, s.port)
        ref = await slow.send({"type": "join", "session": session_id, "name": "Slow", "role": "viewer"})
        welcome = await slow.recv()
        assert welcome["type"] == "welcome" and welcome["ref"] == ref, welcome
        slow_pid = welcome["participant"]
        start = watcher.welcome["seq"]
        watcher_saw_left = asyncio.Event()

        async def slow_reads_again():
            # The slow client reads again once the others are told it left.
            await asyncio.wait_for(watcher_saw_left.wait(), 60)
            return await slow.wait_closed(timeout=30)

        slow_task = asyncio.create_task(slow_reads_again())
        try:
            # Flood discrete events; the editor's reader drains its own copies and acks concurrently.
            # At most WINDOW requests in flight, as a well-behaved client would.
            pending = set()
            sent = 0
            left_seen_by_editor = None
            while sent < FLOOD or pending:
                while sent < FLOOD and len(pending) < WINDOW:
                    pending.add(await editor.send({"type": "annotation.update", "id": "p", "changes": {"metadata": {"blob": BLOB, "i": sent}}}))
                    sent += 1
                m = await editor.recv(timeout=30)
                if m["type"] in ("ack", "error") and m["ref"] in pending:
                    assert m["type"] == "ack", m
                    pending.discard(m["ref"])
                elif m["type"] == "participant.left":
                    left_seen_by_editor = m
                    watcher_saw_left.set()
            # The watcher receives every update, in order, with contiguous seq.
            updates = []
            left = None
            while len(updates) < FLOOD or left is None:
                m = await watcher.recv(timeout=30)
                if m["type"] == "annotation.updated":
                    updates.append(m)
                elif m["type"] == "participant.left":
                    left = m
                    watcher_saw_left.set()
            assert [u["annotation"]["metadata"]["i"] for u in updates] == list(range(FLOOD))
            check_seq_order(watcher.log[1:], start, "watcher")
            assert left["participant"] == slow_pid and left["reason"] == "slow_consumer", left
            if left_seen_by_editor is None:
                left_seen_by_editor, _ = await editor.until(lambda m: m["type"] == "participant.left", timeout=30)
            assert left_seen_by_editor["participant"] == slow_pid and left_seen_by_editor["reason"] == "slow_consumer"
            # When the slow client reads again, its connection ends with 4008.
            code, seen = await asyncio.wait_for(slow_task, 60)
            assert code == 4008, f"slow client closed with {code} after reading {len(seen)} messages"
            assert len(seen) < FLOOD, "the slow client received everything: it was never behind"
            # The session goes on for the others.
            await watcher.ping()
            await editor.ok({"type": "annotation.update", "id": "p", "changes": {"title": "after"}})
        finally:
            slow_task.cancel()
            for c in (editor, watcher, slow):
                await c.close()

    run(scenario(), timeout=180)
