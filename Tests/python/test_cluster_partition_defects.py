"""Cluster faults that partitions showed (test_cluster_partitions.py found them), each reduced
to one fault on hosts of their own (netns_fixture.py).

1. An owner whose link to Redis is slow (350 ms) relays a large welcome to another node's
   client: its publisher's writes may time out and lose what they carried. The client used to
   get the welcome's first fragment only; now a message leaves the owner whole, so the client
   gets the whole welcome, or nothing and a close with 4012 once the edge has waited 16 s for
   an answer, and joins again.
2. An owner cut off from Redis stops applying and acknowledging writes within three quarters of
   its lease time (a lease watch, whatever the keeper's blocked Redis call does), before
   another node may take the session over.
3. A deposed owner's commit still in flight when another node loads the session is either read
   by the new owner or refused: the new owner's fencing number is stored as it loads.
4. After the owner's link flapped (down and up for about a second, three times: the owner keeps
   its lease), a member connected at another node that the owner let go is closed with 4012
   at its next request, and joins again.
"""

import asyncio
import json
import socket
import time

import pytest
from websockets.exceptions import ConnectionClosed

from meridian_client import Client, Closed, run
from netns_fixture import netns_cluster  # noqa: F401 (the fixture)
from raw_websocket import CLOSE, TEXT, RawWebSocket

SESSION = "defect"


def point(id):
    return {"id": id, "type": "point", "coordinate": {"latitude": 48.85, "longitude": 2.35}}


async def join(net, node, name, session=SESSION, role="editor", hidden=False, attempts=20):
    """Joins at `node`; a join closed with 4012 (the session moving between nodes) is tried again."""
    for attempt in range(attempts):
        c = await Client.open(node.url, name, validate=False)
        try:
            await c.join(session, role="viewer" if hidden else role, hidden=hidden,
                         token=net.token(name, role="dashboard" if hidden else role))
            return c
        except (Closed, ConnectionClosed) as closed:
            code = closed.code if isinstance(closed, Closed) else (closed.rcvd.code if closed.rcvd else None)
            if code != 4012 or attempt == attempts - 1:
                raise
        await asyncio.sleep(0.25)  # a client's reconnect pace
    raise AssertionError("unreachable")


def round_to(seconds):
    return round(seconds, 2)


def local_alive(client):
    return client.close_code is None


async def write_until(client, stop, prefix, acks, pace=0.02, timeout=20):
    """Adds annotations until `stop` or the connection ends; appends (id, sent, received) of each ack."""
    k = 0
    while not stop.is_set():
        k += 1
        sent = time.monotonic()
        try:
            answer, _ = await client.request({"type": "annotation.add", "annotation": point(f"{prefix}-{k}")}, timeout=timeout)
        except Exception:  # closed or unanswered: this writer is done
            return
        if answer["type"] == "ack":
            acks.append((f"{prefix}-{k}", sent, time.monotonic()))
        await asyncio.sleep(pace)


def test_a_join_relayed_from_an_owner_with_a_slow_redis_link_gets_a_whole_welcome_or_a_close(netns_cluster):
    net = netns_cluster
    owner, edge = net.nodes[0], net.nodes[1]

    def joiner():
        """A join at the edge, read frame by frame for 20 s: longer than the edge's 16 s limit for another
        node's answer. Returns (outcome, frames)."""
        ws = RawWebSocket(edge.ip, edge.port)
        status, _, _ = ws.upgrade()
        assert status == 101
        ws.send_frame(TEXT, json.dumps({"type": "join", "ref": 1, "session": SESSION, "role": "editor",
                                        "token": net.token("joiner")}).encode())
        deadline = time.monotonic() + 20
        frames, outcome = [], "nothing"
        while time.monotonic() < deadline:
            ws.sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                got = ws.read_frame()
            except socket.timeout:
                break
            if got is None:
                outcome = "connection ended without a close frame"
                break
            fin, opcode, payload = got
            frames.append((fin, opcode, len(payload)))
            if opcode == CLOSE:
                outcome = "closed"
                break
            if fin:
                outcome = "whole message"
                break
            outcome = "first fragments only"
        ws.close()
        return outcome, frames

    async def scenario():
        member = await join(net, owner, "member")  # stays joined at the owner, reading
        for k in range(1000):  # a welcome of about 290 KB, in fragments: many round trips to Redis
            await member.ok({"type": "annotation.add", "annotation": point(f"pre-{k}")})
        assert net.owner(SESSION) is owner
        await asyncio.to_thread(net.degrade, owner, 350, 0.0, 60, net.redis_ip)
        result = await asyncio.to_thread(joiner)
        await member.close()
        return result
    outcome, frames = run(scenario(), timeout=90)
    print(f"\njoin at {edge.name}: {outcome}; frames (fin, opcode, bytes) {frames}")
    assert outcome in ("whole message", "closed"), \
        f"the join at {edge.name} (session owned by {owner.name}, whose packets to Redis take 350 ms) got {outcome} " \
        f"within 20 s: frames (fin, opcode, bytes) {frames}; {owner.name}'s log: {owner.log_text()[-1200:]}"


