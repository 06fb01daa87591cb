"""Partitions, not only crashes: three nodes, Redis and PostgreSQL on hosts of their own
(network namespaces, netns_fixture.py), under write load, while links are cut and healed —
one node from Redis only, from PostgreSQL only, from both; the owner from everything; the
owner's packets delayed 200 ms with 20 % loss; the owner's link flapping — then a check of the
whole history in the spirit of Jepsen:

(a) every acknowledged write is in the final state exactly once: in the snapshot read through
    every node, and in PostgreSQL's annotations table;
(b) within one epoch the events every client saw agree (one seq, one event, byte for byte), no
    two acknowledged writes share a seq, each ack's seq is that of its own annotation.added,
    and each writer's acknowledged seqs increase within an epoch: no two owners interleaved;
(c) no write acknowledged by an owner whose lease had ended: the acknowledged writes of every
    epoch survive (fencing); epochs (owners' tenures) are ordered in real time — an operation
    (join or write) whose answer came before another was sent was applied before it, so no two
    epochs may each precede the other; and a snapshot never misses a write acknowledged before
    its join was sent (no stale owner serving).

Writers (two sessions, three writers each, starting at different nodes) add annotations with
ids of their own, one request at a time, each with a timeout, joining again with resume (at the
next node) whenever their connection ends or a request goes unanswered. The summary (ops,
faults per kind, anomalies, unavailability per kind) is printed and written to
artifacts/partitions.json, every ack and epoch to artifacts/partitions-history.json.

Anomalies (a)-(c) fail the test. What the known defects of test_cluster_partition_defects.py
show here is reported apart and does not: unacknowledged writes of a deposed owner stored after
the next owner loaded the session (PostgreSQL then holds annotations the running session lacks),
joins left unanswered and connections failed for a framing error (a welcome relayed cut short),
members an edge keeps connected after their owner dropped them (every request answered
`not_joined`; the writer joins again) and requests another node never answers (the writer
gives up after 20 s and joins again)."""

import asyncio
import os
import json
import random
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from meridian_client import Client, Closed, run
from netns_fixture import netns_cluster  # noqa: F401 (the fixture)

REPO = Path(__file__).resolve().parents[2]
ARTIFACT = REPO / "artifacts" / "partitions.json"
HISTORY = REPO / "artifacts" / "partitions-history.json"  # every ack, epoch and lease change, for a closer look
PROGRESS = REPO / "artifacts" / "partitions-progress.json"  # the faults so far, rewritten after each (kept if the run stops)
SEED = 2113
ROUNDS = int(os.environ.get("MERIDIAN_PARTITION_ROUNDS", "3"))  # each fault kind this many times
FAULT_SECONDS = 3.0       # a cut lasts 1.5 lease times: an owner cut from Redis loses the session meanwhile
DELAY_SECONDS = 4.0       # delay and loss last a little longer: they slow things rather than stop them
FLAPS = 3                 # link cut and healed this many times, each state 0.5-1 s
SETTLE_LIMIT = 25.0       # after healing, every writer acknowledged again within this
OPEN_TIMEOUT = 3.0
JOIN_TIMEOUT = 20.0
WRITE_TIMEOUT = 20.0      # beyond PostgreSQL's 15 s for a server that stops answering
PACE = 0.02               # between a writer's requests
KINDS = ["redis", "postgres", "redis+postgres", "isolate-owner", "delay-loss", "flap-owner"]
RETRYABLE = (Closed, ConnectionClosed, InvalidHandshake, OSError, asyncio.TimeoutError, EOFError)


def point(id):
    return {"id": id, "type": "point", "coordinate": {"latitude": 48.85, "longitude": 2.35}}


