"""SIGTERM: connections closed with 1001, storage flushed, exit code 0."""

import asyncio
import json
import signal
import sqlite3
import tempfile
from pathlib import Path

from conftest import Server
from meridian_client import Client, run


def test_sigterm_closes_with_1001_flushes_and_exits_zero(session_id):
    data_dir = tempfile.mkdtemp(prefix="meridian-term-")
    server = Server("--data-dir", data_dir)

    async def scenario():
        alice = await Client.open(server.url, "alice")
        await alice.join(session_id, "Alice", "owner")
        # Pipelined: some of these may still wait for their commit when SIGTERM arrives.
        refs = [await alice.send({"type": "annotation.add", "annotation": {
            "type": "point", "id": f"p{i}", "coordinate": {"latitude": i, "longitude": 0}}}) for i in range(50)]
        server.process.send_signal(signal.SIGTERM)
        code, seen = await alice.wait_closed(timeout=15)
        acked = {m["ref"] for m in seen if m["type"] == "ack"}
        return code, [r for r in refs if r in acked]

    try:
        code, acked = run(scenario())
        assert code == 1001
        assert server.process.wait(15) == 0, server.log_text()[-2000:]
    finally:
        server.stop()
    db = sqlite3.connect(Path(data_dir) / "meridian.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        stored = {row[0] for row in db.execute("SELECT id FROM annotations WHERE session_id = ?", (session_id,))}
    finally:
        db.close()
    # Every acknowledged add is stored (acks come in request order: p0, p1, …).
    assert {f"p{i}" for i in range(len(acked))} <= stored
