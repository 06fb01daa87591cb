"""The transport's event loop setting (libev by default, or lws's poll loop) and the descriptor
limit `meridian serve` raises for itself at start."""

import asyncio
import json
import os
import re
import resource

import pytest
import websockets

from conftest import Server
from test_config import meridian, write_config


def test_event_loop_defaults_to_libev_and_layers_like_every_setting():
    assert json.loads(meridian("--print-config").stdout)["eventLoop"] == "libev"
    from_file = meridian("--config", write_config({"eventLoop": "poll"}), "--print-config")
    assert json.loads(from_file.stdout)["eventLoop"] == "poll"
    from_env = meridian("--config", write_config({"eventLoop": "libev"}), "--print-config", env={"MERIDIAN_EVENT_LOOP": "poll"})
    assert json.loads(from_env.stdout)["eventLoop"] == "poll"
    from_flag = meridian("--event-loop", "libev", "--print-config", env={"MERIDIAN_EVENT_LOOP": "poll"})
    assert json.loads(from_flag.stdout)["eventLoop"] == "libev"


def test_an_unknown_event_loop_is_refused_by_name():
    result = meridian("--event-loop", "select", "--print-config")
    assert result.returncode != 0
    assert 'eventLoop "select": use libev or poll' in result.stderr


def Serve(*args, nofile=None):
    """`meridian serve` started with a given soft/hard descriptor limit (set in the child only)."""
    def limit():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERIDIAN_")}
    return Server(*args, env=env, preexec_fn=limit)


async def join_many(port, count):
    """Opens `count` WebSocket connections, joins each to one session; returns how many got a welcome."""
    sockets = []

    async def join(i):
        ws = await websockets.connect(f"ws://127.0.0.1:{port}/", subprotocols=["meridian.v1"], open_timeout=20)
        sockets.append(ws)
        await ws.send(json.dumps({"type": "join", "ref": i, "session": f"nofile-{i % 10}", "name": f"c{i}", "role": "viewer"}))
        while json.loads(await asyncio.wait_for(ws.recv(), 20))["type"] != "welcome":
            pass
        return 1
    try:
        welcomed = 0
        for start in range(0, count, 50):
            welcomed += sum(await asyncio.gather(*(join(i) for i in range(start, min(start + 50, count)))))
        return welcomed
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)


@pytest.mark.parametrize("loop,start", [("libev", "low"), ("poll", "low"), ("libev", "high")])
def test_serve_fits_its_soft_descriptor_limit_to_max_connections(loop, start):
    """The soft limit becomes --max-connections + 256 (within the hard limit): raised from a low
    one, and lowered from one at the hard limit, since libwebsockets walks a table of that size
    on every close."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 1024 or soft < 700:
        pytest.skip(f"needs a hard descriptor limit of at least 1024 and room for 600 client sockets here (soft {soft}, hard {hard})")
    first = 256 if start == "low" else hard
    server = Serve("--event-loop", loop, "--max-connections", "500", "--max-connections-per-ip", "1000", nofile=(first, hard))
    try:
        assert re.search(rf"open-descriptor limit 756 \(was {first}, hard limit {hard}\)", server.log_text()), server.log_text()[-2000:]
        # More connections than the soft limit the process started with.
        assert asyncio.run(join_many(server.port, 300)) == 300
        assert server.process.poll() is None
    finally:
        server.stop()


def test_serve_warns_when_the_hard_descriptor_limit_is_low_for_max_connections():
    server = Serve("--max-connections", "1000", nofile=(200, 200))
    try:
        log = server.log_text()
        assert "open-descriptor limit 200 (was 200, hard limit 200)" in log, log[-2000:]
        assert re.search(r"warning .*open-descriptor limit 200 is below --max-connections 1000", log), log[-2000:]
    finally:
        server.stop()
