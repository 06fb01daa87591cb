#!/usr/bin/env python3
"""`make bench-event-loop`: libwebsockets' poll() loop against its libev (epoll) loop as mostly idle
connections grow, for Meridian (`--event-loop poll|libev`) and the lws_rooms baseline (`--libev`).

At each connection count the clients sit in sessions of 100; one dragger in one session moves at
10 Hz, so 1,000 deliveries/s flow while every other connection is idle. The figure that matters
is the server's CPU over the measurement window (after every connection has joined), per second
and per delivery. More than ~28k connections use several loopback source addresses (127.0.0.x).
The table goes to BENCHMARKS.md between the event-loop markers and to event_loop.json.

Usage: event_loop.py [--quick] [--counts 1000,10000,50000]
"""
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

COUNTS = [1_000, 10_000, 50_000]
for arg in sys.argv:
    if arg.startswith("--counts="):
        COUNTS = [int(x) for x in arg.split("=", 1)[1].split(",")]
SERVERS = [("meridian", ("--event-loop", "poll"), "meridian poll"), ("meridian", ("--event-loop", "libev"), "meridian libev"),
           ("lws-poll", (), "lws_rooms poll"), ("lws-libev", (), "lws_rooms libev")]
PORTS_PER_SOURCE = 25_000


def measure(count):
    sources = max(1, -(-count // PORTS_PER_SOURCE))
    options = dict(clients=count, sessions=max(1, count // 100), draggers=1, drag_sessions=1, rate=10, contention=0,
                   ramp_up=max(2, count / 1500), settle=max(5, count / 2000), duration=5 if bench.QUICK else 10, coalesce_ms=10)
    if sources > 1:
        options["source_addresses"] = ",".join(f"127.0.0.{i + 1}" for i in range(sources))
    rows = {}
    for kind, extra, name in SERVERS:
        r = bench.run_one(kind, extra, **options)
        cpu = r.get("serverWindowCpuPercent")
        deliveries = r.get("deliveriesPerSecond") or 0
        rows[name] = {
            "connected": r.get("connected"), "connectFailures": r.get("connectFailures"),
            "cpuPercent": cpu, "deliveriesPerSecond": deliveries,
            "cpuMicrosPerDelivery": round(cpu / 100 / deliveries * 1e6, 1) if cpu is not None and deliveries else None,
            "p99Ms": r.get("latencyMs", {}).get("p99"), "lost": r.get("lost"), "peakRssKiB": r.get("serverPeakRssKiB"),
            "failed": r.get("failed"),
        }
        print(f"  {count} {name}: {rows[name]}", flush=True)
    return rows


def markdown(results):
    m = results["machine"]
    lines = [f"Run {results['date']}{' (--quick)' if results['quick'] else ''} on {m['nproc']} CPU(s) ({m['cpu']}), Linux {m['kernel']}; "
             f"load average at start {m['loadAverageAtStart']}; server pinned to CPU 0, load generator to CPU 1. "
             "Sessions of 100 clients; one dragger at 10 Hz in one session (1,000 deliveries/s), every other connection idle. "
             "Server CPU is measured over the window after all connections joined.", "",
             "| connections | server, loop | connected | server CPU | CPU per delivery | p99 ms | lost | peak RSS MiB |",
             "|---|---|---|---|---|---|---|---|"]
    for count, rows in results["counts"].items():
        for name, r in rows.items():
            if r.get("failed") or r.get("cpuPercent") is None:
                lines.append(f"| {int(count):,} | {name} | failed: {str(r.get('failed'))[:80]} | | | | | |")
                continue
            lines.append(f"| {int(count):,} | {name} | {r['connected']:,} | {r['cpuPercent']:.1f}% | {r['cpuMicrosPerDelivery']} µs "
                         f"| {r['p99Ms']:.1f} | {r['lost']} | {(r['peakRssKiB'] or 0) / 1024:.0f} |")
    lines += [f"Note: {note}." for note in results.get("limited", [])]
    lines += ["", "```", "python3 Tests/Benchmarks/event_loop.py" + (" --quick" if results["quick"] else "")] + results["commands"] + ["```"]
    return "\n".join(lines)


def main():
    bench.raise_descriptor_limit()
    bench.build_baseline()
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "quick": bench.QUICK, "machine": bench.machine(), "counts": {}}
    # Every connection is a descriptor in the server and one in the load generator: a count above
    # the hard limit (which an unprivileged process cannot raise) is measured at the most it allows.
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    for wanted in COUNTS:
        count = min(wanted, hard - 1000) if hard != resource.RLIM_INFINITY else wanted
        if count != wanted:
            results.setdefault("limited", []).append(f"{wanted:,} connections asked, {count:,} measured: the hard descriptor limit is {hard:,}")
        print(f"event loop: {count} connections …", flush=True)
        results["counts"][str(count)] = measure(count)
    results["commands"] = bench.COMMANDS
    (bench.HERE / "event_loop.json").write_text(json.dumps(results, indent=2) + "\n")
    doc = bench.ROOT / "BENCHMARKS.md"
    text = doc.read_text()
    begin, end = "<!-- event-loop:begin -->", "<!-- event-loop:end -->"
    if begin not in text:
        text += f"\n## Event loop: poll against libev\n\n{begin}\n{end}\n"
    before, rest = text.split(begin, 1)
    doc.write_text(before + begin + "\n" + markdown(results) + "\n" + end + rest.split(end, 1)[1])
    print(f"event loop: wrote {doc.relative_to(bench.ROOT)} and Tests/Benchmarks/event_loop.json")


if __name__ == "__main__":
    main()
