"""A node's wall clock stepped forward and back by half a minute while a cluster works (through
libfaketime, on that node only): no lease or fence changes hands, no client is closed, every
write is acknowledged and kept, and each node's overview still lists the other's sessions.
Leases live in Redis (its clock) and nodes time them on the monotonic clock; no node compares
its wall clock with another's."""

import asyncio
import os
import re
import time
import urllib.request
from pathlib import Path

import pytest

from cluster_fixture import Cluster, free_port
from conftest import Server
from meridian_client import Client, run
from test_cluster import point

FAKETIME = next(iter(sorted(Path("/usr/lib").glob("*-linux-gnu/faketime/libfaketimeMT.so.1"))), Path("/usr/lib/faketime/libfaketimeMT.so.1"))
LEASE_TTL = 2
STEPS = ["+30", "-30", "+0", "-30", "+30", "+0"]


def metric(node, name):
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=5) as r:
        text = r.read().decode()
    m = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


async def overview_sessions(node):
    c = await Client.open(node.url, "watch")
    try:
        answer, _ = await c.request({"type": "overview.watch"})
        assert answer["type"] == "ack", answer
        while True:
            m = await c.recv()
            if m["type"] == "overview":
                return {s["session"] for s in m["sessions"]}
    finally:
        await c.close()


def test_a_nodes_clock_stepped_forward_and_back_confuses_no_lease_or_fence(redis, postgres_url, session_id, tmp_path):
    if not FAKETIME.exists():
        pytest.fail(f"{FAKETIME} missing: `make test-deps` installs Debian's faketime")
    offset = tmp_path / "offset"
    offset.write_text("+0\n")
    stepped_env = {**os.environ, "LD_PRELOAD": str(FAKETIME), "FAKETIME_TIMESTAMP_FILE": str(offset),
                   "FAKETIME_CACHE_DURATION": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    nodes = []
    for stepped in (False, True):
        port = free_port()
        settings = {"cluster": redis.url, "store": postgres_url, "cluster-lease-ttl": str(LEASE_TTL),
                    "port": str(port), "advertise": f"127.0.0.1:{port}", "auth": "none"}
        if stepped:
            # Under libfaketime Swift's runtime sees no command line: this node takes its
            # settings from MERIDIAN_* variables (every setting has one).
            env = {k: v for k, v in stepped_env.items() if not k.startswith("MERIDIAN_")}
            env.update({"MERIDIAN_" + k.upper().replace("-", "_"): v for k, v in settings.items()})
            nodes.append(Server(env=env))
        else:
            nodes.append(Server(*[a for k, v in settings.items() if k != "auth" for a in (f"--{k}", v)]))
    steady, stepped = nodes
    cluster = Cluster.__new__(Cluster)
    cluster.redis, cluster.nodes = redis, nodes

    async def scenario():
        # One session owned by each node, each written through both nodes.
        mine, theirs = f"{session_id}-stepped", f"{session_id}-steady"
        owners = {mine: stepped, theirs: steady}
        clients = []
        for session, owner in owners.items():
            first = await Client.open(owner.url, f"{session}-o")
            await first.join(session, "O", "editor")
            other = await Client.open((steady if owner is stepped else stepped).url, f"{session}-x")
            await other.join(session, "X", "editor")
            clients += [(session, first), (session, other)]
        fences = {s: cluster.fence(s) for s in owners}
        acked, n = {s: [] for s in owners}, 0

        async def write_for(seconds):
            nonlocal n
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for session, c in clients:
                    n += 1
                    answer, _ = await c.request({"type": "annotation.add", "annotation": point(f"a{n}")}, timeout=10)
                    assert answer["type"] == "ack", f"write refused: {answer}"
                    acked[session].append(f"a{n}")
                await asyncio.sleep(0.05)  # a paced load: a few writes a second per client

        for step in STEPS:
            offset.write_text(step + "\n")
            await write_for(2.5)
            for session, owner in owners.items():
                assert cluster.owner(session) is owner, f"after {step}: {session} changed owner: {cluster.describe(session)}"
                assert cluster.fence(session) == fences[session], f"after {step}: {session}'s fence moved"
            for node in nodes:
                listed = await overview_sessions(node)
                assert set(owners) <= listed, f"after {step}: the overview at {node.port} lists {listed}; {redis.command('HGETALL', 'meridian:overview')}; {redis.command('KEYS', 'meridian:node:*')}"
        for node in nodes:
            assert metric(node, "meridian_cluster_failovers_total") == 0
        for session, c in clients:
            await c.close()
        for session in owners:
            c = await Client.open(steady.url, "check")
            welcome = await c.join(session, "C", "viewer")
            stored = {a["id"] for a in welcome["snapshot"]["annotations"]}
            assert set(acked[session]) <= stored
            await c.close()
        return n

    try:
        try:
            writes = run(scenario(), timeout=120)
        except BaseException:
            for node in nodes:
                print(f"---- node {node.port}:\n{node.log_text()[-3000:]}")
            raise
        print(f"\n{writes} acknowledged writes while a node's clock stepped ±30 s six times")
        for node in nodes:
            assert node.alive(), node.log_text()[-2000:]
    finally:
        for node in nodes:
            node.stop()
