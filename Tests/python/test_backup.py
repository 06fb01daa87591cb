"""The README's backup: SQLite's online backup of a running server's store,
restored into a new data directory, serves the same sessions."""

import sqlite3
import tempfile
from pathlib import Path

from conftest import Server
from meridian_client import run, members


def test_online_backup_while_serving_restores_every_acknowledged_change(session_id):
    live_dir, restored_dir = tempfile.mkdtemp(prefix="meridian-live-"), tempfile.mkdtemp(prefix="meridian-restored-")
    server = Server("--data-dir", live_dir)
    try:
        async def write():
            async with members(server.url, session_id, ("alice", "owner")) as (alice,):
                for i in range(20):
                    await alice.ok({"type": "annotation.add", "annotation": {
                        "type": "point", "id": f"p{i}", "coordinate": {"latitude": i, "longitude": 0}}})
        run(write())
        # The online backup API (what sqlite3's .backup uses), taken while the server runs.
        source = sqlite3.connect(Path(live_dir) / "meridian.sqlite")
        target = sqlite3.connect(Path(restored_dir) / "meridian.sqlite")
        try:
            source.backup(target)
            assert target.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            source.close()
            target.close()
    finally:
        server.stop()

    restored = Server("--data-dir", restored_dir)
    try:
        async def read():
            async with members(restored.url, session_id, ("bob", "viewer")) as (bob,):
                return sorted(a["id"] for a in bob.welcome["snapshot"]["annotations"])
        assert run(read()) == sorted(f"p{i}" for i in range(20))
    finally:
        restored.stop()
