"""Each session's persisted event log over the HTTP API (GET /api/sessions/{id}/events):
entries with wall-clock times, checkpoints, paging, retention by count and age, the
log across a restart and after a delete; the overview's names and last activity;
a hidden join that names no session creates none."""

import asyncio
import json
import time
import urllib.request

import jsonschema
import yaml

from conftest import REPO, Server
from dashboard_support import api, flag, free_port
from meridian_client import Client, members, owner_makes, run
from test_config import meridian, write_config


OPENAPI = yaml.safe_load((REPO / "Protocol" / "openapi.yaml").read_text())
PAGE = jsonschema.Draft202012Validator({"$ref": "#/components/schemas/EventLogPage", "components": OPENAPI["components"]})


async def add_flags(url, session, count):
    """Alice, the owner, adds the flags p0, p1, … (`count` of them) to `session` and leaves; the
    seq of a ping after the last add."""
    async with members(url, session, ("alice", "owner")) as (alice,):
        for i in range(count):
            await alice.ok({"type": "annotation.add", "annotation": flag(f"p{i}")})
        ack, _ = await alice.ping()
        return ack["seq"]


def entries(server, session, after=0, limit=1000):
    """One page, checked against openapi.yaml."""
    status, body = api(server, f"/api/sessions/{session}/events?after={after}&limit={limit}")
    assert status == 200, body
    PAGE.validate(body)
    return body


def all_entries(server, session):
    out, after = [], 0
    while True:
        page = entries(server, session, after)
        out += page["entries"]
        after = page["next"]
        if not page["more"]:
            return out


