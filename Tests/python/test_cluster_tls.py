"""A cluster on a Redis reached over TLS with a password and client certificates, as managed
Redis services are: `--cluster rediss://:PASSWORD@HOST:PORT?cacert=…&cert=…&key=…`. The nodes
join, members on different nodes see one order, a node's owner SIGKILLed hands the session over,
and the password is never printed."""

import json
import subprocess
import time

import pytest

from cluster_fixture import Cluster, RedisCertificates, RedisServer
from conftest import binary
from meridian_client import Client, run

PASSWORD = "s3cret-redis"


@pytest.fixture
def tls_redis():
    certificates = RedisCertificates()
    server = RedisServer(tls=certificates, client_certificates=True, password=PASSWORD)
    yield server
    server.close()
    certificates.close()


def point(id):
    return {"id": id, "type": "point", "coordinate": {"latitude": 52.5, "longitude": 13.4}}


def test_nodes_on_a_tls_redis_with_a_password_serve_one_session_across_nodes(tls_redis, postgres_url, session_id):
    assert tls_redis.url.startswith("rediss://")
    cluster = Cluster(tls_redis, postgres_url, count=2)
    try:
        for node in cluster.nodes:
            deadline = time.monotonic() + 20
            while not cluster.ready(node):
                assert time.monotonic() < deadline, f"not ready: {node.log_text()[-2000:]}"
                time.sleep(0.1)  # polling /readyz, as a load balancer does

        async def scenario():
            first = await Client.open(cluster.nodes[0].url, "first")
            await first.join(session_id)
            second = await Client.open(cluster.nodes[1].url, "second")
            await second.join(session_id, handover=True)
            assert len(second.welcome["snapshot"]["participants"]) == 2
            await first.ok({"type": "annotation.add", "annotation": point("pin")})
            seen, _ = await second.until(lambda m: m["type"] == "annotation.added")
            assert seen["annotation"]["id"] == "pin"
            ack, _ = await second.ok({"type": "annotation.add", "annotation": point("quay")})
            seen, _ = await first.until(lambda m: m["type"] == "annotation.added" and m["annotation"]["id"] == "quay")
            assert seen["seq"] == ack["seq"]
            # The owner dies: the member at the other node is moved in place, over the TLS link.
            cluster.kill(cluster.nodes[0])
            await second.until(lambda m: m["type"] == "moved", timeout=20)
            welcome, _ = await second.answer(second.welcome["ref"], timeout=20)
            assert sorted(a["id"] for a in welcome["snapshot"]["annotations"]) == ["pin", "quay"]
        run(scenario(), timeout=90)
        # Redis saw the nodes over TLS: its lease and node keys are there.
        assert tls_redis.command("GET", "meridian:nodes")
    finally:
        cluster.close()


def test_the_redis_password_is_never_printed(tls_redis, postgres_url):
    printed = subprocess.run([str(binary()), "serve", "--cluster", tls_redis.url, "--store", postgres_url, "--print-config"],
                             capture_output=True, text=True, timeout=30)
    assert printed.returncode == 0, printed.stderr
    assert PASSWORD not in printed.stdout + printed.stderr
    cluster = json.loads(printed.stdout)["cluster"]
    assert cluster.startswith("rediss://:***@127.0.0.1:") and "cacert=" in cluster, cluster