class History:
    """Everything the writers observed, and the anomalies found as it was observed."""

    def __init__(self, sessions):
        self.acks = []                                   # dicts: id, session, writer, node, epoch, seq, sent, received
        self.acked_order = {s: [] for s in sessions}     # ids in the order their acks arrived
        self.events = defaultdict(dict)                  # (session, epoch) -> seq -> the event as sent
        self.seq_owner = {}                              # (session, epoch, seq) -> acked id
        self.last_seq = {}                               # (writer, epoch) -> last acknowledged seq
        self.ops = defaultdict(lambda: [float("inf"), float("-inf")])  # (session, epoch) -> [first answer, last send]
        self.anomalies = []
        self.attempts = 0
        self.errors = Counter()
        self.timeouts = []
        self.join_timeouts = []
        self.protocol_errors = []  # connections a client failed for a framing error of the server's (RFC 6455)
        self.known = []            # what the known defects of test_cluster_partition_defects.py showed
        self.dropped_members = []  # requests answered not_joined on a joined connection
        self.closes = Counter()
        self.joins = Counter()
        self.snapshots_checked = 0

    def anomaly(self, kind, **detail):
        self.anomalies.append({"kind": kind, **detail})

    def op(self, session, epoch, sent, received):
        span = self.ops[(session, epoch)]
        span[0] = min(span[0], received)
        span[1] = max(span[1], sent)

    def welcome(self, writer, node, answer, sent, received, acked_before):
        session, epoch = writer.session, answer["epoch"]
        self.joins["resumed" if answer.get("resumed") else "snapshot"] += 1
        self.op(session, epoch, sent, received)
        snapshot = answer.get("snapshot")
        if snapshot is not None:
            # (c) a snapshot holds every write acknowledged before its join was sent.
            ids = {a["id"] for a in snapshot["annotations"]}
            missing = [i for i in self.acked_order[session][:acked_before] if i not in ids]
            self.snapshots_checked += 1
            if missing:
                self.anomaly("stale snapshot", session=session, writer=writer.name, node=node.name, epoch=epoch,
                             missing=len(missing), examples=missing[:5])

    def ack(self, writer, node, epoch, id, answer, events, sent, received):
        seq = answer["seq"]
        record = {"id": id, "session": writer.session, "writer": writer.name, "node": node.name, "epoch": epoch,
                  "seq": seq, "sent": sent, "received": received}
        self.acks.append(record)
        self.acked_order[writer.session].append(id)
        self.op(writer.session, epoch, sent, received)
        # (b) the ack's seq is its own event's, unique in the epoch, and above the writer's previous one.
        own = [m for m in events if m.get("type") == "annotation.added" and m["annotation"]["id"] == id]
        if not own or own[-1]["seq"] != seq:
            self.anomaly("ack without its event", id=id, seq=seq, node=node.name, epoch=epoch,
                         event_seqs=[m["seq"] for m in own])
        key = (writer.session, epoch, seq)
        if key in self.seq_owner:
            self.anomaly("two acknowledged writes share a seq", epoch=epoch, seq=seq, ids=[self.seq_owner[key], id])
        self.seq_owner[key] = id
        previous = self.last_seq.get((writer.name, epoch))
        if previous is not None and seq <= previous:
            self.anomaly("acknowledged seqs not increasing", writer=writer.name, epoch=epoch, seq=seq, previous=previous)
        self.last_seq[(writer.name, epoch)] = seq

    def connection_log(self, session, epoch, log):
        """(b) every discrete event of an epoch is the same for every client that saw it."""
        seen = self.events[(session, epoch)]
        for m in log:
            if "seq" not in m or m.get("transient") or m["type"] in ("ack", "error", "welcome", "live"):
                continue
            text = json.dumps(m, sort_keys=True)
            other = seen.setdefault(m["seq"], text)
            if other != text:
                self.anomaly("two events at one seq", session=session, epoch=epoch, seq=m["seq"], first=other, second=text)