def test_an_owner_cut_from_redis_stops_writing_within_three_quarters_of_its_lease(netns_cluster):
    net = netns_cluster
    owner = net.nodes[0]
    ttl = net.lease_ttl

    async def scenario():
        c = await join(net, owner, "writer")
        assert net.owner(SESSION) is owner
        stop, acks = asyncio.Event(), []
        task = asyncio.create_task(write_until(c, stop, "w", acks))
        await asyncio.sleep(1)
        # When the lease runs out if it is not renewed again: from its remaining time in Redis.
        expiry = None
        key = f"meridian:{{{SESSION}}}:lease"
        for _ in range(50):  # 0.5 s of samples, then the cut
            left = await asyncio.to_thread(net.redis.command, "PTTL", key)
            expiry = max(expiry or 0, time.monotonic() + left / 1000)
            await asyncio.sleep(0.01)
        cut_at = time.monotonic()
        await asyncio.to_thread(net.cut, owner, True, False)
        # Renewals sent before the cut may still have landed: follow the expiry until the key is gone.
        while time.monotonic() < cut_at + 2 * ttl + 1:
            left = await asyncio.to_thread(net.redis.command, "PTTL", key)
            if left < 0:
                break
            expiry = max(expiry, time.monotonic() + left / 1000)
            await asyncio.sleep(0.01)
        await asyncio.sleep(1)
        stop.set()
        await asyncio.wait_for(task, 25)
        c.abort()
        return cut_at, expiry, acks

    cut_at, expiry, acks = run(scenario(), timeout=90)
    last_renewal = expiry - ttl
    sent, received = acks[-1][1], acks[-1][2]
    print(f"\nlast renewal {last_renewal - cut_at:+.3f} s from the cut; last write the owner acknowledged sent "
          f"{sent - last_renewal:.3f} s after it (acknowledged at {received - last_renewal:.3f} s); lease ran out at {ttl:.3f} s")
    # Three quarters of the lease, and 0.1 s for the write's own way: the owner stops applying commands by then.
    assert sent - last_renewal < ttl * 3 / 4 + 0.1, \
        f"{owner.name}, cut off from Redis, applied a write sent {sent - last_renewal:.2f} s after its last renewal " \
        f"(acknowledged at {received - last_renewal:.2f} s); its lease ran out in Redis at {ttl:.2f} s, and it should have " \
        f"given the session up at {ttl * 3 / 4:.2f} s"


