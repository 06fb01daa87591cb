"""Kill the server with SIGKILL mid-stream, restart it on the same data
directory: every acknowledged change is there, nothing half-applied, the
SQLite file is intact, and clients resuming with the old epoch get a fresh
snapshot and converge."""

import asyncio
import json
import sqlite3
import tempfile
from pathlib import Path

import pytest

from conftest import Server
from meridian_client import Client, Closed, run

WINDOW = 16  # requests in flight per client


def version(v):
    # Every field of a version changes together: a stored mix would show a half-applied update.
    return {"title": f"v{v}", "subtitle": f"v{v}", "zIndex": v}


class Stream:
    """Pipelined requests of one client; records what was sent and what was acked, by ref."""

    def __init__(self, client, kill_at, acked_total, kill):
        self.client = client
        self.sent = {}  # ref -> (key, payload)
        self.acked = []  # (key, payload, seq) in ack order
        self.window = asyncio.Semaphore(WINDOW)
        self.kill_at, self.acked_total, self.kill = kill_at, acked_total, kill

    async def send(self, key, payload, message):
        await self.window.acquire()
        ref = await self.client.send(message)
        self.sent[ref] = (key, payload)

    async def read(self):
        try:
            while True:
                m = await self.client.recv(timeout=30)
                if m["type"] == "ack" and m["ref"] in self.sent:
                    key, payload = self.sent[m["ref"]]
                    self.acked.append((key, payload, m["seq"]))
                    self.window.release()
                    self.acked_total[0] += 1
                    if self.acked_total[0] >= self.kill_at:
                        self.kill.set()
                elif m["type"] == "error":
                    raise AssertionError(f"{self.client.name}: request refused: {m}")
        except Closed:
            return


