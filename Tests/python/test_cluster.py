"""Three Meridian nodes on one Redis and one PostgreSQL, with a session's members
on different nodes: convergence and one order, drag races and resume across nodes;
the owner killed under load (no acknowledged change lost, service back within 5 s);
Redis and PostgreSQL going away and coming back; a paused owner that cannot write
once it wakes up."""

import asyncio
import time

import pytest
from websockets.exceptions import ConnectionClosed

from cluster_fixture import Cluster
from meridian_client import Client, Closed, run, snapshot

LEASE_TTL = 2


@pytest.fixture
def cluster(redis, postgres_url):
    c = Cluster(redis, postgres_url, count=3, lease_ttl=LEASE_TTL)
    yield c
    crashed = [n for n in c.nodes if not n.alive()]
    c.close()
    assert not crashed, f"a node exited during the test: {crashed[0].log_text()[-3000:]}"


async def settled_snapshot(cluster, session, timeout=15):
    """The session's snapshot once it has an owner again (a join meanwhile may meet 4012)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await snapshot(cluster.nodes[0].url, session)
        except (Closed, ConnectionClosed, AssertionError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)  # a retry pace while the session moves to its new owner


async def join_when_served(url, session, name, role, timeout):
    """Joins at `url` once the session is served again (an owner that is gone or paused keeps
    it until its lease runs out: a join routed there meanwhile is closed with 4012)."""
    deadline = time.monotonic() + timeout
    while True:
        c = await Client.open(url, name)
        try:
            answer, _ = await c.request({"type": "join", "session": session, "name": name, "role": role}, timeout=timeout)
            if answer["type"] == "welcome":
                c.welcome = answer
                return c
        except (Closed, ConnectionClosed):
            pass
        await c.close()
        assert time.monotonic() < deadline, f"{name}: the session was not served again within {timeout} s"
        await asyncio.sleep(0.1)  # a retry pace while the session moves to its new owner


def point(id, lat=52.5, lon=13.4, **extra):
    return {"id": id, "type": "point", "coordinate": {"latitude": lat, "longitude": lon}, "draggable": True, **extra}


def discrete(log):
    return [(m["seq"], m["type"], m.get("id") or m.get("annotation", {}).get("id"))
            for m in log if "seq" in m and not m.get("transient") and m["type"] not in ("ack", "error", "welcome", "live")]


def test_members_on_three_nodes_converge_in_one_order(cluster, session_id):
    async def scenario():
        clients = []
        for i in range(6):
            c = await Client.open(cluster.nodes[i % 3].url, f"m{i}")
            await c.join(session_id, f"M{i}", "editor")
            clients.append(c)

        async def edit(i, c):
            for k in range(8):
                await c.ok({"type": "annotation.add", "annotation": point(f"a{i}-{k}", 52 + k / 10, 13 + i / 10)})
                await c.ok({"type": "annotation.update", "id": f"a{i}-{k}", "changes": {"title": f"t{i}-{k}"}})
        await asyncio.gather(*(edit(i, c) for i, c in enumerate(clients)))
        # Everyone reads up to the last seq.
        for c in clients:
            await c.ping()
        last = max(m["seq"] for c in clients for m in c.log if "seq" in m)
        for c in clients:
            while max(m["seq"] for m in c.log if "seq" in m) < last:
                await c.recv()
        orders = [discrete(c.log) for c in clients]
        for c, order in zip(clients, orders):
            seqs = [s for s, _, _ in order]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"{c.name}: events out of order or repeated"
        # The events every member saw after the last join are the same, in the same order.
        common_start = max(c.welcome["seq"] for c in clients)
        tails = [[e for e in order if e[0] > common_start] for order in orders]
        assert all(t == tails[0] for t in tails), "members saw different orders"
        assert len([e for e in tails[0] if e[1] == "annotation.added"]) == 48
        views = [await snapshot(node.url, session_id) for node in cluster.nodes]
        assert all(v["annotations"] == views[0]["annotations"] for v in views)
        assert sorted(a["title"] for a in views[0]["annotations"]) == sorted(f"t{i}-{k}" for i in range(6) for k in range(8))
        for c in clients:
            await c.close()
    run(scenario())


def test_a_drag_race_across_nodes_has_one_winner(cluster, session_id):
    async def scenario():
        owner = await Client.open(cluster.nodes[0].url, "owner")
        await owner.join(session_id, "Owner", "owner")
        await owner.ok({"type": "annotation.add", "annotation": point("pin")})
        racers = []
        for i in (1, 2):
            c = await Client.open(cluster.nodes[i].url, f"racer{i}")
            await c.join(session_id, f"Racer{i}", "editor")
            racers.append(c)
        answers = await asyncio.gather(*(c.request({"type": "drag", "id": "pin", "state": "starting"}) for c in racers))
        kinds = sorted(a["type"] for a, _ in answers)
        assert kinds == ["ack", "error"], answers
        refused = next(a for a, _ in answers if a["type"] == "error")
        assert refused["code"] == "drag_conflict"
        winner = racers[[a["type"] for a, _ in answers].index("ack")]
        await winner.ok({"type": "drag", "id": "pin", "state": "dragging", "coordinate": {"latitude": 52.6, "longitude": 13.5}})
        await winner.ok({"type": "drag", "id": "pin", "state": "ending", "coordinate": {"latitude": 52.7, "longitude": 13.6}})
        ended, _ = await owner.until(lambda m: m["type"] == "drag" and m["state"] == "none")
        assert ended["coordinate"] == {"latitude": 52.7, "longitude": 13.6}
        views = [await snapshot(node.url, session_id) for node in cluster.nodes]
        assert all(v["annotations"][0]["coordinate"] == {"latitude": 52.7, "longitude": 13.6} for v in views)
        for c in [owner, *racers]:
            await c.close()
    run(scenario())


def test_a_member_resumes_at_another_node_with_exactly_what_it_missed(cluster, session_id):
    async def scenario():
        writer = await Client.open(cluster.nodes[0].url, "writer")
        await writer.join(session_id, "Writer", "editor")
        reader = await Client.open(cluster.nodes[1].url, "reader")
        welcome = await reader.join(session_id, "Reader", "viewer")
        await writer.ok({"type": "annotation.add", "annotation": point("before")})
        seen, _ = await reader.until(lambda m: m["type"] == "annotation.added")
        reader.abort()
        await reader.close()
        for k in range(3):
            await writer.ok({"type": "annotation.add", "annotation": point(f"missed-{k}")})
        back = await Client.open(cluster.nodes[2].url, "reader-again")
        answer = await back.join(session_id, "Reader", "viewer", resume={"epoch": welcome["epoch"], "seq": seen["seq"]})
        assert answer["resumed"] is True, answer
        replay, _ = await back.until(lambda m: m["type"] == "live")
        added = [m["annotation"]["id"] for m in back.log if m["type"] == "annotation.added"]
        assert added == ["missed-0", "missed-1", "missed-2"]
        for c in (writer, back):
            await c.close()
    run(scenario())


class Writer:
    """A client that keeps adding annotations with ids of its own, through any live node,
    joining again (with resume) whenever its connection ends; records what was acknowledged."""

    def __init__(self, cluster, session, name, start):
        self.cluster, self.session, self.name = cluster, session, name
        self.start = start
        self.acked = {}  # id -> latitude, as acknowledged
        self.epoch, self.seq = None, 0
        self.client = None
        self.outages = []  # seconds from losing the connection to the next acknowledged write
        self.lost_at = None
        self.count = 0

    join_timeout = 10
    # How long the writer tries to join again before the test fails: a session that takes no
    # join for this long is a defect to name, not a wait to sit out.
    rejoin_limit = 60

    def candidates(self):
        """The nodes a join may go to: the live ones."""
        return [n for n in self.cluster.nodes if n.alive()]

    async def connect(self):
        turn = self.start
        deadline = time.monotonic() + self.rejoin_limit
        while True:
            assert time.monotonic() < deadline, \
                f"{self.name}: no node welcomed a join for {self.rejoin_limit} s: {self.cluster.describe(self.session)}"
            live = self.candidates()
            node = live[turn % len(live)]
            turn += 1
            try:
                c = await Client.open(node.url, self.name)
                resume = {"epoch": self.epoch, "seq": self.seq} if self.epoch else None
                answer, _ = await c.request({"type": "join", "session": self.session, "name": self.name, "role": "editor",
                                             **({"resume": resume} if resume else {})}, timeout=self.join_timeout)
                if answer["type"] == "welcome":
                    self.client, self.epoch, self.seq = c, answer["epoch"], answer["seq"]
                    return
                await c.close()
            except (Closed, ConnectionClosed, OSError, asyncio.TimeoutError):
                pass
            await asyncio.sleep(0.05)  # between attempts at another node: a retry pace, not a wait for an event

    async def write(self, stop):
        await self.connect()
        while not stop.is_set():
            self.count += 1
            id, lat = f"{self.name}-{self.count}", 50 + (self.count % 1000) / 1000
            try:
                answer, events = await self.client.request({"type": "annotation.add", "annotation": point(id, lat)}, timeout=10)
            except (Closed, ConnectionClosed, OSError, asyncio.TimeoutError):
                self.lost_at = self.lost_at or time.monotonic()
                await self.client.close()
                await self.connect()
                continue
            self.seq = max([self.seq, answer.get("seq", 0)] + [m["seq"] for m in events if "seq" in m and not m.get("transient")])
            if answer["type"] == "ack":
                self.acked[id] = lat
                if self.lost_at is not None:
                    self.outages.append(time.monotonic() - self.lost_at)
                    self.lost_at = None
            else:
                self.lost_at = self.lost_at or time.monotonic()
        await self.client.close()


def test_the_owner_killed_under_load_twenty_times_loses_no_acknowledged_change(cluster, session_id):
    cycles = 20

    async def scenario():
        stop = asyncio.Event()
        writers = [Writer(cluster, session_id, f"w{i}", i) for i in range(3)]
        tasks = [asyncio.create_task(w.write(stop)) for w in writers]
        killed = []
        fence = 0
        for cycle in range(cycles):
            # Wait for a new owner (after the last kill), then for a write of every writer acknowledged by it.
            deadline = time.monotonic() + 15
            while (cluster.owner(session_id) is None or (cluster.fence(session_id) or 0) <= fence) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            owner = cluster.owner(session_id)
            assert owner is not None, f"cycle {cycle}: the session has no owner: {cluster.describe(session_id)}"
            fence = cluster.fence(session_id)
            marks = [len(w.acked) for w in writers]
            while any(len(w.acked) <= m for w, m in zip(writers, marks)) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert all(len(w.acked) > m for w, m in zip(writers, marks)), f"cycle {cycle}: writes did not resume within 15 s"
            assert cluster.owner(session_id) is owner and cluster.fence(session_id) == fence
            cluster.replace(owner)
        stop.set()
        await asyncio.gather(*tasks)
        final = await settled_snapshot(cluster, session_id)
        stored = {a["id"]: a["coordinate"]["latitude"] for a in final["annotations"]}
        lost = {id: lat for w in writers for id, lat in w.acked.items() if stored.get(id) != lat}
        assert not lost, f"{len(lost)} acknowledged changes lost, e.g. {list(lost)[:5]}"
        outages = [o for w in writers for o in w.outages]
        assert outages and max(outages) < 5, f"longest time without service: {max(outages):.2f} s"
        # One new fencing number per new owner: a takeover claims its fence in the store once.
        assert cluster.fence(session_id) == cycles + 1, cluster.describe(session_id)
        return sum(len(w.acked) for w in writers), max(outages)
    acked, longest = run(scenario(), timeout=400)
    print(f"\n{acked} acknowledged writes over {cycles} owner kills; longest gap {longest:.2f} s")


def test_redis_away_for_ten_seconds_then_back(cluster, redis, session_id):
    async def scenario():
        a = await Client.open(cluster.nodes[0].url, "a")
        await a.join(session_id, "A", "editor")
        await a.ok({"type": "annotation.add", "annotation": point("before")})
        redis.stop()
        code, _ = await a.wait_closed(timeout=10)
        assert code == 4012
        started = time.monotonic()
        while time.monotonic() - started < 10:
            assert all(n.alive() for n in cluster.nodes)
            assert not any(cluster.ready(n) for n in cluster.nodes), "a node says it is ready without Redis"
            c = await Client.open(cluster.nodes[1].url, "refused")
            answer, _ = await c.request({"type": "join", "session": session_id, "name": "R", "role": "editor"})
            assert answer["type"] == "error" and answer["code"] == "storage_unavailable", answer
            await c.close()
            await asyncio.sleep(1)  # the outage lasts ten seconds; each second the nodes are asked again
        redis.start()
        deadline = time.monotonic() + 10
        while not all(cluster.ready(n) for n in cluster.nodes) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert all(cluster.ready(n) for n in cluster.nodes)
        b = await Client.open(cluster.nodes[2].url, "b")
        welcome = await b.join(session_id, "B", "editor")
        assert [x["id"] for x in welcome["snapshot"]["annotations"]] == ["before"]
        await b.ok({"type": "annotation.add", "annotation": point("after")})
        await b.close()
    run(scenario())


def test_postgres_restarted_refuses_writes_meanwhile_and_loses_none(cluster, postgres_server, session_id):
    async def scenario():
        a = await Client.open(cluster.nodes[0].url, "a")
        await a.join(session_id, "A", "editor")
        await a.ok({"type": "annotation.add", "annotation": point("before")})
        postgres_server.stop()
        answer, _ = await a.request({"type": "annotation.add", "annotation": point("during")}, timeout=30)
        assert answer["type"] == "error" and answer["code"] == "storage_unavailable", answer
        owner = cluster.owner(session_id)
        assert not cluster.ready(owner), "a node whose store fails says it is ready"
        assert all(n.alive() for n in cluster.nodes)
        postgres_server.start()
        deadline = time.monotonic() + 10
        while not cluster.ready(owner) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert cluster.ready(owner), "the node stayed unready after PostgreSQL came back"
        # The change refused its ack stays in the running session and is written with the next one.
        await a.ok({"type": "annotation.add", "annotation": point("after")}, timeout=30)
        await a.close()
        # Loaded again from PostgreSQL by another node: the owner gives the session up, the
        # next join loads what was committed.
        owner = cluster.owner(session_id)
        cluster.replace(owner)
        b = await join_when_served(cluster.nodes[0].url, session_id, "B", "viewer", timeout=10)
        answer = b.welcome
        assert answer["type"] == "welcome", answer
        assert sorted(x["id"] for x in answer["snapshot"]["annotations"]) == ["after", "before", "during"]
        await b.close()
    run(scenario())


def test_a_paused_owner_cannot_write_once_it_wakes(cluster, postgres_server, postgres_url, session_id):
    async def scenario():
        owner_node = cluster.nodes[0]
        local = await Client.open(owner_node.url, "local")
        await local.join(session_id, "Local", "editor")
        await local.ok({"type": "annotation.add", "annotation": point("first")})
        assert cluster.owner(session_id) is owner_node
        owner_node.pause()
        try:
            # Sent while the owner sleeps: it reads this once it wakes, with a lease gone.
            await local.send({"type": "annotation.add", "annotation": point("stale")})
            # Another node takes the session over once the lease ran out.
            other = await join_when_served(cluster.nodes[1].url, session_id, "Other", "editor", timeout=3 * LEASE_TTL + 5)
            answer = other.welcome
            assert answer["type"] == "welcome", answer
            await other.ok({"type": "annotation.add", "annotation": point("new-owner")})
        finally:
            owner_node.resume()
        # The woken owner does not acknowledge the stale write, and does not store it.
        try:
            while True:
                m = await local.recv(timeout=10)
                assert m["type"] != "ack", f"the stale owner acknowledged a write: {m}"
        except Closed as closed:
            assert closed.code in (4012, 1006), closed
        stored = postgres_server.psql(postgres_url, f"SELECT id FROM annotations WHERE session_id = '{session_id}' ORDER BY id")
        assert stored.split() == ["first", "new-owner"]
        await other.close()
    run(scenario())


def test_an_undo_after_the_owner_was_killed_reverts_the_change_made_before(cluster, session_id):
    """Histories are part of the durable record: a member whose owner node died joins again (at
    another node, naming its earlier participant id) and undoes what it changed before."""
    async def scenario():
        alice = await Client.open(cluster.nodes[0].url, "alice")
        try:
            await alice.join(session_id, "Alice", "editor")
            await alice.ok({"type": "annotation.add", "annotation": point("quay", title="Quay 1")})
            await alice.ok({"type": "annotation.update", "id": "quay", "changes": {"title": "Quay 2"}})
            before = alice.participant
        finally:
            await alice.close()
        owner = cluster.owner(session_id)
        assert owner is not None, cluster.describe(session_id)
        cluster.kill(owner)
        other = next(n for n in cluster.nodes if n.alive())
        back = await join_when_served(other.url, session_id, "Alice", "editor", timeout=20)
        await back.close()
        # The new owner loaded the session with Alice's history: a join naming her id gets it.
        alice = await Client.open(other.url, "alice-again")
        try:
            welcome = await alice.join(session_id, "Alice", "editor", previousParticipant=before)
            assert welcome["participant"] != before, welcome
            _, events = await alice.ok({"type": "undo"})
            mark = next(i for i, e in enumerate(events) if e["type"] == "change.undone")
            assert events[mark]["change"] == "annotation.update" and events[mark + 1]["annotation"]["title"] == "Quay 1", events
            _, events = await alice.ok({"type": "undo"})
            assert any(e["type"] == "annotation.removed" and e["id"] == "quay" for e in events), events
        finally:
            await alice.close()
        assert (await settled_snapshot(cluster, session_id))["annotations"] == []

    run(scenario(), timeout=120)


def test_members_that_asked_for_handover_stay_connected_when_the_owner_is_killed(cluster, session_id):
    """SIGKILL of the owner: members on the other nodes whose join asked for `handover` are not
    closed. Each is told `moved` (with its join's ref), then answered with the new epoch's
    snapshot, holding every acknowledged change, on the same connection; they write on and
    see each other's changes. A member that did not ask is closed with 4012."""
    async def scenario():
        owner_node = cluster.nodes[0]
        owner = await Client.open(owner_node.url, "owner")
        await owner.join(session_id)
        members = []
        for i, node in enumerate(cluster.nodes[1:]):
            c = await Client.open(node.url, f"m{i}")
            await c.join(session_id, ref=f"join-m{i}", handover=True)
            members.append(c)
        plain = await Client.open(cluster.nodes[1].url, "plain")
        await plain.join(session_id)
        await owner.ok({"type": "annotation.add", "annotation": point("pin")})
        epoch = members[0].welcome["epoch"]

        cluster.kill(owner_node)
        code, _ = await plain.wait_closed(timeout=20)
        assert code == 4012
        for i, c in enumerate(members):
            moved, _ = await c.until(lambda m: m["type"] == "moved", timeout=20)
            assert moved["ref"] == f"join-m{i}" and moved["session"] == session_id, moved
            welcome, skipped = await c.answer(f"join-m{i}", timeout=20)
            assert welcome["type"] == "welcome", welcome
            assert not [m for m in skipped if m.get("seq") is not None], f"old-epoch events after moved: {skipped}"
            assert welcome["epoch"] != epoch and welcome["resumed"] is False
            assert [a["id"] for a in welcome["snapshot"]["annotations"]] == ["pin"]
        await members[0].ok({"type": "annotation.add", "annotation": point("quay")})
        added, _ = await members[1].until(lambda m: m["type"] == "annotation.added")
        assert added["annotation"]["id"] == "quay"
        for c in members:
            assert c.close_code is None
            await c.close()
    run(scenario(), timeout=90)