def test_a_deposed_owners_commit_in_flight_is_refused_once_another_node_loaded_the_session(netns_cluster):
    net = netns_cluster
    old, new, third = net.nodes

    async def scenario():
        writers = [await join(net, old, f"w{i}") for i in range(3)]
        assert net.owner(SESSION) is old
        stop, acks = asyncio.Event(), []
        tasks = [asyncio.create_task(write_until(w, stop, f"w{i}", acks)) for i, w in enumerate(writers)]
        await asyncio.sleep(1)
        # The old owner loses Redis (so its lease) while its commits crawl to PostgreSQL: 1.2 s each way out,
        # below the 2 s after which PostgreSQL ends a transaction left idle.
        await asyncio.to_thread(net.degrade, old, 1200, 0.0, 60, net.postgres_ip)
        await asyncio.to_thread(net.cut, old, True, False)
        cut_at = time.monotonic()
        taken = None
        while taken is None and time.monotonic() < cut_at + 15:
            c = None
            try:
                c = await Client.open(new.url, "taker", validate=False)
                answer, _ = await c.request({"type": "join", "session": SESSION, "role": "editor",
                                             "token": net.token("taker")}, timeout=10)
                if answer["type"] == "welcome":
                    taken = (c, answer, time.monotonic())
                    break
            except Exception:  # refused or closed meanwhile: try again
                pass
            if c is not None:
                c.abort()
            await asyncio.sleep(0.1)  # a client's retry pace
        assert taken, "the other node never took the session over"
        taker, welcome, at = taken
        loaded = {a["id"] for a in welcome["snapshot"]["annotations"]}
        await asyncio.sleep(8)  # the old owner's commits in flight land meanwhile
        stop.set()
        await asyncio.gather(*tasks)
        for w in writers:
            w.abort()
        await asyncio.to_thread(net.heal_all)
        # The new owner's first write stores its fence; a last write commits whatever is pending.
        for k in range(2):
            answer, _ = await taker.request({"type": "annotation.add", "annotation": point(f"taker-{k}")}, timeout=20)
        live = {a["id"] for a in (await join(net, third, "watcher", hidden=True)).welcome["snapshot"]["annotations"]}
        stored = set(net.postgres.psql(net.store_url, f"SELECT id FROM annotations WHERE session_id = '{SESSION}'").split())
        # Another failover: the session is loaded again, from PostgreSQL.
        await asyncio.to_thread(net.isolate, new)
        await asyncio.sleep(net.lease_ttl + 1)
        reloaded = None
        for _ in range(50):
            try:
                reloaded = {a["id"] for a in (await join(net, third, "reader", hidden=True)).welcome["snapshot"]["annotations"]}
                break
            except Exception:  # the session is moving: try again
                await asyncio.sleep(0.2)
        await asyncio.to_thread(net.heal_all)
        return acks, loaded, live, stored, reloaded, at - cut_at

    acks, loaded, live, stored, reloaded, took_over = run(scenario(), timeout=120)
    acked = {a[0] for a in acks}
    behind = sorted(stored - live)
    resurrected = sorted((reloaded or set()) - live)
    print(f"\nnew owner served {took_over:.2f} s after the cut; stored but not in the running session: {behind}; "
          f"back after the next load: {resurrected}; of them acknowledged: {sorted(set(behind) & acked)}")
    assert not behind, \
        f"{len(behind)} changes of the deposed owner {old.name} were stored after {new.name} loaded the session " \
        f"({new.name}'s running session lacks them; acknowledged ones: {sorted(set(behind) & acked)}): {behind[:10]}; " \
        f"after another failover the session shows {len(resurrected)} annotations its last owner never had: {resurrected[:10]}"


def test_a_member_at_an_edge_is_served_again_or_closed_after_the_owners_link_flapped(netns_cluster):
    net = netns_cluster
    owner, edge = net.nodes[0], net.nodes[1]

    async def scenario():
        local = await join(net, owner, "local")
        assert net.owner(SESSION) is owner
        member = await join(net, edge, "member")
        await member.ok({"type": "annotation.add", "annotation": point("before")})
        # Up to five rounds (it does not happen every time): down and up three times, each state 0.6-1 s (less
        # than three quarters of the lease: the owner keeps the session), under writes; then the member writes.
        member_at = edge
        for round in range(5):
            current = net.owner(SESSION) or owner  # the session may have moved in an earlier round
            if member_at is current:
                member_at = next(n for n in net.nodes if n is not current)
                member = await join(net, member_at, f"member-r{round}")
            stop, acks = asyncio.Event(), []
            writing = [asyncio.create_task(write_until(c, stop, f"{c.name}-{round}", acks, timeout=5)) for c in (local, member)]
            await asyncio.to_thread(net.flap, current, 3, 0.6, 1.0)
            stop.set()
            await asyncio.gather(*writing)
            healed = time.monotonic()
            answers, outcome, detail = [], "neither", None
            k = 0
            while time.monotonic() < healed + 15:
                k += 1
                try:
                    answer, _ = await member.request({"type": "annotation.add", "annotation": point(f"after-{round}-{k}")}, timeout=5)
                except (Closed, ConnectionClosed) as closed:  # told to join again: served as it should be
                    outcome, detail = "closed", getattr(closed, "code", None) or getattr(closed.rcvd, "code", None)
                    break
                except asyncio.TimeoutError:
                    answers.append("unanswered within 5 s")
                    continue
                if answer["type"] == "ack":
                    outcome, detail = "acknowledged", round_to(time.monotonic() - healed)
                    break
                answers.append(answer.get("code"))
                await asyncio.sleep(0.5)  # a client's retry pace
            if outcome == "neither":
                return outcome, round, answers, net.owner(SESSION)
            if outcome == "closed":  # served correctly: join again for the next round
                member = await join(net, member_at, f"member{round}")
            if not local_alive(local):
                local = await join(net, net.owner(SESSION) or owner, f"local{round}")
        return outcome, detail, answers, net.owner(SESSION)

    outcome, detail, answers, owner_now = run(scenario(), timeout=240)
    print(f"\nafter the heal: {outcome} ({detail}); answers: {answers[:8]}; owner {owner_now}")
    assert outcome in ("acknowledged", "closed"), \
        f"15 s after the owner's link came back (round {detail}) a member at another node is neither served nor closed: " \
        f"its writes were answered {answers[:10]}; the session's owner is {owner_now}"
