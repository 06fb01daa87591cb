"""`meridian serve --store postgres://...`: sessions in a PostgreSQL database
(pg_fixture.py) instead of the data directory's SQLite file. An acknowledged
change is in the database when the server is killed with SIGKILL, and a new
server on the same database serves it."""

from conftest import Server
from meridian_client import Client, run, snapshot

PIN = {"type": "point", "id": "pin", "coordinate": {"latitude": 48.85, "longitude": 2.35}, "title": "Paris"}


async def add_pin(url, session):
    alice = await Client.open(url, "alice")
    try:
        await alice.join(session, "Alice", "owner")
        ack, _ = await alice.ok({"type": "annotation.add", "annotation": PIN})
        return ack["seq"]
    finally:
        alice.abort()


def test_an_acknowledged_annotation_survives_sigkill_in_postgres(postgres_server, postgres_url, session_id):
    first = Server("--store", postgres_url)
    try:
        seq = run(add_pin(first.url, session_id))
    finally:
        first.process.kill()  # SIGKILL: no flush, no close frames
        first.process.wait(10)
        first.stop()

    # Acknowledged means committed: the row is in PostgreSQL, not only in the killed process.
    stored = postgres_server.psql(postgres_url, f"SELECT seq, fence FROM sessions WHERE id = '{session_id}'")
    assert stored == f"{seq}|0"
    assert postgres_server.psql(postgres_url, f"SELECT id FROM annotations WHERE session_id = '{session_id}'") == "pin"

    second = Server("--store", postgres_url)
    try:
        state = run(snapshot(second.url, session_id))
        assert [(a["id"], a.get("title")) for a in state["annotations"]] == [("pin", "Paris")]
        assert second.alive()
    finally:
        second.stop()
