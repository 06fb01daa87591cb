"""An owner node paused (SIGSTOP) under write load, perhaps in the middle of a commit, then
woken: the other nodes' writes are never held up by it — neither the session it owned, which
another node takes over, nor an unrelated session — and the woken node acknowledges writes again.
No acknowledged write is lost."""

import asyncio
import random
import time

import pytest

from meridian_client import Client, Closed, run
from test_cluster import Writer, point, settled_snapshot

LEASE_TTL = 2
PAUSE = 6  # seconds the owner sleeps: three lease times
CYCLES = 3


@pytest.fixture
def cluster(cluster_pair):
    return cluster_pair


class FailoverWriter(Writer):
    """Writer that, as a load balancer whose health check saw it, never tries a paused node."""

    def __init__(self, cluster, session, name, start, paused):
        super().__init__(cluster, session, name, start)
        self.paused = paused

    join_timeout = 15

    def candidates(self):
        return [n for n in self.cluster.nodes if n.alive() and n not in self.paused]


class PinnedWriter:
    """Adds annotations to a session through one node, timing the gaps between acknowledgements."""

    def __init__(self, node, session, name):
        self.node, self.session, self.name = node, session, name
        self.acked, self.gaps, self.refused = [], [], []
        self.closed = None

    async def write(self, stop):
        c = await Client.open(self.node.url, self.name)
        await c.join(self.session, self.name, "editor")
        last = time.monotonic()
        n = 0
        while not stop.is_set():
            n += 1
            try:
                answer, _ = await c.request({"type": "annotation.add", "annotation": point(f"{self.name}-{n}")}, timeout=30)
            except Closed as e:
                self.closed = f"{e} after {len(self.acked)} acknowledged writes"
                return
            now = time.monotonic()
            if answer["type"] == "ack":
                self.acked.append(f"{self.name}-{n}")
                self.gaps.append(now - last)
                last = now
            else:
                self.refused.append(answer)
            await asyncio.sleep(0.02)  # a paced writer: 50 changes a second at most
        await c.close()


def excerpt(log, session):
    """The lines of a node's log about `session`, its leases or its Redis, for a failure's message."""
    words = (session, "lease", "Redis", "keeper", "node ")
    return "\n".join(line for line in log.splitlines() if any(w in line for w in words))[-4000:]


async def first_ack(node, session, name, timeout):
    """Seconds until a fresh client's first write to `session` at `node` is acknowledged."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            c = await Client.open(node.url, name)
            answer, _ = await c.request({"type": "join", "session": session, "name": name, "role": "editor"}, timeout=timeout)
            if answer["type"] == "welcome":
                answer, _ = await c.request({"type": "annotation.add", "annotation": point(f"{name}-first")}, timeout=timeout)
                await c.close()
                if answer["type"] == "ack":
                    return time.monotonic() - start
            else:
                await c.close()
        except (Closed, asyncio.TimeoutError, OSError):
            pass
        await asyncio.sleep(0.1)  # the next attempt, as a client's retry
    return None


def test_a_paused_owner_holds_no_other_writes_up_and_writes_again_once_woken(cluster, session_id):
    rng = random.Random(2411)

    async def scenario():
        first, second = cluster.nodes
        stop = asyncio.Event()
        paused = set()
        writers = [FailoverWriter(cluster, session_id, f"w{i}", 0, paused) for i in range(2)]  # both start at the first node
        tasks = [asyncio.create_task(w.write(stop)) for w in writers]
        for cycle in range(CYCLES):
            deadline = time.monotonic() + 20
            while (cluster.owner(session_id) is None or any(len(w.acked) < 5 * (cycle + 1) for w in writers)) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            owner = cluster.owner(session_id)
            assert owner is not None, cluster.describe(session_id)
            other = second if owner is first else first
            # An unrelated session that the other node owns, written all along.
            unrelated = PinnedWriter(other, f"{session_id}-u{cycle}", f"u{cycle}")
            unrelated_stop = asyncio.Event()
            unrelated_task = asyncio.create_task(unrelated.write(unrelated_stop))
            while len(unrelated.acked) < 5:
                await asyncio.sleep(0.02)
            await asyncio.sleep(rng.uniform(0, 0.2))  # a pause anywhere in the owner's work, commits included
            paused_at = time.monotonic()
            paused.add(owner)
            owner.pause()
            try:
                # The session comes back at the other node within a few lease times: a new
                # client's write there is acknowledged (the writers on the paused node wait for it).
                resumed = await first_ack(other, session_id, f"t{cycle}", timeout=5 * LEASE_TTL)
                assert resumed is not None, \
                    f"cycle {cycle}: the session's writes did not resume at the other node: {cluster.describe(session_id)}"
                while time.monotonic() - paused_at < PAUSE:
                    await asyncio.sleep(0.05)
            finally:
                owner.resume()
                paused.discard(owner)
            unrelated_stop.set()
            await unrelated_task
            assert unrelated.closed is None, \
                f"cycle {cycle}: the unrelated session's connection was closed: {unrelated.closed}; " \
                f"its node's log: {excerpt(other.log_text(), unrelated.session)}"
            assert not unrelated.refused, f"cycle {cycle}: the unrelated session's writes were refused: {unrelated.refused[:3]}"
            assert max(unrelated.gaps) < 3, f"cycle {cycle}: an unrelated write waited {max(unrelated.gaps):.1f} s"
            # The woken node owns a fresh session and acknowledges its writes.
            woken = await first_ack(owner, f"{session_id}-z{cycle}", f"z{cycle}", timeout=15)
            assert woken is not None, f"cycle {cycle}: the woken node acknowledged no write within 15 s; log {owner.log_text()[-2000:]}"
            print(f"\ncycle {cycle}: writes resumed {resumed:.2f} s after the pause; unrelated gap at most {max(unrelated.gaps):.2f} s; "
                  f"woken node's first ack after {woken:.2f} s")
        stop.set()
        await asyncio.gather(*tasks)
        final = await settled_snapshot(cluster, session_id)
        stored = {a["id"] for a in final["annotations"]}
        lost = [id for w in writers for id in w.acked if id not in stored]
        assert not lost, f"{len(lost)} acknowledged writes lost, e.g. {lost[:5]}"
    run(scenario(), timeout=300)
