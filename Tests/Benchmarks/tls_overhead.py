#!/usr/bin/env python3
"""What TLS costs the server: the same `meridian load` over ws:// and over wss://, the two runs
alternating (plain, TLS, TLS, plain, ...), the server pinned to CPU 0 and the load generator to
CPU 1. Prints a markdown table of medians: deliveries/s, latency p50/p99, and the server's CPU
per delivery over the measured window (sampled from /proc at the window's edges), the server's
CPU over that window and the generator's over its run (one core = 100%).

  python3 Tests/Benchmarks/tls_overhead.py --bin .build/release/meridian --rounds 3
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

LOADS = {
    "1 session x 1000 clients, 10 draggers x 60 Hz (600k/s offered)":
        "--clients 1000 --sessions 1 --draggers 10 --rate 60 --contention 0 --ramp-up 2 --settle 2 --duration 8",
    "100 sessions x 50 clients, 2 draggers x 10 Hz (100k/s offered)":
        "--clients 5000 --sessions 100 --draggers 2 --rate 10 --contention 0 --ramp-up 3 --settle 2 --duration 8",
}
TICKS = os.sysconf("SC_CLK_TCK")


def certificate(directory):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    d = Path(directory)
    subprocess.run(["openssl", "req", "-x509", *ec, "-keyout", d / "ca.key", "-out", d / "ca.pem", "-days", "1",
                    "-subj", "/CN=bench CA"], check=True, capture_output=True)
    subprocess.run(["openssl", "req", *ec, "-keyout", d / "key.pem", "-out", d / "csr", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    (d / "ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    subprocess.run(["openssl", "x509", "-req", "-in", d / "csr", "-CA", d / "ca.pem", "-CAkey", d / "ca.key", "-CAcreateserial",
                    "-out", d / "cert.pem", "-days", "1", "-extfile", d / "ext"], check=True, capture_output=True)
    return d


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def run(binary, tls, pki, load):
    argv = ["taskset", "-c", "0", binary, "serve", "--port", "0", "--log-level", "error", "--auth", "none",
            "--data-dir", tempfile.mkdtemp(prefix="meridian-tls-bench-"), "--max-connections-per-ip", "100000",
            "--rate-limit", "1000000", "--rate-burst", "1000000"]
    if tls:
        argv += ["--tls-cert", str(pki / "cert.pem"), "--tls-key", str(pki / "key.pem")]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r":(\d+) ", server.stdout.readline()).group(1))
        url = f"{'wss' if tls else 'ws'}://127.0.0.1:{port}"
        extra = ["--ca-file", str(pki / "ca.pem"), "--server-name", "localhost"] if tls else []
        args = load.split()
        ramp, settle, duration = (float(args[args.index(f)+1]) for f in ("--ramp-up", "--settle", "--duration"))
        samples = []
        started = time.monotonic()
        # The window opens about 0.1 s after the load starts, plus the ramp-up and the settling.
        timer = threading.Thread(target=lambda: [time.sleep(max(0, started + 0.1 + ramp + settle - time.monotonic())),
                                                 samples.append(cpu_seconds(server.pid)),
                                                 time.sleep(max(0, started + 0.1 + ramp + settle + duration - time.monotonic())),
                                                 samples.append(cpu_seconds(server.pid))])
        timer.start()
        out = subprocess.run(["taskset", "-c", "1", binary, "load", "--url", url, *extra, "--json", "--quiet", *args],
                             capture_output=True, text=True).stdout
        timer.join()
        report = json.loads(out)
        latency = report["latencyMs"]
        deliveries = report["deliveries"]
        return {"deliveries/s": report["deliveriesPerSecond"], "p50": latency["p50"], "p99": latency["p99"],
                "cpu µs/delivery": (samples[1] - samples[0]) * 1e6 / max(deliveries, 1),
                "server cpu %": (samples[1] - samples[0]) / duration * 100, "generator cpu %": report["cpuPercent"], "lost": report["lost"],
                "errors": sum(report.get("errors", {}).values()) + report.get("connectFailures", 0)}
    finally:
        server.terminate()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=".build/release/meridian")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    pki = certificate(tempfile.mkdtemp(prefix="meridian-tls-bench-pki-"))
    for name, load in LOADS.items():
        results = {False: [], True: []}
        for i in range(options.rounds):
            for tls in ((False, True) if i % 2 == 0 else (True, False)):
                results[tls].append(run(options.bin, tls, pki, load))
                print(f"# {name} round {i} {'wss' if tls else 'ws'}: {results[tls][-1]}", flush=True)
        median = {tls: {k: statistics.median(r[k] for r in results[tls]) for k in results[tls][0]} for tls in results}
        print(f"\n### {name}\n`{load}`\n")
        print("| link | deliveries/s | p50 / p99 ms | server CPU µs per delivery | server CPU (window) | generator CPU (run) | lost | errors |")
        print("|---|---|---|---|---|---|---|---|")
        for tls, label in ((False, "ws://"), (True, "wss://")):
            m = median[tls]
            print(f"| {label} | {m['deliveries/s']:,.0f} | {m['p50']:.2f} / {m['p99']:.2f} | {m['cpu µs/delivery']:.2f} | "
                  f"{m['server cpu %']:.0f}% | {m['generator cpu %']:.0f}% | {m['lost']:.0f} | {m['errors']:.0f} |")
        p, t = median[False], median[True]
        print(f"| wss / ws | {t['deliveries/s'] / p['deliveries/s']:.2f} | {t['p50'] / p['p50']:.2f} / {t['p99'] / p['p99']:.2f} | "
              f"**{t['cpu µs/delivery'] / p['cpu µs/delivery']:.2f}** | | | | |")


if __name__ == "__main__":
    main()