def wait_for(condition, what, timeout=10):
    """Polls `condition` (the log is written on its own thread) until it holds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)


def events_of(log):
    return [e["event"] for e in log if "event" in e]


def test_the_log_holds_every_discrete_event_with_times_and_a_checkpoint(server, session_id):
    started = time.time() * 1000

    async def scenario():
        async with members(server.url, session_id, ("alice", "owner"), ("bob", "editor")) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await bob.ok({"type": "drag", "id": "flag", "state": "starting"})
            await bob.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 48.86, "longitude": 2.30}})
            await bob.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 48.87, "longitude": 2.31}})
            ack, _ = await bob.ok({"type": "drag", "id": "flag", "state": "ending"})
            return ack["seq"], alice.participant, bob.participant

    last, alice, bob = run(scenario())
    log = wait_for(lambda: (lambda l: l if any(e.get("seq") == last and "event" in e for e in l) else None)(all_entries(server, session_id)),
                   "the drag's last event in the log")
    positions = [e["position"] for e in log]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert all(started - 1000 <= e["time"] <= time.time() * 1000 + 1000 for e in log)
    assert len({e["epoch"] for e in log}) == 1
    events = events_of(log)
    # Discrete events only, in seq order: the transient second move is not logged
    # (the participant.left events of the two closing connections may follow).
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= last, seqs
    events = events[:last]
    kinds = [(e["type"], e.get("state")) for e in events]
    assert kinds == [("participant.joined", None), ("participant.joined", None), ("annotation.added", None),
                     ("drag", "starting"), ("drag", "dragging"), ("drag", "ending"), ("drag", "none")], kinds
    assert events[-1]["participant"] == bob and events[-1]["coordinate"] == {"latitude": 48.87, "longitude": 2.31}
    # The first event is followed by a checkpoint: the snapshot as of its seq.
    first_checkpoint = next(e for e in log if "snapshot" in e)
    assert first_checkpoint["seq"] == 1 and log.index(first_checkpoint) == 1
    assert [p["id"] for p in first_checkpoint["snapshot"]["participants"]] == [alice]


def test_paging_follows_after_before_order_time_and_limit_and_refuses_bad_parameters(server, session_id):
    # Alice's close adds her participant.left after the ping's seq: wait for it too, or it may
    # land between the full read and the pages (it reaches the session's thread on its own way).
    last = run(add_flags(server.url, session_id, 6)) + 1
    everything = wait_for(lambda: (lambda l: l if len(events_of(l)) >= last else None)(all_entries(server, session_id)), "every event")
    pages, after = [], 0
    while True:
        page = entries(server, session_id, after, limit=3)
        assert len(page["entries"]) <= 3 and page["session"] == session_id
        pages.append(page["entries"])
        if not page["more"]:
            assert page["next"] == (page["entries"][-1]["position"] if page["entries"] else after)
            break
        after = page["next"]
    assert [e for p in pages for e in p] == everything
    assert len(pages) == -(-len(everything) // 3)
    # Newest first: each page's next is the following page's before.
    newest, query = [], "order=newest&limit=3"
    while True:
        status, page = api(server, f"/api/sessions/{session_id}/events?{query}")
        assert status == 200, page
        PAGE.validate(page)
        newest += page["entries"]
        if not page["more"]:
            break
        query = f"order=newest&limit=3&before={page['next']}"
    assert newest == everything[::-1]
    # A time range, oldest or newest first, within positions.
    since, until = everything[1]["time"], everything[-2]["time"]
    inside = [e for e in everything if since <= e["time"] < until]
    for order, expected in (("oldest", inside), ("newest", inside[::-1])):
        status, page = api(server, f"/api/sessions/{session_id}/events?since={since}&until={until}&order={order}&limit=1000")
        assert status == 200 and page["entries"] == expected and not page["more"], (order, page)
    first, last = everything[0]["position"], everything[-1]["position"]
    status, page = api(server, f"/api/sessions/{session_id}/events?after={first}&before={last}&limit=1000")
    assert page["entries"] == everything[1:-1]
    for query, field in (("after=-1", "after"), ("limit=0", "limit"), ("limit=1001", "limit"), ("before=-3", "before"), ("after=x", "after"),
                         ("since=soon", "since"), ("until=1.5", "until"), ("order=latest", "order"), ("order=newest&order=oldest", "order")):
        status, body = api(server, f"/api/sessions/{session_id}/events?{query}")
        assert status == 400 and body["error"] == "invalid_field" and body["field"] == field, (query, body)
    status, body = api(server, "/api/sessions/never-seen-here/events")
    assert status == 404 and body["error"] == "not_found", body
    req = urllib.request.Request(f"http://{server.host}:{server.port}/api/sessions/{session_id}/events", method="DELETE")
    try:
        urllib.request.urlopen(req)
        raise AssertionError("DELETE on the log was accepted")
    except urllib.error.HTTPError as e:
        assert e.code == 405


def test_retention_keeps_the_newest_entries_of_a_session(start_server, session_id):
    server = start_server("--event-log-max-entries", "5")

    last = run(add_flags(server.url, session_id, 20))
    # Alice's participant.left follows her last add.
    log = wait_for(lambda: (lambda l: l if l and l[-1].get("event", {}).get("type") == "participant.left" and len(l) <= 5 else None)(
        all_entries(server, session_id)), "the log trimmed to its newest five")
    assert [e["event"]["seq"] for e in log if "event" in e][-1] == last + 1


def test_retention_by_age_empties_an_idle_log(start_server, session_id):
    server = start_server("--event-log-max-age", "1")

    run(owner_makes(server.url, session_id, {"type": "annotation.add", "annotation": flag()}))
    wait_for(lambda: len(all_entries(server, session_id)) >= 3, "the entries")
    wait_for(lambda: all_entries(server, session_id) == [], "entries older than a second removed")


def test_the_log_survives_a_restart_and_goes_with_a_deleted_session(session_id, tmp_path):
    port = free_port()
    data = str(tmp_path / "data")
    server = Server("--port", str(port), "--data-dir", data)
    try:
        run(owner_makes(server.url, session_id, {"type": "annotation.add", "annotation": flag()}))
        before = wait_for(lambda: (lambda l: l if any(e.get("event", {}).get("type") == "participant.left" for e in l) else None)(
            all_entries(server, session_id)), "the first life's events")
        server.stop()
        server = Server("--port", str(port), "--data-dir", data)
        assert all_entries(server, session_id) == before

        async def second():
            bob = await Client.open(server.url, "bob")
            await bob.join(session_id, "Bob", "owner")
            await bob.close()

        run(second())
        after = wait_for(lambda: (lambda l: l if len(l) > len(before) + 2 else None)(all_entries(server, session_id)), "the second life's events")
        assert after[:len(before)] == before
        assert after[-1]["position"] > before[-1]["position"] and after[-1]["epoch"] != before[-1]["epoch"]
        req = urllib.request.Request(f"http://{server.host}:{server.port}/api/sessions/{session_id}", method="DELETE")
        with urllib.request.urlopen(req) as r:
            assert r.status == 204
        wait_for(lambda: api(server, f"/api/sessions/{session_id}/events")[0] == 404, "the log removed with the session")
    finally:
        server.stop()


def test_the_log_can_be_turned_off(start_server, session_id):
    server = start_server("--event-log-max-entries", "0")
    status, body = api(server, f"/api/sessions/{session_id}/events")
    assert status == 404 and "turned off" in body["message"], body


def test_event_log_settings_come_from_file_environment_and_flags():
    config = write_config({"eventLogMaxAge": 60, "eventLogMaxEntries": 7})
    result = meridian("--config", config, "--print-config", env={"MERIDIAN_EVENT_LOG_MAX_ENTRIES": "9"})
    assert result.returncode == 0, result.stderr
    effective = json.loads(result.stdout)
    assert effective["eventLogMaxAge"] == 60 and effective["eventLogMaxEntries"] == 9
    result = meridian("--event-log-max-entries=-1", "--print-config")
    assert result.returncode != 0 and "eventLogMaxEntries must not be negative" in result.stderr


def test_the_overview_names_participants_and_their_last_activity(server, session_id):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner"), ("bob", "editor"),
                           ("wall", "viewer", {"hidden": True})) as (alice, bob, wall):
            watcher = await Client.open(server.url, "watcher")
            try:
                before = time.time() * 1000
                await alice.ok({"type": "annotation.add", "annotation": flag()})
                await watcher.ok({"type": "overview.watch"})

                def mine(m):
                    return next((s for s in m.get("sessions", []) if s["session"] == session_id), None) if m["type"] == "overview" else None

                m, _ = await watcher.until(lambda m: mine(m) is not None)
                entry = mine(m)
                assert entry["names"] == ["Alice", "Bob"]
                assert before - 1000 <= entry["lastActivity"] <= time.time() * 1000 + 1000
            finally:
                await watcher.close()

    run(scenario())


def test_a_hidden_join_never_creates_a_session(server, session_id):
    async def scenario():
        wall = await Client.open(server.url, "wall")
        alice = await Client.open(server.url, "alice")
        try:
            answer, _ = await wall.request({"type": "join", "session": session_id, "name": "Wall", "role": "viewer", "hidden": True})
            assert answer["type"] == "error" and answer["code"] == "session_not_found", answer
            assert session_id in answer["message"]
            assert api(server, f"/api/sessions/{session_id}")[0] == 404
            # The connection stays usable: once the session exists, the same join works.
            await alice.join(session_id, "Alice", "owner")
            welcome = await wall.join(session_id, "Wall", "viewer", hidden=True)
            assert [p["name"] for p in welcome["snapshot"]["participants"]] == ["Alice"]
        finally:
            await wall.close()
            await alice.close()

    run(scenario())
