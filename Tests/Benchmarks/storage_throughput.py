"""Acknowledged changes per second with and without the SQLite store; with
`--postgres`, the cost of TLS to PostgreSQL instead.

    python3 Tests/Benchmarks/storage_throughput.py [--bin .build/release/meridian] [--clients 8] [--seconds 5]
    python3 Tests/Benchmarks/storage_throughput.py --postgres [--rounds 5]

Each client pipelines `annotation.update`s (a window of requests in flight) on
its own annotation; an ack means committed. Prints acks/s, ack latency
percentiles, the server's CPU time per ack (user and system, from /proc), and its
mean batch size and commit latency from /metrics.

`--postgres` runs one PostgreSQL server with TLS on (a self-signed certificate
made here) and measures the server on it with `sslmode=disable` and with
`sslmode=require`, alternating, `--rounds` times each, then prints the medians
and the ratio TLS / plain of each figure.
"""

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
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


def cpu_seconds(pid):
    """User and system CPU time of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(binary, args, clients, seconds, window):
    os.environ["MERIDIAN_BIN"] = str(binary)
    from conftest import Server
    # Each client sends as fast as its acks come: no per-connection rate limit in the way.
    server = Server(*args, "--rate-limit", "1000000", "--rate-burst", "1000000")
    try:
        latencies = []
        start, cpu = time.monotonic(), cpu_seconds(server.process.pid)
        counts = await asyncio.gather(*(client(server.url, "bench", i, seconds, window, latencies) for i in range(clients)))
        elapsed, cpu = time.monotonic() - start, cpu_seconds(server.process.pid) - cpu
        text = urllib.request.urlopen(f"http://{server.host}:{server.port}/metrics").read().decode()
    finally:
        server.stop()
    latencies.sort()
    batches = metric(text, "meridian_storage_batch_size_count")
    return {
        "acks_per_s": sum(counts) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "cpu_us_per_ack": 1e6 * cpu / sum(counts),
        "mean_batch": metric(text, "meridian_storage_batch_size_sum") / batches if batches else None,
        "mean_commit_ms": 1000 * metric(text, "meridian_storage_commit_seconds_sum") / batches if batches else None,
    }


def certificate(directory, owner):
    """A self-signed certificate and key for 127.0.0.1 in `directory`, readable by `owner` (a uid) only."""
    cert, key = directory / "server.crt", directory / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-subj", "/CN=127.0.0.1", "-days", "2"], check=True, capture_output=True)
    for path in (cert, key):
        os.chown(path, owner, -1)
        path.chmod(0o600)
    return cert, key


def postgres_tls(binary, a):
    from pg_fixture import PostgresServer
    directory = Path(tempfile.mkdtemp(prefix="meridian-bench-tls-"))
    owner = os.getuid()
    if owner == 0:
        import pwd
        owner = pwd.getpwnam("postgres").pw_uid
        os.chown(directory, owner, -1)
    cert, key = certificate(directory, owner)
    postgres = PostgresServer(settings=["ssl=on", f"ssl_cert_file={cert}", f"ssl_key_file={key}"])
    runs = {"plain": [], "tls": []}
    try:
        for _ in range(a.rounds):
            for name, mode in [("plain", "disable"), ("tls", "require")]:
                url = f"{postgres.create_database()}?sslmode={mode}"
                runs[name].append(asyncio.run(measure(binary, ["--store", url], a.clients, a.seconds, a.window)))
    finally:
        postgres.close()
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0] if rs[0][k] is not None} for name, rs in runs.items()}
    for name, figures in medians.items():
        print(name, {k: round(v, 2) for k, v in figures.items()})
    print("tls / plain", {k: round(medians["tls"][k] / medians["plain"][k], 3) for k in medians["plain"]})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=".build/release/meridian")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--window", type=int, default=32)
    p.add_argument("--postgres", action="store_true", help="the cost of TLS to PostgreSQL")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    binary = Path(a.bin).resolve()
    if a.postgres:
        return postgres_tls(binary, a)
    for name, args in [("memory", []), ("sqlite", ["--data-dir", tempfile.mkdtemp(prefix="meridian-bench-")])]:
        r = asyncio.run(measure(binary, args, a.clients, a.seconds, a.window))
        print(name, {k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()})


if __name__ == "__main__":
    main()
