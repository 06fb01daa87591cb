"""A cluster node whose Redis is out of reach when it starts: it listens at once, answers
/healthz, says in /readyz why it is not ready, refuses joins with storage_unavailable, joins
its cluster by itself once Redis answers (stopped, then started; or stalled by SIGSTOP, then
woken), and stops cleanly on SIGTERM whether or not it has joined."""

import json
import signal
import time
import urllib.error
import urllib.request

import pytest

from cluster_fixture import RedisServer, free_port
from conftest import Server
from meridian_client import Client, run

READY_WITHIN = 20  # seconds: the node's join retries back off to a lease time (2 s here)


def http(node, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.port}{path}", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def start_node(redis_url, postgres_url):
    port = free_port()
    return Server("--cluster", redis_url, "--store", postgres_url, "--cluster-lease-ttl", "2",
                  "--port", str(port), "--advertise", f"127.0.0.1:{port}")


def wait_until_ready(node):
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline:
        status, body = http(node, "/readyz")
        if status == 200:
            return body
        time.sleep(0.1)  # polling /readyz, as a load balancer does
    pytest.fail(f"not ready within {READY_WITHIN} s: {http(node, '/readyz')}; log: {node.log_text()[-2000:]}")


async def join(node, session):
    c = await Client.open(node.url, "joiner")
    try:
        answer, _ = await c.request({"type": "join", "session": session, "name": "A", "role": "owner"})
        return answer
    finally:
        await c.close()


def stop_cleanly(node):
    node.process.send_signal(signal.SIGTERM)
    assert node.process.wait(10) == 0, node.log_text()[-2000:]


@pytest.mark.parametrize("fault", ["stopped", "stalled"])
def test_a_node_started_without_its_redis_serves_health_and_joins_once_redis_answers(postgres_url, session_id, fault):
    redis = RedisServer()
    try:
        if fault == "stopped":
            redis.stop()
        else:
            redis.process.send_signal(signal.SIGSTOP)
        node = start_node(redis.url, postgres_url)
        try:
            assert http(node, "/healthz")[0] == 200
            status, body = http(node, "/readyz")
            assert status == 503, body
            assert "not joined to the cluster" in body["reason"] and redis.url in body["reason"], body
            answer = run(join(node, session_id))
            assert answer["type"] == "error" and answer["code"] == "storage_unavailable", answer
            if fault == "stopped":
                assert "cannot join the cluster yet" in node.log_text()

            if fault == "stopped":
                redis.start()
            else:
                redis.process.send_signal(signal.SIGCONT)
            wait_until_ready(node)
            answer = run(join(node, session_id))
            assert answer["type"] == "welcome", answer
            assert "joined the cluster" in node.log_text()
            stop_cleanly(node)
        finally:
            node.stop()
    finally:
        if redis.process and redis.process.poll() is None:
            redis.process.send_signal(signal.SIGCONT)
        redis.close()


def test_a_node_that_never_reached_redis_stops_on_sigterm(postgres_url):
    redis = RedisServer()
    redis.stop()
    try:
        node = start_node(redis.url, postgres_url)
        try:
            assert http(node, "/readyz")[0] == 503
            stop_cleanly(node)
        finally:
            node.stop()
    finally:
        redis.close()