async def stream_until_killed(server, session, kill_at):
    alice = await Client.open(server.url, "alice")
    await alice.join(session, "Alice", "owner")
    await alice.ok({"type": "annotation.add", "annotation": {
        "type": "point", "id": "drag", "coordinate": {"latitude": 0, "longitude": 0}, "draggable": True}})
    bob = await Client.open(server.url, "bob")
    await bob.join(session, "Bob", "editor")
    kill = asyncio.Event()
    total = [0]
    a, b = Stream(alice, kill_at, total, kill), Stream(bob, kill_at, total, kill)

    async def annotations():
        i = 0
        while not kill.is_set():
            ident, v = f"a{i // 3}", i % 3
            if v == 0:
                message = {"type": "annotation.add", "annotation": {
                    "type": "point", "id": ident, "coordinate": {"latitude": (i // 3) % 80, "longitude": 1}, **version(0)}}
            else:
                message = {"type": "annotation.update", "id": ident, "changes": version(v)}
            await a.send(ident, v, message)
            i += 1

    async def drags():
        j = 0
        while not kill.is_set():
            lat = j % 80
            await b.send("drag", None, {"type": "drag", "id": "drag", "state": "starting"})
            # Moves go to negative longitudes: a stored one would be a transient position.
            await b.send("drag", None, {"type": "drag", "id": "drag", "state": "dragging",
                                        "coordinate": {"latitude": lat, "longitude": -5}})
            await b.send("drag", None, {"type": "drag", "id": "drag", "state": "dragging",
                                        "coordinate": {"latitude": lat, "longitude": -6}})
            end = {"latitude": lat, "longitude": 3 + j}
            await b.send("drag", end, {"type": "drag", "id": "drag", "state": "ending", "coordinate": end})
            j += 1

    readers = [asyncio.create_task(a.read()), asyncio.create_task(b.read())]
    writers = [asyncio.create_task(annotations()), asyncio.create_task(drags())]
    await asyncio.wait_for(kill.wait(), 60)
    server.process.kill()  # SIGKILL: no flush, no close frames
    server.process.wait(10)
    await asyncio.wait_for(asyncio.gather(*readers), 30)
    for w in writers:
        w.cancel()
    await asyncio.gather(*writers, return_exceptions=True)
    for c in (alice, bob):
        c.abort()
    # The seq of the last acknowledged durable change (drag starts and moves store nothing).
    durable = [seq for *_, seq in a.acked] + [seq for _, end, seq in b.acked if end is not None]
    return a, b, alice.welcome["epoch"], max(durable)


def stored(data_dir, session):
    db = sqlite3.connect(Path(data_dir) / "meridian.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        row = db.execute("SELECT seq, epoch FROM sessions WHERE id = ?", (session,)).fetchone()
        rows = db.execute("SELECT id, body FROM annotations WHERE session_id = ?", (session,)).fetchall()
    finally:
        db.close()
    assert row is not None, "the session was not stored"
    return row[0], row[1], {ident: json.loads(body) for ident, body in rows}


def check_annotations(a, annotations):
    sent, acked = {}, {}
    for key, v in a.sent.values():
        sent[key] = max(sent.get(key, -1), v)
    for key, v, _ in a.acked:
        acked[key] = max(acked.get(key, -1), v)
    for ident, v in acked.items():
        assert ident in annotations, f"{ident} was acknowledged (version {v}) but is missing after the crash"
    for ident, body in annotations.items():
        if ident == "drag":
            continue
        assert ident in sent, f"{ident} is stored but was never sent"
        v = body.get("zIndex", 0)
        assert {k: body.get(k, 0 if k == "zIndex" else None) for k in ("title", "subtitle", "zIndex")} == version(v), \
            f"{ident} is half-applied: {body}"
        assert acked.get(ident, 0) <= v <= sent[ident], f"{ident} at version {v}: acked {acked.get(ident)}, sent {sent[ident]}"


def check_drag(b, body):
    ends = [payload for payload in (p for _, p in b.sent.values()) if payload is not None]
    acked = [payload for _, payload, _ in b.acked if payload is not None]
    coordinate = body["coordinate"]
    assert coordinate["longitude"] >= 0, f"a transient drag position was stored: {coordinate}"
    if acked:
        # The last acknowledged ending or a later one that was committed before the kill.
        assert coordinate in ends[ends.index(acked[-1]):], f"stored {coordinate}, last acked ending {acked[-1]}"
    else:
        assert coordinate == {"latitude": 0, "longitude": 0} or coordinate in ends


@pytest.mark.parametrize("kill_at", [3, 40, 160])
def test_acknowledged_changes_survive_sigkill(kill_at, session_id):
    data_dir = tempfile.mkdtemp(prefix="meridian-crash-")
    server = Server("--data-dir", data_dir)
    try:
        a, b, old_epoch, acked_seq = run(stream_until_killed(server, session_id, kill_at))
    finally:
        server.stop()
    assert len(a.acked) + len(b.acked) >= kill_at

    seq, epoch, annotations = stored(data_dir, session_id)
    assert epoch == old_epoch
    assert seq >= acked_seq, f"stored seq {seq} is behind an acknowledged change at seq {acked_seq}"
    check_annotations(a, annotations)
    check_drag(b, annotations["drag"])
    print(f"kill after {kill_at}: sent {len(a.sent)}+{len(b.sent)}, acked {len(a.acked)}+{len(b.acked)}, stored {len(annotations)} annotations, seq {seq}")

    restarted = Server("--data-dir", data_dir)
    try:
        run(reconnect_and_converge(restarted, session_id, old_epoch, acked_seq, annotations))
        assert restarted.alive()
    finally:
        restarted.stop()


async def reconnect_and_converge(server, session, old_epoch, last_seq, annotations):
    alice = await Client.open(server.url, "alice2")
    bob = await Client.open(server.url, "bob2")
    try:
        wa = await alice.join(session, "Alice", "owner", resume={"epoch": old_epoch, "seq": last_seq})
        wb = await bob.join(session, "Bob", "editor", resume={"epoch": old_epoch, "seq": last_seq})
        for w in (wa, wb):
            assert w["resumed"] is False and w["epoch"] != old_epoch, w
            assert {x["id"]: x for x in w["snapshot"]["annotations"]} == annotations
        assert wa["epoch"] == wb["epoch"]
        # Both see the same next change on top of the restored state.
        ack, _ = await alice.ok({"type": "annotation.update", "id": "drag", "changes": {"title": "after restart"}})
        seen, _ = await bob.until(lambda m: m["type"] == "annotation.updated")
        assert seen["annotation"]["title"] == "after restart" and seen["seq"] == ack["seq"]
    finally:
        await alice.close()
        await bob.close()