class Writer:
    def __init__(self, net, history, session, name, start):
        self.net, self.history, self.session, self.name = net, history, session, name
        self.turn = start
        self.token = net.token(name)
        self.epoch, self.seq = None, 0
        self.count = 0
        self.client = self.node = None
        self.last_ack = 0.0   # monotonic time of its last acknowledgement

    async def connect(self, stop):
        while not stop.is_set():
            node = self.net.nodes[self.turn % len(self.net.nodes)]
            self.turn += 1
            c = None
            try:
                c = await asyncio.wait_for(Client.open(node.url, self.name, validate=False), OPEN_TIMEOUT)
                resume = {"resume": {"epoch": self.epoch, "seq": self.seq}} if self.epoch else {}
                acked_before = len(self.history.acked_order[self.session])
                sent = time.monotonic()
                answer, _ = await c.request({"type": "join", "session": self.session, "role": "editor", "token": self.token,
                                             **resume}, timeout=JOIN_TIMEOUT)
                if answer["type"] == "welcome":
                    self.history.welcome(self, node, answer, sent, time.monotonic(), acked_before)
                    self.client, self.node, self.epoch, self.seq = c, node, answer["epoch"], answer["seq"]
                    return True
                self.history.errors[f"join:{answer.get('code')}"] += 1
            except RETRYABLE as e:
                if isinstance(e, asyncio.TimeoutError) and c is not None:
                    self.history.join_timeouts.append({"writer": self.name, "node": node.name, "at": time.monotonic()})
                self.closed(c, e)
            if c is not None:
                await self.drop(c)
            await asyncio.sleep(0.05)  # a retry pace between nodes, as a client's backoff
        return False

    def closed(self, c, error):
        if isinstance(error, Closed):
            self.history.closes[error.code] += 1
        sent = getattr(getattr(getattr(c, "ws", None), "protocol", None), "close_sent", None)
        if sent is not None and sent.code == 1002:
            self.history.protocol_errors.append({"writer": self.name, "node": self.node.name if self.node else None,
                                                 "reason": sent.reason, "at": time.monotonic()})

    async def drop(self, c):
        """Abandons a connection at once (no closing handshake to wait for) and files what it saw."""
        try:
            c.abort()
        except Exception:  # already gone
            pass
        try:
            await asyncio.wait_for(c.reader, 2)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            c.reader.cancel()
        if c is self.client:
            self.history.connection_log(self.session, self.epoch, c.log)
            self.client = None
        c.log = []

    async def run(self, stop):
        if not await self.connect(stop):
            return
        while not stop.is_set():
            self.count += 1
            id = f"{self.name}-{self.count}"
            self.history.attempts += 1
            sent = time.monotonic()
            try:
                answer, events = await self.client.request({"type": "annotation.add", "annotation": point(id)},
                                                           timeout=WRITE_TIMEOUT)
            except RETRYABLE as e:
                if isinstance(e, asyncio.TimeoutError):
                    self.history.timeouts.append({"writer": self.name, "id": id, "node": self.node.name, "epoch": self.epoch,
                                                  "at": sent})
                self.closed(self.client, e)
                await self.drop(self.client)
                if not await self.connect(stop):
                    return
                continue
            received = time.monotonic()
            self.seq = max([self.seq, answer.get("seq", 0)] +
                           [m["seq"] for m in events if "seq" in m and not m.get("transient")])
            if answer["type"] == "ack":
                self.history.ack(self, self.node, self.epoch, id, answer, events, sent, received)
                self.last_ack = received
            else:
                self.history.errors[answer.get("code")] += 1
                if answer.get("code") == "not_joined":
                    # The connection is open but no longer in its session, and nothing said so (known defect 4):
                    # as SPEC §9 says, join again.
                    self.history.dropped_members.append({"writer": self.name, "node": self.node.name, "at": received})
                    await self.drop(self.client)
                    if not await self.connect(stop):
                        return
                    continue
            await asyncio.sleep(PACE)
        if self.client is not None:
            await self.drop(self.client)


def longest_gap(times, start, end):
    """Longest time in [start, end] without an element of the sorted `times`."""
    inside = [t for t in times if start <= t <= end]
    points = [start, *inside, end]
    return max(b - a for a, b in zip(points, points[1:]))


def cycles(nodes, edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)
    for v in nodes:
        if v not in index:
            visit(v)
    return found


