"""Acknowledged changes per second with and without the SQLite store.

    python3 Tests/Benchmarks/storage_throughput.py [--bin .build/release/meridian] [--clients 8] [--seconds 5]

Each client pipelines `annotation.update`s (a window of requests in flight) on
its own annotation; an ack means committed. Prints acks/s, ack latency
percentiles, and the server's mean batch size and commit latency from /metrics.
"""

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "python"))
import os  # noqa: E402

from meridian_client import Client  # noqa: E402


async def client(url, session, index, seconds, window, latencies):
    c = await Client.open(url, f"c{index}", validate=False)
    await c.join(session, f"C{index}", "editor")
    ident = f"a{index}"
    await c.ok({"type": "annotation.add", "annotation": {"type": "point", "id": ident, "coordinate": {"latitude": 0, "longitude": 0}}})
    sent, slots, done = {}, asyncio.Semaphore(window), 0
    deadline = time.monotonic() + seconds

    async def reader():
        nonlocal done
        while True:
            m = await c.recv(timeout=30)
            if m["type"] == "ack" and m["ref"] in sent:
                latencies.append(time.monotonic() - sent.pop(m["ref"]))
                done += 1
                slots.release()
            elif m["type"] == "error":
                raise AssertionError(m)

    task = asyncio.create_task(reader())
    n = 0
    while time.monotonic() < deadline:
        await slots.acquire()
        n += 1
        ref = f"c{index}-{n}"
        sent[ref] = time.monotonic()
        await c.send({"type": "annotation.update", "id": ident, "ref": ref, "changes": {"title": f"v{n}"}}, check=False)
    while sent:
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await c.close()
    return done


def metric(text, name):
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


async def measure(binary, args, clients, seconds, window):
    os.environ["MERIDIAN_BIN"] = str(binary)
    from conftest import Server
    server = Server(*args)
    try:
        latencies = []
        start = time.monotonic()
        counts = await asyncio.gather(*(client(server.url, "bench", i, seconds, window, latencies) for i in range(clients)))
        elapsed = time.monotonic() - start
        text = urllib.request.urlopen(f"http://{server.host}:{server.port}/metrics").read().decode()
    finally:
        server.stop()
    latencies.sort()
    batches = metric(text, "meridian_storage_batch_size_count")
    return {
        "acks_per_s": sum(counts) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "mean_batch": metric(text, "meridian_storage_batch_size_sum") / batches if batches else None,
        "mean_commit_ms": 1000 * metric(text, "meridian_storage_commit_seconds_sum") / batches if batches else None,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=".build/release/meridian")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--window", type=int, default=32)
    a = p.parse_args()
    binary = Path(a.bin).resolve()
    for name, args in [("memory", []), ("sqlite", ["--data-dir", tempfile.mkdtemp(prefix="meridian-bench-")])]:
        r = asyncio.run(measure(binary, args, a.clients, a.seconds, a.window))
        print(name, {k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()})


if __name__ == "__main__":
    main()