async def final_snapshot(net, session, node, token, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        c = None
        try:
            c = await asyncio.wait_for(Client.open(node.url, "final", validate=False), OPEN_TIMEOUT)
            answer, _ = await c.request({"type": "join", "session": session, "role": "viewer", "hidden": True,
                                         "token": token}, timeout=10)
            if answer["type"] == "welcome":
                return answer
        except RETRYABLE:
            pass
        finally:
            if c is not None:
                c.abort()
        assert time.monotonic() < deadline, f"no snapshot of {session} through {node.name} within {timeout} s"
        await asyncio.sleep(0.2)  # a retry pace while the session finds its owner


def test_partitions_under_write_load_lose_no_acknowledged_write(netns_cluster, capsys):
    net = netns_cluster
    rng = random.Random(SEED)
    flap_rng = random.Random(SEED + 1)
    sessions = ["part-a", "part-b"]
    history = History(sessions)
    started = time.monotonic()

    async def scenario():
        stop = asyncio.Event()
        writers = [Writer(net, history, s, f"{s}-w{i}", i + k) for k, s in enumerate(sessions) for i in range(3)]
        tasks = [asyncio.create_task(w.run(stop)) for w in writers]
        faults = []
        ownership = []  # (time, session, node, fence) whenever a session's lease changed

        async def watch_leases():
            last = {}
            while not stop.is_set():
                for s in sessions:
                    owner, fence = await asyncio.to_thread(net.lease, s)
                    state = (owner.name if owner else None, fence)
                    if last.get(s) != state:
                        last[s] = state
                        ownership.append((time.monotonic(), s, *state))
                await asyncio.sleep(0.1)  # a sampling period
        watcher = asyncio.create_task(watch_leases())

        async def settled(since, limit=SETTLE_LIMIT):
            """Waits until every writer has an ack for a write sent after `since` and both sessions have an owner."""
            deadline = time.monotonic() + limit
            while time.monotonic() < deadline:
                if all(w.last_ack > since for w in writers) and all(net.owner(s) for s in sessions):
                    return time.monotonic()
                await asyncio.sleep(0.05)  # a bounded poll of the writers' progress
            return None

        assert await settled(time.monotonic(), 30), "the writers never got going: " + "; ".join(
            f"{n.name}: {n.log_text()[-600:]}" for n in net.nodes)
        schedule = []
        for r in range(ROUNDS):
            kinds = KINDS[:]
            rng.shuffle(kinds)
            schedule += [(r, k) for k in kinds]
        for r, kind in schedule:
            await asyncio.sleep(rng.uniform(0, 0.3))  # the fault lands anywhere in the writers' work
            target_session = sessions[r % 2]
            owner = net.owner(target_session) or net.nodes[0]
            if kind in ("redis", "postgres", "redis+postgres") and r == 1:
                # The second time, a node owning neither session if there is one: its clients are served through others.
                owners = {net.owner(s) for s in sessions}
                owner = next((n for n in net.nodes if n not in owners), next(n for n in net.nodes if n is not owner))
            fences = {s: net.lease(s)[1] for s in sessions}
            owned = [s for s in sessions if net.owner(s) is owner]
            t0 = time.monotonic()
            if kind == "flap-owner":
                await asyncio.to_thread(net.flap, owner, FLAPS, 0.5, 1.0, flap_rng)
            else:
                if kind == "isolate-owner":
                    key = await asyncio.to_thread(net.isolate, owner)
                elif kind == "delay-loss":
                    key = await asyncio.to_thread(net.degrade, owner, 200, 0.2)
                else:
                    key = await asyncio.to_thread(net.cut, owner, "redis" in kind, "postgres" in kind)
                await asyncio.sleep(DELAY_SECONDS if kind == "delay-loss" else FAULT_SECONDS)
                await asyncio.to_thread(net.heal, key)
            healed = time.monotonic()
            recovered = await settled(healed)
            end = recovered or time.monotonic()
            gaps = {s: longest_gap(sorted(a["received"] for a in history.acks if a["session"] == s), t0, end) for s in sessions}
            faults.append({"kind": kind, "round": r, "node": owner.name, "at": round(t0 - started, 3),
                           "healed_at": round(healed - started, 3),
                           "owned": owned,
                           "fault_seconds": round(healed - t0, 2), "recovered_after_heal": round(end - healed, 2),
                           "recovered": recovered is not None, "unavailable": round(max(gaps.values()), 2),
                           "unavailable_per_session": {s: round(g, 2) for s, g in gaps.items()},
                           "fences": {s: [fences[s], net.lease(s)[1]] for s in sessions}})
            if recovered is None:
                history.anomaly("not recovered", fault=kind, node=owner.name, limit=SETTLE_LIMIT,
                                behind=[w.name for w in writers if w.last_ack <= healed],
                                leases={s: str(net.lease(s)) for s in sessions},
                                ready={n.name: n.ready() for n in net.nodes})
            PROGRESS.parent.mkdir(exist_ok=True)
            PROGRESS.write_text(json.dumps({"faults": faults, "anomalies": history.anomalies}, indent=1, default=str))
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), WRITE_TIMEOUT + JOIN_TIMEOUT + 10)
        watcher.cancel()
        return faults, ownership

    faults, ownership = run(scenario(), timeout=60 + 90 * ROUNDS)
    net.heal_all()

    async def final():
        token = net.token("final-viewer", role="dashboard")
        # A last acknowledged write per session commits whatever a refused commit left in the running session.
        closing = [Writer(net, history, s, f"{s}-last", 0) for s in sessions]
        for w in closing:
            stop = asyncio.Event()
            assert await asyncio.wait_for(w.connect(stop), 30)
            answer, events = await w.client.request({"type": "annotation.add", "annotation": point(f"{w.name}-1")}, timeout=20)
            assert answer["type"] == "ack", answer
            history.ack(w, w.node, w.epoch, f"{w.name}-1", answer, events, time.monotonic(), time.monotonic())
            await w.drop(w.client)
        return {s: [await final_snapshot(net, s, n, token) for n in net.nodes] for s in sessions}
    views = run(final(), timeout=120)

    # (a) every acknowledged write in the final state exactly once, through every node and in PostgreSQL.
    acked = defaultdict(set)
    for a in history.acks:
        acked[a["session"]].add(a["id"])
    by_epoch = defaultdict(list)
    for a in history.acks:
        by_epoch[(a["session"], a["epoch"])].append(a["id"])
    unacked_present = 0
    lost_by_epoch = Counter()
    for s in sessions:
        rows = net.postgres.psql(net.store_url, f"SELECT id, count(*) FROM annotations WHERE session_id = '{s}' GROUP BY id")
        stored = Counter({line.split("|")[0]: int(line.split("|")[1]) for line in rows.splitlines() if line})
        for node, view in zip(net.nodes, views[s]):
            counts = Counter(a["id"] for a in view["snapshot"]["annotations"])
            missing = sorted(acked[s] - set(counts))
            twice = sorted(i for i, n in counts.items() if n > 1)
            if missing:
                history.anomaly("acknowledged write missing from the final snapshot", session=s, node=node.name,
                                count=len(missing), examples=missing[:5])
            if twice:
                history.anomaly("write twice in the final snapshot", session=s, node=node.name, examples=twice[:5])
            if set(counts) != set(stored):
                # Known defect 3 (test_cluster_partition_defects.py): a deposed owner's commit in flight lands in
                # PostgreSQL after the new owner loaded the session. Not an acknowledged write lost: reported apart.
                history.known.append({"kind": "stored but not in the running session", "session": s, "node": node.name,
                                      "only_snapshot": sorted(set(counts) - set(stored)),
                                      "only_stored": sorted(set(stored) - set(counts))})
        missing = sorted(acked[s] - set(stored))
        if missing:
            history.anomaly("acknowledged write missing from PostgreSQL", session=s, count=len(missing), examples=missing[:5])
        if any(n != 1 for n in stored.values()):
            history.anomaly("write stored twice", session=s)
        unacked_present += len(set(stored) - acked[s])
        for (session, epoch), ids in by_epoch.items():
            if session == s:
                lost_by_epoch[epoch] += len([i for i in ids if i not in stored])
    # (c) fencing: per epoch, its acknowledged writes survive.
    for epoch, lost in lost_by_epoch.items():
        if lost:
            history.anomaly("acknowledged writes of an epoch lost (fencing)", epoch=epoch, lost=lost)
    # (c) epochs ordered in real time: E before F when an answer of E came before a request of F was sent.
    for s in sessions:
        epochs = [e for (session, e) in history.ops if session == s]
        edges = {e: [f for f in epochs if f != e and history.ops[(s, e)][0] < history.ops[(s, f)][1]] for e in epochs}
        for component in cycles(epochs, edges):
            history.anomaly("epochs interleaved in real time (two owners at once)", session=s, epochs=component,
                            spans={e: [round(x - started, 3) for x in history.ops[(s, e)]] for e in component})

    # The report.
    per_kind = defaultdict(list)
    for f in faults:
        per_kind[f["kind"]].append(f)
    summary = {
        "seconds": round(time.monotonic() - started, 1),
        "ops": {"attempted": history.attempts, "acknowledged": len(history.acks), "refused": dict(history.errors),
                "unanswered_within_timeout": len(history.timeouts), "joins_unanswered_within_timeout": len(history.join_timeouts),
                "protocol_errors": len(history.protocol_errors), "members_dropped_without_a_close": len(history.dropped_members),
                "closes": {str(k): v for k, v in history.closes.items()},
                "joins": dict(history.joins), "snapshots_checked": history.snapshots_checked,
                "unacknowledged_but_stored": unacked_present,
                "epochs": len(history.ops), "lease_changes": len(ownership)},
        "faults": {k: len(v) for k, v in per_kind.items()},
        "unavailability_seconds": {k: {"median": round(statistics.median(f["unavailable"] for f in v), 2),
                                       "worst": round(max(f["unavailable"] for f in v), 2)} for k, v in per_kind.items()},
        "anomalies": history.anomalies,
        "known_defects": history.known + [{"kind": "join unanswered", **j} for j in history.join_timeouts]
        + [{"kind": "framing error", **p} for p in history.protocol_errors]
        + [{"kind": "member dropped without a close", **d} for d in history.dropped_members],
        "fault_log": faults,
    }
    ARTIFACT.parent.mkdir(exist_ok=True)
    ARTIFACT.write_text(json.dumps(summary, indent=1, default=str))
    HISTORY.write_text(json.dumps({
        "acks": [{**a, "sent": round(a["sent"] - started, 4), "received": round(a["received"] - started, 4)} for a in history.acks],
        "ownership": [(round(t - started, 3), s, n, f) for t, s, n, f in ownership],
        "epochs": [{"session": s, "epoch": e, "first_answer": round(a - started, 4), "last_sent": round(b - started, 4)}
                   for (s, e), (a, b) in history.ops.items()],
        "timeouts": history.timeouts, "fault_log": faults, "net_log": [(round(t - started, 3), x) for t, x in net.log]},
        default=str))
    with capsys.disabled():
        print(f"\npartitions: {summary['ops']['acknowledged']} writes acknowledged of {history.attempts} attempted "
              f"({len(history.timeouts)} unanswered within {WRITE_TIMEOUT:.0f} s, refused {dict(history.errors)}), "
              f"{len(history.ops)} epochs, {summary['seconds']} s")
        for kind in KINDS:
            v = per_kind.get(kind, [])
            if v:
                u = summary["unavailability_seconds"][kind]
                print(f"  {kind:<15} x{len(v)}  without an acknowledged write: median {u['median']:.2f} s, worst {u['worst']:.2f} s  "
                      f"(per fault: {', '.join(str(f['unavailable']) for f in v)})")
        print(f"  anomalies: {len(history.anomalies)}" + "".join(f"\n    {json.dumps(a, default=str)[:600]}" for a in history.anomalies[:20]))
        behind = sorted({i for k in history.known for i in k["only_stored"]})
        print(f"  known defects (test_cluster_partition_defects.py): {len(behind)} unacknowledged writes stored after the "
              f"session's next owner loaded it {behind[:6]}; {len(history.join_timeouts)} joins unanswered within "
              f"{JOIN_TIMEOUT:.0f} s; {len(history.protocol_errors)} connections failed for a framing error; "
              f"{len(history.dropped_members)} members dropped without a close (not_joined); "
              f"{len(history.timeouts)} writes unanswered within {WRITE_TIMEOUT:.0f} s")
    assert all(len(per_kind[k]) == ROUNDS for k in KINDS)
    assert not history.anomalies, f"{len(history.anomalies)} anomalies, e.g. {history.anomalies[:3]}"
