#!/usr/bin/env python3
"""`make bench`: Meridian against the strong libwebsockets baseline, driven by `meridian load`.

Every server runs pinned to CPU 0 and the load generator to CPU 1 (taskset); on the knee ladders
each server also gets only half of CPU 0 (a CPU cgroup), so the generator never runs out of
core before a server reaches its knee. The baseline
(lws_rooms.c) runs on both of libwebsockets' loops, poll and libev, in every scenario; the
faster of the two (fewer moves conflated, then lower p99, then more deliveries) is the one the
ratios use. Results go to Tests/Benchmarks/results.json and into BENCHMARKS.md between the bench
markers.

Usage: bench.py [--quick] [--only NAME[,NAME…]] | --render
  --quick   every scenario with short windows and a coarse knee ladder: a smoke run of a few minutes
  --repeats N  runs of each server in the drag-storm, many-session and small-session scenarios,
            interleaved between the servers (default 3, at least 9 in the small session; 1 with
            --quick); the ratios come from the medians
  --only    only these scenarios (dragStorm, knee, manySessions, manyKnee, smallSession, idleCpu, joinStorm, bigMap, threads, cluster, abuse;
            or by function name: big_map …): prints their results, target rows and commands, and writes
            neither results.json nor BENCHMARKS.md, which hold full runs, except the abuse scenario's
            own table (between the bench-abuse markers) and its entry in results.json: it compares
            only with itself
  --render  rewrite BENCHMARKS.md from the last results.json
"""
import atexit
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# The binary under test; MERIDIAN_BENCH_BIN picks another (an older build, to compare).
MERIDIAN = Path(os.environ.get("MERIDIAN_BENCH_BIN", ROOT / ".build/release/meridian"))
LWS_BIN = ROOT / ".build/bench/lws_rooms"
QUICK = "--quick" in sys.argv
REPEATS = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else (1 if QUICK else 3)
# A run whose load generator used more than this share of its core in the window measured the
# generator, not the server: no ratio is drawn from it.
GENERATOR_BOUND_PERCENT = 85
# The knee ladders' generator polls its sockets at most every 10 ms (the other scenarios every 2 ms):
# fewer, fuller reads cut its CPU per delivery, and the few milliseconds this adds to every
# server's latency do not matter against the knee's 100 ms p99.
KNEE_POLL_MS = 10
# The knee ladders give each server half of its core (a CPU cgroup: 5 ms of every 10 ms), so that
# the generator has twice the server's CPU: every server then reaches its knee at rates the
# generator drives within 85% of its core. Unrestricted, the strongest servers outrun one
# generator core at 1000 clients (1.8M deliveries/s) and at 5,000 members (100k/s).
KNEE_SERVER_SHARE = 0.5
# At 1000 clients a server's writes gather more frames each the more it is loaded, and on half a
# core the fastest server's knee reached rates (2.4M deliveries/s offered) where the generator
# used more than 85% of its core: a smaller share keeps every step a server can pass, and the
# first it fails, within the generator's reach.
KNEE_1000_SERVER_SHARE = 0.4
# The 100-client session's runs are short, and their p50 and p99 move by 10-20% from run to run
# with the phases the draggers happen to take: five runs of each server gave medians whose p99
# ratio moved by 0.08 between full runs. Nine, interleaved, at least.
SMALL_SESSION_REPEATS = 9
# Loopback processes a packet's receipt on the CPU that sent it, so the acknowledgements the
# generator's sockets send for a server's frames, and the server socket's handling of them, ran on
# the generator's core: about a third of its CPU at 600k deliveries/s, and more the more segments
# a server writes. Over a network the server's host does that work. Receive packet steering on
# `lo` does the same here: while the load scenarios run, every loopback packet is received on the
# server's CPU (CPU 0) and counted in the CPU of whatever runs there: the server. Restored after
# them and at exit. The abuse scenario keeps loopback as it is: it measures how a member fares on
# one server core while an attacker floods it from the other, and receipt steered onto the
# server's core would also put all of the attacker's traffic there, which a host with more
# cores spreads over them.
UNSTEERED = {"abuse"}
LO_RPS = sorted(Path("/sys/class/net/lo/queues").glob("rx-*/rps_cpus"))
NPROC = os.cpu_count() or 1
PIN = shutil.which("taskset") is not None and NPROC >= 2
COMMANDS = []
BASELINES = ("lws-poll", "lws-libev")

# The targets, as ratios to the baseline measured in the same run.
TARGETS = {
    "dragStormP99": 1.2,        # Meridian p99 <= 1.2x baseline (and no loss, nothing conflated)
    "knee": 0.8,                # Meridian knee >= 0.8x baseline
    "manyDeliveries": 0.8,      # 100x50: deliveries/s >= 0.8x
    "manyP99": 1.5,             # 100x50: p99 <= 1.5x
    "idleCpu": 2.0,             # 10k idle + 1k/s: server CPU <= 2x
    "joinP99Ms": 1000,          # join storm p99 <= 1 s
    "joinRssKiB": 1 << 20,      # join storm peak RSS <= 1 GiB
    "bigMapCut": 10,            # big map: viewport interest cuts deliveries per drag move >= 10x
    "bigMapJoinP99Ms": 50,      # big map: viewport join (join sent -> welcome) p99 <= 50 ms
    "dashboardDrawMs": 100,     # big map: the dashboard draws 100,000 annotations at zoom 2 (median) in <= 100 ms
    "relayOverhead": 1.15,      # threads: server CPU per delivery with --threads 2 <= 1.15x --threads 1, below saturation
    "latency": 1.0,             # p50 and p99 at 600k/s (1 session of 1000) and at 60k/s (1 session of 100) <= 1.0x
    "abuseP99": 2.0,            # abuse: a well-behaved member's ping p99 under each attack <= 2x its p99 unloaded
}


def pinned(cpu, argv):
    return (["taskset", "-c", str(cpu)] if PIN else []) + [str(a) for a in argv]


def cpu_cgroup(share):
    """A CPU cgroup whose tasks get at most `share` of one CPU, in periods of 10 ms (so a throttled
    server waits at most a few milliseconds): its cgroup.procs path, or None when this machine does
    not let us make one (then the ladders run unrestricted and say so)."""
    period = 10_000
    quota = int(period * share)
    v1 = Path("/sys/fs/cgroup/cpu")
    v2 = Path("/sys/fs/cgroup")
    try:
        if (v1 / "cpu.cfs_quota_us").exists():
            group = v1 / "meridian-bench"
            group.mkdir(exist_ok=True)
            (group / "cpu.cfs_period_us").write_text(str(period))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        elif "cpu" in (v2 / "cgroup.controllers").read_text().split():
            (v2 / "cgroup.subtree_control").write_text("+cpu")
            group = v2 / "meridian-bench"
            group.mkdir(exist_ok=True)
            (group / "cpu.max").write_text(f"{quota} {period}")
        else:
            return None
    except OSError:
        return None
    return group / "cgroup.procs"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_baseline():
    LWS_BIN.parent.mkdir(parents=True, exist_ok=True)
    flags = subprocess.check_output(["pkg-config", "--cflags", "--libs", "libwebsockets"], text=True).split()
    subprocess.check_call(["gcc", "-O2", "-D_GNU_SOURCE", "-o", str(LWS_BIN), str(HERE / "lws_rooms.c")] + flags + ["-lev"])


class Server:
    def __init__(self, kind, extra=(), lifted=True, share=None):
        """`share`: at most this share of its core (``cpu_cgroup``), if the machine allows it."""
        self.kind = kind
        procs = cpu_cgroup(share) if share else None
        self.share = share if procs else None
        if kind == "meridian":
            # Loopback, no tokens; the load generator opens many connections from few addresses at
            # the rates the scenarios set: lift the per-IP and per-connection request limits
            # (`lifted`; the abuse scenario keeps them).
            limits = ["--max-connections-per-ip", "100000", "--rate-limit", "1000000", "--rate-burst", "1000000"] if lifted else []
            argv = [MERIDIAN, "serve", "--port", "0", "--log-level", "error", "--auth", "none", *limits, *extra]
        elif kind in BASELINES:
            argv = [LWS_BIN, free_port()] + (["--libev"] if kind == "lws-libev" else [])
        else:
            raise ValueError(kind)
        self.argv = pinned(0, argv)
        # In the cgroup before it starts, so that every thread it makes is in it too.
        join = (lambda: procs.write_text(str(os.getpid()))) if procs else None
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=join)
        line = self.proc.stdout.readline()
        match = re.search(r":(\d+)", line.split("http://")[-1])
        if not match:
            raise RuntimeError(f"{kind} printed no port: {line!r}")
        self.port = int(match.group(1))

    def cpu_seconds(self):
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def conflated_frames(self):
        """Meridian's own count of conflated frames (/metrics), or None."""
        if self.kind != "meridian":
            return None
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5).read().decode()
        except OSError:
            return None
        m = re.search(r"^meridian_conflated_frames_total(?:\{[^}]*\})? (\d+)", text, re.M)
        return int(m.group(1)) if m else 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cpu_seconds_of(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(server, others=None, **options):
    """Runs `meridian load` against `server`: its report, with the server's CPU over the whole run
    and over the measurement window, its peak RSS, and (Meridian) its conflated-frame count.
    `others` (name -> pid): processes whose CPU over the window is reported too (`windowCpuSeconds`)."""
    others = others or {}
    argv = [MERIDIAN, "load", "--port", server.port, "--json", "--quiet"]
    for key, value in options.items():
        argv += ["--" + key.replace("_", "-")] + ([] if value is True else [value])
    argv = pinned(1, argv)
    COMMANDS.append(" ".join(str(a) for a in argv).replace(str(ROOT) + "/", ""))
    conflated0 = server.conflated_frames()
    cpu0, t0 = server.cpu_seconds(), time.monotonic()
    # The load tool starts its clock about 0.1 s after launch; the window follows ramp-up and settling.
    window_start = t0 + 0.15 + float(options.get("ramp_up", 1)) + float(options.get("settle", 1))
    window_end = window_start + float(options.get("duration", 10))
    state = {"rss": server.rss_kib()}
    done = threading.Event()

    def sample():
        while not done.wait(0.05):
            try:
                now = time.monotonic()
                if "cpuWindowStart" not in state and now >= window_start:
                    state["cpuWindowStart"] = (now, server.cpu_seconds())
                    state["othersStart"] = {k: cpu_seconds_of(pid) for k, pid in others.items()}
                if "cpuWindowEnd" not in state and now >= window_end:
                    state["cpuWindowEnd"] = (now, server.cpu_seconds())
                    state["othersEnd"] = {k: cpu_seconds_of(pid) for k, pid in others.items()}
                state["last"] = server.rss_kib()
                state["rss"] = max(state["rss"], state["last"])
            except OSError:
                return
    generator = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    others = {**others, "generator": generator.pid}
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        stdout, stderr = generator.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        generator.kill()
        stdout, stderr = generator.communicate()
    result = subprocess.CompletedProcess(argv, generator.returncode, stdout, stderr)
    done.set()
    sampler.join()
    wall = time.monotonic() - t0
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        report = {"failed": (result.stderr or result.stdout)[-400:]}
    report["exitCode"] = result.returncode
    report["serverCpuSeconds"] = round(server.cpu_seconds() - cpu0, 3)
    report["serverCpuPercent"] = round(100 * report["serverCpuSeconds"] / wall, 1)
    if "cpuWindowStart" in state and "cpuWindowEnd" in state:
        (a, ca), (b, cb) = state["cpuWindowStart"], state["cpuWindowEnd"]
        report["serverWindowCpuPercent"] = round(100 * (cb - ca) / max(b - a, 0.001), 2)
        report["windowSeconds"] = round(b - a, 3)
        if "othersEnd" in state:
            spent = {k: round(state["othersEnd"][k] - state["othersStart"][k], 3) for k in others}
            report["generatorWindowCpuPercent"] = round(100 * spent.pop("generator") / max(b - a, 0.001), 1)
            report["generatorBound"] = report["generatorWindowCpuPercent"] > GENERATOR_BOUND_PERCENT
            if spent:
                report["windowCpuSeconds"] = spent
    report["serverPeakRssKiB"] = state["rss"]
    report["serverEndRssKiB"] = state.get("last", state["rss"])
    conflated1 = server.conflated_frames()
    if conflated0 is not None and conflated1 is not None:
        report["serverConflatedFrames"] = conflated1 - conflated0
    return report


def summary(r):
    if "failed" in r:
        return {"failed": r["failed"]}
    keys = ("interest", "connected", "connectFailures", "deliveriesPerSecond", "lost", "movesSent", "movesDelivered",
            "movesReceived", "deliveriesPerMove", "movesConflated", "conflatedPercent", "outOfOrder", "duplicates", "dragsGranted",
            "dragsRefused", "movesOutsideCity", "welcomeAnnotations", "welcomeAnnotationsOutsideCity", "errors",
            "closeCodes", "cpuPercent", "serverCpuPercent", "serverWindowCpuPercent", "serverPeakRssKiB",
            "serverConflatedFrames", "generatorWindowCpuPercent", "generatorBound")
    out = {k: r.get(k) for k in keys if k in r}
    out["latencyMs"] = r["latencyMs"]
    out["joinMs"] = r["joinMs"]
    for key in ("windowSeconds", "windowCpuSeconds"):
        if key in r:
            out[key] = r[key]
    if "joinRequestMs" in r:
        out["joinRequestMs"] = r["joinRequestMs"]
    return out


def run_one(kind, extra=(), share=None, **options):
    server = Server(kind, extra, share=share)
    try:
        report = summary(load(server, **options))
        if server.share:
            report["serverShare"] = server.share
        return report
    finally:
        server.stop()


def repeated(kinds, repeats=None, **options):
    """Each server REPEATS (or `repeats`) times, interleaved (the order turns every round), then per
    server the median of its runs (``median_run``)."""
    runs = {k: [] for k in kinds}
    for i in range(repeats or REPEATS):
        for k in (kinds if i % 2 == 0 else kinds[::-1]):
            runs[k].append(run_one(k, **options))
    return {k: median_run(v) for k, v in runs.items()}


def median_run(runs):
    """One record for repeated runs of a server: medians of deliveries/s, latency percentiles and
    CPU over the runs the generator did not bound (all of them when every run was bound), the
    worst loss; each run's own figures under "runs"."""
    ok = [r for r in runs if "failed" not in r]
    if len(runs) == 1 or not ok:
        return runs[0]
    free = [r for r in ok if not r.get("generatorBound")] or ok
    med = lambda key: statistics.median(key(r) for r in free)
    out = dict(sorted(free, key=lambda r: r["latencyMs"]["p99"])[len(free) // 2])
    out["deliveriesPerSecond"] = med(lambda r: r["deliveriesPerSecond"])
    out["latencyMs"] = {**out["latencyMs"], **{q: med(lambda r: r["latencyMs"][q]) for q in ("p50", "p90", "p99", "p999", "max")
                                               if all(q in r["latencyMs"] for r in free)}}
    for key in ("conflatedPercent", "serverCpuPercent", "serverWindowCpuPercent", "generatorWindowCpuPercent", "cpuPercent"):
        if all(key in r for r in free):
            out[key] = round(med(lambda r: r[key]), 2)
    for key in ("lost", "movesConflated", "connectFailures"):
        out[key] = max(r.get(key, 0) for r in ok)
    out["generatorBound"] = all(r.get("generatorBound") for r in ok)
    out["runs"] = [{"failed": True} if "failed" in r else
                   {"deliveriesPerSecond": round(r["deliveriesPerSecond"]), "p50": r["latencyMs"]["p50"], "p99": r["latencyMs"]["p99"],
                    "generatorWindowCpuPercent": r.get("generatorWindowCpuPercent"), "generatorBound": r.get("generatorBound", False)}
                   for r in runs]
    return out


def generator_bound(*runs):
    """A note when any of `runs` measured the load generator rather than the server, else ""."""
    bound = [r for r in runs if r.get("generatorBound")]
    return ("generator-bound (" + ", ".join(f"{r.get('generatorWindowCpuPercent')}% of its core" for r in bound)
            + f" > {GENERATOR_BOUND_PERCENT}%): no ratio drawn") if bound else ""


def healthy(r):
    return "failed" not in r and r.get("lost", 1) == 0 and r.get("connectFailures", 1) == 0 and r["latencyMs"]["count"] > 0


def better(a, b):
    """The faster of two baseline runs: fewer moves conflated, then lower p99, then more deliveries."""
    if "failed" in a:
        return b
    if "failed" in b:
        return a
    key = lambda r: (not healthy(r), r.get("conflatedPercent", 0) >= 1, r["latencyMs"]["p99"], -r["deliveriesPerSecond"])
    return a if key(a) <= key(b) else b


def with_best(results):
    """Adds "lws" (the faster loop's run, with "loop" naming it) to results holding both baseline runs."""
    a, b = results.get("lws-poll"), results.get("lws-libev")
    if a and b:
        best = better(a, b)
        results["lws"] = {**best, "loop": "poll" if best is a else "libev"}
    return results


def drag_storm():
    window = 4 if QUICK else 10
    options = dict(clients=1000, draggers=10, rate=60, contention=0, ramp_up=2 if QUICK else 3,
                   settle=3 if QUICK else 4, duration=window)
    return with_best(repeated(("meridian",) + BASELINES, **options))


def small_session():
    """1 session of 100 clients, 10 draggers x 60 Hz: 60k deliveries/s, where latency, not
    throughput, is what a deployment sees. The generator polls its sockets whenever it can
    (--coalesce-ms 0): by default it polls at most every 2 ms, which alone puts about 4 ms
    between a move's send and its receipt, whatever the server."""
    options = dict(clients=100, draggers=10, rate=60, contention=0, ramp_up=2, settle=2 if QUICK else 3,
                   duration=4 if QUICK else 10, coalesce_ms=0)
    # More runs than elsewhere: SMALL_SESSION_REPEATS.
    return with_best(repeated(("meridian",) + BASELINES, repeats=REPEATS if QUICK else max(REPEATS, SMALL_SESSION_REPEATS), **options))


def knee_ok(r):
    return healthy(r) and r.get("conflatedPercent", 100) < 1 and r["latencyMs"]["p99"] <= 100


def ladder_knee(ladder, offered, share=None, **options):
    """Each server up `ladder` (draggers per session and their rate in Hz; `offered(draggers, rate)`
    the deliveries/s offered), stopping at the first step that fails ``knee_ok``: the knee is the
    highest passing step. A step the generator bounded fails too, and says so: the knee above it is
    not known."""
    results = {}
    for kind in ("meridian",) + BASELINES:
        steps = []
        for draggers, rate in ladder:
            r = run_one(kind, draggers=draggers, rate=rate, contention=0, share=share or KNEE_SERVER_SHARE, **options)
            ok = knee_ok(r) and not r.get("generatorBound")
            if "serverWindowCpuPercent" in r and r.get("deliveriesPerSecond"):
                r["serverCpuMicrosPerDelivery"] = round(r["serverWindowCpuPercent"] / 100 / r["deliveriesPerSecond"] * 1e6, 3)
            steps.append({"draggers": draggers, "rate": rate, "offered": offered(draggers, rate), "ok": ok, **r})
            if not ok:
                break
        passing = [s for s in steps if s["ok"]]
        results[kind] = {"kneeOffered": max((s["offered"] for s in passing), default=0),
                         "kneeDelivered": max((s["deliveriesPerSecond"] for s in passing), default=0), "steps": steps,
                         "generatorBound": bool(steps) and bool(steps[-1].get("generatorBound"))}
    a, b = results["lws-poll"], results["lws-libev"]
    best = a if (a["kneeOffered"], a["kneeDelivered"]) >= (b["kneeOffered"], b["kneeDelivered"]) else b
    results["lws"] = {**best, "loop": "poll" if best is a else "libev"}
    return results


def knee():
    """Highest offered rate at 1000 clients with < 1% of moves conflated and p99 <= 100 ms: draggers
    at 60 Hz up a ladder, stopping at the first step that fails."""
    ladder = [(d, 60) for d in ([2, 10, 20] if QUICK else [2, 5, 10, 13, 16, 20, 25, 30, 40, 50])]
    return ladder_knee(ladder, lambda d, rate: d * rate * 1000, share=KNEE_1000_SERVER_SHARE, clients=1000, ramp_up=2, settle=2 if QUICK else 3,
                       duration=3 if QUICK else 5, coalesce_ms=KNEE_POLL_MS)


def many_sessions():
    """100 sessions x 50 clients at a rate every server sustains on half a core (one dragger per
    session at 5 Hz, out of step: 25k deliveries/s): latency and CPU per delivery with 5,000
    members. How far each server goes is the many-session knee's to say. (At 2 draggers x 60 Hz
    on a whole core, as this scenario ran before, the generator's core ran out before the
    baseline's: 94-98% of it, every run void.)"""
    options = dict(clients=5000, sessions=100, draggers=1, rate=5, contention=0, ramp_up=3,
                   settle=2 if QUICK else 3, duration=4 if QUICK else 10, coalesce_ms=KNEE_POLL_MS, stagger=True,
                   share=KNEE_SERVER_SHARE)
    return with_best(repeated(("meridian",) + BASELINES, **options))


def many_knee():
    """The knee of 100 sessions x 50 clients: one dragger per session at 10 to 60 Hz, then more
    draggers at 60 Hz, up a ladder (each move reaches the session's 50 clients), the same test as at
    1000 clients, with the server's CPU per delivery at each step. Its steps start low: every
    member is written about as often as it gets a frame, and on this machine a loopback `send`
    costs the server about 9 µs, so 5,000 members getting 20 frames a second each already keep
    one core busy. The draggers move out of step (`--stagger`), as the users of 100 different
    sessions do: in step, the 100 moves of each interval arrive together and their 5,000 writes,
    some 45 ms of a whole core, put every step's p99 near 100 ms on half a core."""
    ladder = [(1, 5), (1, 10), (1, 20)] if QUICK else [(1, 5), (1, 6), (1, 7), (1, 8), (1, 9), (1, 10), (1, 15), (1, 20), (1, 30), (1, 60)]
    return ladder_knee(ladder, lambda d, rate: d * rate * 50 * 100, clients=5000, sessions=100, ramp_up=3,
                       settle=2 if QUICK else 3, duration=3 if QUICK else 5, coalesce_ms=KNEE_POLL_MS, stagger=True)


def idle_cpu():
    """10,000 connections in 100 sessions, one dragger at 10 Hz in one of them: 1,000 deliveries/s.
    Server CPU over the measurement window only (the connects are outside it)."""
    options = dict(clients=10_000, sessions=100, draggers=1, drag_sessions=1, rate=10, contention=0,
                   ramp_up=5, settle=2, duration=5 if QUICK else 10, coalesce_ms=5)
    results = {k: run_one(k, **options) for k in ("meridian",) + BASELINES}
    # The cheaper loop among the runs that connected every client (a run that did not is not comparable).
    a, b = results["lws-poll"], results["lws-libev"]
    key = lambda r: ("failed" in r, -(r.get("connected") or 0), r.get("serverWindowCpuPercent", 1e9))
    best = a if key(a) <= key(b) else b
    if "failed" not in best:
        results["lws"] = {**best, "loop": "poll" if best is a else "libev"}
    return results


def join_storm():
    # Long enough for slow joins to complete inside the run even in --quick: what is measured is the joins.
    r = run_one("meridian", clients=1000, draggers=0, annotations=10_000, ramp_up=2, settle=0, duration=12)
    single = run_one("meridian", clients=5, draggers=0, annotations=10_000, ramp_up=0.5, settle=0, duration=2)
    return {**r, "singleJoinMs": single.get("joinMs")}


def big_map():
    """A big map (Meridian only: the baseline has no interest filtering): 1 session, 1,000 clients
    each watching its own city at zoom 12, 10 draggers x 60 Hz each dragging in its own city. With
    viewport interest and 100,000 annotations around the cities, then with everything-interest and
    a few annotations: there every member receives every move whatever the snapshot holds (and 1,000
    joins of a 100,000-annotation snapshot would be some 20 GB over loopback). That comparison runs
    5 draggers: what it shows is the deliveries per move, and at 10 x 60 Hz to every member the
    generator, which also checks each move against its client's city, used 88% of its core."""
    common = dict(clients=1000, draggers=10, rate=60, contention=0, ramp_up=3,
                  settle=2 if QUICK else 3, duration=3 if QUICK else 8)
    viewport = run_one("meridian", interest="viewport", annotations=100_000, **common)
    everything = run_one("meridian", interest="everything", annotations=100, **{**common, "draggers": 5})
    return {"viewport": {**viewport, "annotations": 100_000}, "everything": {**everything, "annotations": 100},
            "dashboard": dashboard_draw(runs=3 if QUICK else 10)}


def threads():
    """Service threads: the 100 sessions x 50 clients scenario with the server under --threads 1 and
    --threads 2, both pinned to CPU 0 (the load generator needs the other core). With two threads
    the listener hands connections to both in turn, so every session has members on both and half
    of each session's deliveries go through the relay.

    "light": 2 draggers x 2 Hz per session, about half the core with one thread, in five alternating
    pairs: server CPU-seconds per delivery over the window (the run reported for each is its median,
    the ratio the median of the pairs' ratios) and the delivery latency. A saturated server batches
    more frames per write the busier it is, so CPU per delivery is compared below saturation.
    "saturated": 2 draggers x 10 Hz, one pair, on half the core (like the knees: on a whole core
    the generator's core runs out first) and out of step: what each delivers when the CPU is the
    limit (two threads then share it, which a deployment with a core per thread does not do)."""
    def measured(n, rate, **more):
        options = dict(clients=5000, sessions=100, draggers=2, rate=rate, contention=0, ramp_up=3,
                       settle=2 if QUICK else 3, duration=4 if QUICK else 10, **more)
        r = run_one("meridian", extra=("--threads", str(n)), **options)
        if "failed" not in r and r.get("serverWindowCpuPercent") and r.get("deliveriesPerSecond"):
            r["cpuMicrosecondsPerDelivery"] = round(1e6 * r["serverWindowCpuPercent"] / 100 / r["deliveriesPerSecond"], 3)
        return r

    runs = {"1": [], "2": []}
    ratios = []
    for _ in range(1 if QUICK else 5):
        pair = {n: measured(n, rate=2) for n in (1, 2)}
        for n, r in pair.items():
            runs[str(n)].append(r)
        if all("cpuMicrosecondsPerDelivery" in r for r in pair.values()):
            ratios.append(round(pair[2]["cpuMicrosecondsPerDelivery"] / pair[1]["cpuMicrosecondsPerDelivery"], 3))
    result = {}
    for n, rs in runs.items():
        ok = sorted((r for r in rs if "cpuMicrosecondsPerDelivery" in r), key=lambda r: r["cpuMicrosecondsPerDelivery"])
        result[n] = ok[len(ok) // 2] if ok else rs[-1]
        result[n]["lostInAllRuns"] = sum(r.get("lost", 0) for r in rs)
    result["ratios"] = ratios
    if ratios:
        result["ratio"] = sorted(ratios)[len(ratios) // 2]
    result["saturated"] = {str(n): measured(n, rate=10, share=KNEE_SERVER_SHARE, stagger=True) for n in (1, 2)}
    return result


def cluster():
    """A cluster on this host: three nodes (one service thread each) on one Redis and one PostgreSQL,
    against one node alone (no cluster) and one node in cluster mode, under the same load: 100
    sessions x 50 clients, 2 draggers x 2 Hz each (below saturation), the clients connected to the
    nodes in turn so that every session has members on all three and two thirds of its deliveries
    cross nodes. Every server process and Redis on CPU 0, the load on CPU 1. Reported: the delivery
    latency (the added p99 is three nodes' over one node's), the servers' and Redis's CPU over the
    window per delivery, and what crossed nodes (meridian_cluster_messages_total). The three nodes
    run again on a Redis reached over TLS (rediss://, its own certificates): what TLS to Redis costs
    the servers per delivery."""
    sys.path.insert(0, str(ROOT / "Tests/python"))
    from cluster_fixture import RedisCertificates, RedisServer
    from pg_fixture import PostgresServer
    options = dict(clients=5000, sessions=100, draggers=2, rate=2, contention=0, ramp_up=3,
                   settle=2 if QUICK else 3, duration=4 if QUICK else 10)
    certificates = RedisCertificates()
    redis, tls_redis, postgres = RedisServer(), RedisServer(tls=certificates), PostgresServer()
    if PIN:
        os.sched_setaffinity(redis.process.pid, {0})
        os.sched_setaffinity(tls_redis.process.pid, {0})
    result = {}
    try:
        def cluster_messages(node):
            text = urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=5).read().decode()
            return sum(int(float(v)) for v in re.findall(r'^meridian_cluster_messages_total\{direction="sent"\} (\S+)', text, re.M))

        def run(count, clustered, redis=redis):
            store = postgres.create_database()
            extra = ("--threads", "1") + (("--cluster", redis.url, "--store", store) if clustered else ())
            nodes = [Server("meridian", extra) for _ in range(count)]
            try:
                if clustered:
                    for n in nodes:
                        ready_or_fail(n)
                others = {f"node{i}": n.proc.pid for i, n in enumerate(nodes[1:], 1)}
                others["redis"] = redis.process.pid
                sent0 = sum(cluster_messages(n) for n in nodes) if clustered else 0
                report = load(nodes[0], others=others, **({"ports": ",".join(str(n.port) for n in nodes)} if count > 1 else {}), **options)
                r = summary(report)
                if clustered:
                    r["clusterMessages"] = sum(cluster_messages(n) for n in nodes) - sent0
                if "windowCpuSeconds" in r and r.get("deliveriesPerSecond"):
                    deliveries = r["deliveriesPerSecond"] * r["windowSeconds"]
                    servers = r["serverWindowCpuPercent"] / 100 * r["windowSeconds"] + sum(v for k, v in r["windowCpuSeconds"].items() if k != "redis")
                    r["serverCpuMicrosecondsPerDelivery"] = round(1e6 * servers / deliveries, 2)
                    r["redisCpuMicrosecondsPerDelivery"] = round(1e6 * r["windowCpuSeconds"]["redis"] / deliveries, 3)
                return r
            finally:
                for n in nodes:
                    n.stop()
        result["single"] = run(1, clustered=False)
        result["one"] = run(1, clustered=True)
        result["three"] = run(3, clustered=True)
        result["threeTLS"] = run(3, clustered=True, redis=tls_redis)
        one, three, tls = result["one"], result["three"], result["threeTLS"]
        if "latencyMs" in one and "latencyMs" in three:
            result["addedP99Ms"] = round(three["latencyMs"]["p99"] - one["latencyMs"]["p99"], 2)
        if three.get("serverCpuMicrosecondsPerDelivery") and tls.get("serverCpuMicrosecondsPerDelivery"):
            result["tlsServerCpuRatio"] = round(tls["serverCpuMicrosecondsPerDelivery"] / three["serverCpuMicrosecondsPerDelivery"], 2)
    finally:
        redis.close()
        tls_redis.close()
        certificates.close()
        postgres.close()
    return result


def ready_or_fail(node, within=30):
    """Returns once the node's /readyz answers 200 (a cluster node has joined its cluster)."""
    deadline = time.monotonic() + within
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/readyz", timeout=5) as r:
                if r.status == 200:
                    return
        except urllib.error.HTTPError as e:
            reason = e.read().decode(errors="replace")
            if time.monotonic() > deadline:
                raise RuntimeError(f"node on port {node.port} not ready within {within} s: {reason}")
        time.sleep(0.1)  # polling /readyz, as a load balancer does


def cluster_markdown(results):
    c = results.get("cluster") or {}
    lines = ["### Cluster: 100 sessions x 50 clients, 2 draggers x 2 Hz, members of every session on every node (Meridian)", "",
             "| setup | deliveries/s | latency ms p50 / p99 | servers' CPU µs per delivery | Redis CPU µs per delivery | "
             "messages across nodes | lost |", "|---|---|---|---|---|---|---|"]
    for key, name in (("single", "one node, no cluster"), ("one", "one node, --cluster (Redis, PostgreSQL)"),
                      ("three", "three nodes, clients spread"), ("threeTLS", "three nodes, Redis over TLS")):
        r = c.get(key) or {}
        if "latencyMs" not in r:
            lines.append(f"| {name} | failed: {r.get('failed', 'no run')!s:.80} | | | | | |")
            continue
        lines.append(f"| {name} | {r['deliveriesPerSecond']:,.0f} | {r['latencyMs']['p50']:.2f} / {r['latencyMs']['p99']:.2f} | "
                     f"{r.get('serverCpuMicrosecondsPerDelivery', '-')} | {r.get('redisCpuMicrosecondsPerDelivery', '-')} | "
                     f"{r.get('clusterMessages', '-')} | {r.get('lost')} |")
    if "addedP99Ms" in c:
        lines += ["", f"Added p99 with members spread over three nodes: {c['addedP99Ms']} ms (three nodes against one node in cluster mode)."]
    if "tlsServerCpuRatio" in c:
        lines += ["", f"TLS to Redis: {c['tlsServerCpuRatio']}x the servers' CPU per delivery of three nodes on plain Redis."]
    return lines


ATTACKS_PY = ROOT / "Tests/python/abuse_attacks.py"
MEMBER_PY = HERE / "abuse_member.py"
# The abuse scenario's server: its own rate limit (200/s, burst 400) and message size limit
# (64 KiB), and the per-address connection limit and handshake timeout of test_abuse.py.
ABUSE_FLAGS = ("--max-connections", "4000", "--max-connections-per-ip", "300", "--handshake-timeout", "2")
ABUSE_SESSION = "abuse"
ABUSE_NAMES = {"messageFlood": "message flood: 1000 clients in the session, each at 250 requests/s (limit 200/s)",
               "connectionFlood": "connection flood: 800 upgrades a round (300 accepted per address, 429 after), 1000 silent TCP connections",
               "slowloris": "slowloris: 100 partial requests and 50 dribbling a byte every 0.3 s, a round every ~2 s",
               "oversize": "oversize frames: 8 connections at a time, each a 128 KiB message in one frame (closed 1009)",
               "fragmented": "fragmented frames: 8 connections at a time, 63 KiB messages in 64-byte fragments, every 4th 128 KiB in 128-byte ones (1009)"}


def abuse_attack_args(name, port, seconds):
    """The attack's name in abuse_attacks.py and its arguments: bounded in connections and time,
    only to the server on loopback."""
    base = {"host": "127.0.0.1", "port": port, "session": ABUSE_SESSION}
    if name == "messageFlood":
        # `seconds` counts from the moment every client has joined.
        return "crowd_flood", {**base, "clients": 1000, "rate": 250, "sources": [f"127.0.0.{i}" for i in range(2, 6)],
                               "seconds": seconds, "ramp": 60}
    if name == "connectionFlood":
        args = {**base, "phases": [[["127.0.0.7", 400]], [["127.0.0.8", 400]]], "raw": 1000, "raw_source": "127.0.0.9",
                "handshake_timeout": 2}
        return "repeated", {"attack": "connection_flood", "args": args, "seconds": seconds}
    if name == "slowloris":
        args = {**base, "source": "127.0.0.11", "partial": 100, "drip": 50, "drip_interval": 0.3, "handshake_timeout": 2}
        return "repeated", {"attack": "slowloris", "args": args, "seconds": seconds}
    if name == "oversize":
        return "oversize", {**base, "source": "127.0.0.12", "limit": 65536, "concurrency": 8, "seconds": seconds}
    if name == "fragmented":
        return "fragmented", {**base, "source": "127.0.0.13", "limit": 65536, "concurrency": 8, "over_every": 4, "seconds": seconds}
    raise ValueError(name)


def read_line(proc, timeout):
    """The next stdout line of `proc` within `timeout` seconds ("" at its end or on timeout)."""
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return out[0] if out else ""


def abuse_one(name, window, repeats):
    """One attack against a fresh server: `repeats` pairs of a phase without the attack and one
    with it, interleaved, the member measuring `window` seconds each."""
    server = Server("meridian", ABUSE_FLAGS, lifted=False)
    member_argv = pinned(1, [sys.executable, MEMBER_PY, "127.0.0.1", server.port, ABUSE_SESSION])
    COMMANDS.append(" ".join(str(a) for a in member_argv).replace(str(ROOT) + "/", ""))
    member = subprocess.Popen(member_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    result = {"unloaded": [], "attack": [], "attacker": []}
    try:
        hello = read_line(member, 30)
        if not hello:
            return {"failed": "the member did not join"}
        result["memberScheduling"] = json.loads(hello).get("scheduling")

        def measure(label):
            before = schedstat(server.proc.pid)
            member.stdin.write(f"measure {label} {window}\n")
            member.stdin.flush()
            line = read_line(member, window + 30)
            if not line:
                return {"failed": "the member did not answer"}
            after = schedstat(server.proc.pid)
            # CPU the server used in the window, and how long its threads waited for a CPU
            # (other processes on its core: the machine is shared).
            return {**json.loads(line), "serverCpuMs": round((after[0] - before[0]) / 1e6, 1),
                    "serverRunQueueWaitMs": round((after[1] - before[1]) / 1e6, 1)}

        for i in range(repeats):
            result["unloaded"].append(measure("unloaded"))
            attack, args = abuse_attack_args(name, server.port, window + 1)
            argv = pinned(1, [sys.executable, ATTACKS_PY, attack, json.dumps(args)])
            if i == 0:
                COMMANDS.append(" ".join(f"'{a}'" if a.startswith("{") else str(a) for a in argv).replace(str(ROOT) + "/", ""))
            attacker = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ready = read_line(attacker, 90).strip()
            if ready != "ready":
                attacker.kill()
                result["attacker"].append({"failed": f"not ready: {ready!r} {attacker.stderr.read()[-300:]}"})
                break
            result["attack"].append(measure("attack"))
            try:
                out, err = attacker.communicate(timeout=120)
                lines = out.strip().splitlines()
                result["attacker"].append(compact(json.loads(lines[-1])) if attacker.returncode == 0 and lines
                                          else {"failed": err[-300:]})
            except subprocess.TimeoutExpired:
                attacker.kill()
                attacker.communicate()
                result["attacker"].append({"failed": "still running 120 s after the window"})
            # The attack's connections close and time out before the next quiet phase.
            time.sleep(3)
        result["serverAlive"] = server.proc.poll() is None
    finally:
        if member.poll() is None:
            try:
                member.stdin.write("quit\n")
                member.stdin.flush()
                member.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                member.kill()
        server.stop()
    result.update(abuse_summary(result))
    return result


def compact(value):
    """An attacker's report with its long lists of numbers (one per connection) cut to their count,
    minimum and maximum, for results.json."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items()}
    if isinstance(value, list) and len(value) > 20 and all(isinstance(v, (int, float)) for v in value):
        return {"count": len(value), "min": min(value), "max": max(value)}
    if isinstance(value, list):
        return [compact(v) for v in value]
    return value


def schedstat(pid):
    """(CPU time, time waiting on a run queue) of every thread of `pid`, in ns."""
    cpu = wait = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue
        cpu += int(fields[0])
        wait += int(fields[1])
    return cpu, wait


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else round((values[mid - 1] + values[mid]) / 2, 3)


def abuse_summary(result):
    """Medians over the repeats of each phase's percentiles, and the ratios attack / unloaded."""
    out = {}
    for phase in ("unloaded", "attack"):
        runs = [r for r in result[phase] if "pingMs" in r]
        out[phase + "Median"] = {kind: {q: median([r[kind].get(q) for r in runs]) for q in ("p50", "p99")}
                                 for kind in ("pingMs", "ackMs", "eventMs")}
    ratios = {}
    for kind in ("pingMs", "ackMs", "eventMs"):
        for q in ("p50", "p99"):
            a, u = out["attackMedian"][kind][q], out["unloadedMedian"][kind][q]
            ratios[f"{kind[:-2]}{q.upper()}"] = round(a / u, 2) if a is not None and u else None
    out["ratios"] = ratios
    out["pairRatiosPingP99"] = [round(a["pingMs"]["p99"] / u["pingMs"]["p99"], 2)
                                for u, a in zip(result["unloaded"], result["attack"])
                                if "pingMs" in u and "pingMs" in a and u["pingMs"].get("p99") and a["pingMs"].get("p99")]
    for phase in ("unloaded", "attack"):
        runs = [r for r in result[phase] if "serverRunQueueWaitMs" in r]
        out[phase + "ServerCpuMs"] = median([r["serverCpuMs"] for r in runs])
        out[phase + "RunQueueWaitMs"] = median([r["serverRunQueueWaitMs"] for r in runs])
    out["faults"] = sorted({f"{phase}: {k}" for phase in ("unloaded", "attack") for r in result[phase]
                            for k in ("failed", "timeouts", "seqErrors", "closed", "refused") if r.get(k)})
    return out


def abuse():
    """A well-behaved member (Tests/Benchmarks/abuse_member.py: a pinger and an editor in one
    session) measured without an attack and during each attack (Tests/python/abuse_attacks.py),
    interleaved, on a fresh server for each attack: the server pinned to CPU 0, the attacker
    and the member to CPU 1 (the member at real-time priority, so the attacker delays only
    the server). The server keeps its own limits (rate 200/s, burst 400; 64 KiB messages)."""
    window = 3 if QUICK else 8
    # Single windows differ by up to 4x in p99 on a shared 2-core machine: ratios are drawn
    # from the medians of five.
    repeats = 1 if QUICK else 5
    return {"window": window, "repeats": repeats,
            **{name: abuse_one(name, window, repeats) for name in ABUSE_NAMES}}


def abuse_markdown(results):
    a = results.get("abuse") or {}
    m = results.get("machine", {})
    lines = [f"Run {results.get('date')}{' (--quick)' if results.get('quick') else ''} on {m.get('nproc')} CPU(s) "
             f"({m.get('cpu')}), Linux {m.get('kernel')}; load average at start {m.get('loadAverageAtStart')}; server pinned to "
             f"CPU 0, attacker and member to CPU 1: {m.get('pinned')}. Medians of {a.get('repeats')} interleaved pairs of "
             f"{a.get('window')} s windows (unloaded, then under attack); ping every 20 ms, edit every 50 ms.", "",
             "| attack | ping ms p50: unloaded → attack | ping ms p99: unloaded → attack | ping p99 ratio (pairs) "
             "| edit ack ms p99: unloaded → attack | event ms p99: unloaded → attack | server CPU ms, run-queue wait ms per window: unloaded → attack "
             "| attacker | faults |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, title in ABUSE_NAMES.items():
        r = a.get(name) or {}
        if "unloadedMedian" not in r:
            lines.append(f"| {title} | failed: {r.get('failed', 'not run')!s:.80} | | | | | | | |")
            continue
        u, t, ratio = r["unloadedMedian"], r["attackMedian"], r["ratios"]

        def pair(kind, q):
            return f"{u[kind][q]} → {t[kind][q]}"
        lines.append(f"| {title} | {pair('pingMs', 'p50')} | {pair('pingMs', 'p99')} | **{ratio['pingP99']}x** "
                     f"({', '.join(str(x) for x in r['pairRatiosPingP99'])}) | {pair('ackMs', 'p99')} ({ratio['ackP99']}x) "
                     f"| {pair('eventMs', 'p99')} ({ratio['eventP99']}x) "
                     f"| {r.get('unloadedServerCpuMs')}, {r.get('unloadedRunQueueWaitMs')} → {r.get('attackServerCpuMs')}, {r.get('attackRunQueueWaitMs')} "
                     f"| {abuse_attacker_note(name, r)} "
                     f"| {'; '.join(r['faults']) or 'none'}{'' if r.get('serverAlive', True) else '; SERVER DIED'} |")
    return lines


def abuse_attacker_note(name, r):
    """What the attacker did and saw, in a few words."""
    reports = [x for x in r.get("attacker", []) if "failed" not in x]
    if not reports:
        return "failed"
    if name == "messageFlood":
        sent = sum(x["requests"] for x in reports)
        secs = sum(x["attack_seconds"] - (x.get("ready_seconds") or 0) for x in reports)
        closes = {}
        for x in reports:
            for k, v in x["closes"].items():
                closes[k] = closes.get(k, 0) + v
        return (f"{sent / max(secs, 0.001):,.0f} requests/s sent; closed: "
                f"{', '.join(f'{k} x{v}' for k, v in sorted(closes.items())) or 'none'}")
    if name in ("connectionFlood", "slowloris"):
        return f"{sum(x['rounds'] for x in reports)} rounds"
    return f"{sum(x['messages'] for x in reports)} messages"


def write_abuse(results):
    """The abuse scenario's table (between the bench-abuse markers of BENCHMARKS.md) and its entry in
    results.json: written by every run that includes it, full or --only."""
    path = HERE / "results.json"
    stored = json.loads(path.read_text()) if path.exists() else {}
    stored["abuse"] = {**results["abuse"], "date": results["date"], "machine": results["machine"], "quick": results["quick"],
                       "commands": [c for c in COMMANDS if "abuse_" in c]}
    path.write_text(json.dumps(stored, indent=2) + "\n")
    doc = ROOT / "BENCHMARKS.md"
    text = doc.read_text()
    begin, end = "<!-- bench-abuse:begin -->", "<!-- bench-abuse:end -->"
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    before, rest = text.split(begin, 1)
    after = rest.split(end, 1)[1]
    body = abuse_markdown(results) + ["", "```", "python3 Tests/Benchmarks/bench.py --only abuse" + (" --quick" if results.get("quick") else "")]
    body += stored["abuse"]["commands"] + ["```"]
    doc.write_text(before + begin + "\n" + "\n".join(body) + "\n" + end + after)
    print(f"bench: wrote the abuse table into {doc.relative_to(ROOT)} and {path.relative_to(ROOT)}")


def dashboard_draw(runs):
    """The dashboard's session view of 100,000 annotations at zoom 2 in headless Chromium: from the
    clusters message's arrival to the map drawn, over `runs` page loads (Tests/Benchmarks/dashboard_draw.py)."""
    argv = [sys.executable, str(ROOT / "Tests/Benchmarks/dashboard_draw.py"), "--bin", str(MERIDIAN), "--runs", str(runs)]
    COMMANDS.append(" ".join(argv[1:]).replace(str(ROOT) + "/", ""))
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as error:
        return {"failed": str(error)[:300]}


def machine():
    model = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                  if l.startswith("model name")), platform.processor())
    mem = next((l.split(":", 1)[1].strip() for l in Path("/proc/meminfo").read_text().splitlines()
                if l.startswith("MemTotal")), "?")
    return {"nproc": NPROC, "cpu": model, "memory": mem, "kernel": platform.release(), "pinned": PIN,
            "loadAverageAtStart": round(os.getloadavg()[0], 2)}


def ratios(results):
    """One row per target: Meridian's figure, the baseline's, the ratio, the target and whether it is met."""
    rows = []

    def row(name, m, b, ratio, target, met, note=""):
        rows.append({"target": name, "meridian": m, "baseline": b, "ratio": ratio, "wanted": target, "met": met, "note": note})

    ds = results.get("dragStorm", {})
    m, b = ds.get("meridian", {}), ds.get("lws", {})
    if "latencyMs" in m and "latencyMs" in b and generator_bound(m, b):
        row("1000 clients, 10 draggers x 60 Hz: p99, no loss, nothing conflated", f"p99 {m['latencyMs']['p99']:.2f} ms",
            f"p99 {b['latencyMs']['p99']:.2f} ms ({b['loop']})", None, f"<= {TARGETS['dragStormP99']}x", False, generator_bound(m, b))
    elif "latencyMs" in m and "latencyMs" in b:
        r = m["latencyMs"]["p99"] / max(b["latencyMs"]["p99"], 0.001)
        clean = m["lost"] == 0 and m.get("movesConflated", 1) == 0
        row("1000 clients, 10 draggers x 60 Hz: p99, no loss, nothing conflated",
            f"p99 {m['latencyMs']['p99']:.2f} ms, lost {m['lost']}, conflated {m.get('movesConflated')}",
            f"p99 {b['latencyMs']['p99']:.2f} ms ({b['loop']})", round(r, 2), f"<= {TARGETS['dragStormP99']}x, 0 lost, 0 conflated",
            r <= TARGETS["dragStormP99"] and clean)
    for key, name in (("dragStorm", "1 session of 1000, 10 x 60 Hz (600k/s)"), ("smallSession", "1 session of 100, 10 x 60 Hz (60k/s)")):
        m, b = results.get(key, {}).get("meridian", {}), results.get(key, {}).get("lws", {})
        if "latencyMs" not in m or "latencyMs" not in b:
            continue
        for q in ("p50", "p99"):
            r = m["latencyMs"][q] / max(b["latencyMs"][q], 0.001)
            note = generator_bound(m, b)
            row(f"{name}: latency {q}", f"{m['latencyMs'][q]:.3f} ms", f"{b['latencyMs'][q]:.3f} ms ({b['loop']})",
                None if note else round(r, 2), f"<= {TARGETS['latency']}x", not note and r <= TARGETS["latency"], note)
    for key, name in (("knee", "knee at 1000 clients"), ("manyKnee", "knee of 100 sessions x 50 clients")):
        k = results.get(key, {})
        if "meridian" not in k or "lws" not in k:
            continue
        m, b = k["meridian"]["kneeOffered"], k["lws"]["kneeOffered"]
        r = m / max(b, 1)
        ladder_top = max(s["offered"] for s in k["lws"]["steps"])
        note = "baseline passed the whole ladder: its knee is higher than shown" if k["lws"]["steps"][-1]["ok"] and b == ladder_top else ""
        bound = [kind for kind in ("meridian", "lws") if k[kind].get("generatorBound")]
        if bound:
            note = f"the generator bounded the step above the knee of {' and '.join(bound)}: no ratio drawn"
        row(f"{name} (< 1% conflated, p99 <= 100 ms), offered deliveries/s", f"{m:,}", f"{b:,} ({k['lws']['loop']})",
            None if bound else round(r, 2), f">= {TARGETS['knee']}x", not bound and r >= TARGETS["knee"], note)
    ms = results.get("manySessions", {})
    m, b = ms.get("meridian", {}), ms.get("lws", {})
    if "latencyMs" in m and "latencyMs" in b and generator_bound(m, b):
        row("100 sessions x 50 clients: deliveries/s and p99", f"{m['deliveriesPerSecond']:,.0f}, p99 {m['latencyMs']['p99']:.2f} ms",
            f"{b['deliveriesPerSecond']:,.0f}, p99 {b['latencyMs']['p99']:.2f} ms ({b['loop']})", None,
            f">= {TARGETS['manyDeliveries']}x, <= {TARGETS['manyP99']}x", False, generator_bound(m, b))
    elif "latencyMs" in m and "latencyMs" in b:
        rd = m["deliveriesPerSecond"] / max(b["deliveriesPerSecond"], 1)
        rp = m["latencyMs"]["p99"] / max(b["latencyMs"]["p99"], 0.001)
        row("100 sessions x 50 clients: deliveries/s", f"{m['deliveriesPerSecond']:,.0f}", f"{b['deliveriesPerSecond']:,.0f} ({b['loop']})",
            round(rd, 2), f">= {TARGETS['manyDeliveries']}x", rd >= TARGETS["manyDeliveries"])
        row("100 sessions x 50 clients: p99", f"{m['latencyMs']['p99']:.2f} ms", f"{b['latencyMs']['p99']:.2f} ms ({b['loop']})",
            round(rp, 2), f"<= {TARGETS['manyP99']}x", rp <= TARGETS["manyP99"])
    ic = results.get("idleCpu", {})
    m, b = ic.get("meridian", {}), ic.get("lws", {})
    if "serverWindowCpuPercent" in m and "serverWindowCpuPercent" in b:
        r = m["serverWindowCpuPercent"] / max(b["serverWindowCpuPercent"], 0.01)
        complete = m.get("connected") == 10_000
        row("10,000 idle connections + 1,000 deliveries/s: server CPU", f"{m['serverWindowCpuPercent']:.1f}% ({m.get('connected')} connected)",
            f"{b['serverWindowCpuPercent']:.1f}% ({b['loop']}, {b.get('connected')} connected)", round(r, 2), f"<= {TARGETS['idleCpu']}x",
            complete and r <= TARGETS["idleCpu"], "" if complete else "not every Meridian client was connected in the window")
    j = results.get("joinStorm", {})
    if "joinMs" in j:
        complete = j["joinMs"]["count"] == 1000
        row("1000 joiners over 2 s into 10,000 annotations: join p99", f"{j['joinMs']['p99']:.0f} ms ({j['joinMs']['count']} of 1000 joined)",
            "-", None, f"<= {TARGETS['joinP99Ms']} ms", complete and j["joinMs"]["p99"] <= TARGETS["joinP99Ms"])
        row("join storm: server peak RSS", f"{j['serverPeakRssKiB'] / 1024:.0f} MiB", "-", None, "<= 1024 MiB",
            j["serverPeakRssKiB"] <= TARGETS["joinRssKiB"])
    bm = results.get("bigMap", {})
    v, e = bm.get("viewport", {}), bm.get("everything", {})
    if "deliveriesPerMove" in v and "deliveriesPerMove" in e:
        cut = e["deliveriesPerMove"] / max(v["deliveriesPerMove"], 0.001)
        faults = [f"{k} {v[k]}" for k in ("lost", "movesOutsideCity", "welcomeAnnotationsOutsideCity") if v.get(k)]
        if not v.get("movesSent") or not e.get("movesSent"):
            faults.append("no moves sent")
        row("big map, 1000 clients in their own cities, 10 draggers x 60 Hz: deliveries per drag move, viewport vs everything interest",
            f"viewport {v['deliveriesPerMove']:.2f}, everything {e['deliveriesPerMove']:.1f}", "-", round(cut, 1),
            f">= {TARGETS['bigMapCut']}x cut", cut >= TARGETS["bigMapCut"] and not faults, ", ".join(faults))
    if "joinRequestMs" in v:
        jr = v["joinRequestMs"]
        complete = jr["count"] == 1000
        row("big map, 100,000 annotations: viewport join p99 (join sent → welcome)", f"{jr['p99']:.1f} ms ({jr['count']} of 1000 joined)",
            "-", None, f"<= {TARGETS['bigMapJoinP99Ms']} ms", complete and jr["p99"] <= TARGETS["bigMapJoinP99Ms"])
    th = results.get("threads", {})
    one, two = th.get("1", {}), th.get("2", {})
    if "cpuMicrosecondsPerDelivery" in one and "cpuMicrosecondsPerDelivery" in two:
        r = th.get("ratio") or two["cpuMicrosecondsPerDelivery"] / one["cpuMicrosecondsPerDelivery"]
        row("100 sessions x 50 clients, 2 x 2 Hz, on one core: server CPU per delivery, --threads 2 against --threads 1 (relay overhead)",
            f"{two['cpuMicrosecondsPerDelivery']:.3f} µs (p99 {two['latencyMs']['p99']:.2f} ms)",
            f"{one['cpuMicrosecondsPerDelivery']:.3f} µs (p99 {one['latencyMs']['p99']:.2f} ms)", round(r, 2),
            f"<= {TARGETS['relayOverhead']}x", r <= TARGETS["relayOverhead"] and two.get("lostInAllRuns", 1) == 0,
            f"median of {len(th.get('ratios', []))} alternating pairs: {th.get('ratios')}")
    ab = results.get("abuse", {})
    for name in ABUSE_NAMES:
        r = ab.get(name) or {}
        if "ratios" in r and r["ratios"].get("pingP99") is not None:
            u, t = r["unloadedMedian"]["pingMs"]["p99"], r["attackMedian"]["pingMs"]["p99"]
            faults = r["faults"] + ([] if r.get("serverAlive", True) else ["the server died"])
            row(f"abuse, {name}: a member's ping p99 under attack against unloaded (server on one core)", f"{t} ms", f"{u} ms unloaded",
                r["ratios"]["pingP99"], f"<= {TARGETS['abuseP99']}x", r["ratios"]["pingP99"] <= TARGETS["abuseP99"] and not faults,
                "; ".join(faults))
    dd = bm.get("dashboard", {})
    if "drawMs" in dd:
        row("big map: the dashboard draws 100,000 annotations at zoom 2 (clusters), median of page loads",
            f"p50 {dd['drawMs']['p50']:.1f} ms, max {dd['drawMs']['max']:.1f} ms ({dd['runs']} loads)", "-", None,
            f"<= {TARGETS['dashboardDrawMs']} ms", dd["drawMs"]["p50"] <= TARGETS["dashboardDrawMs"])
    elif "failed" in dd:
        row("big map: the dashboard draws 100,000 annotations at zoom 2", "failed", "-", None,
            f"<= {TARGETS['dashboardDrawMs']} ms", False, dd["failed"])
    return rows


def big_map_markdown(results):
    """The big map's section of BENCHMARKS.md."""
    bm = results.get("bigMap") or {}
    lines = ["### Big map: 1 session, 1000 clients each watching its own city (zoom 12, 1024x768, margin 0.5), "
             "10 draggers x 60 Hz in their cities (Meridian; the everything-interest comparison with 5)", ""]
    if not bm:
        return lines + ["not run"]
    lines += ["| interest | annotations | moves sent | move deliveries | per move | latency ms p50 / p99 | "
              "join sent → welcome ms p50 / p99 / max | connect → welcome p99 ms | lost | outside own city: moves, welcome annotations "
              "| server CPU | server peak RSS | errors, close codes |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind in ("viewport", "everything"):
        r = bm.get(kind) or {}
        if "failed" in r or "latencyMs" not in r:
            lines.append(f"| {kind} | failed: {r.get('failed', 'no run')!s:.80} | | | | | | | | | | | |")
            continue
        l, jr = r["latencyMs"], r.get("joinRequestMs") or {}
        outside = (f"{r.get('movesOutsideCity', 0)}, {r.get('welcomeAnnotationsOutsideCity', 0)} of {r.get('welcomeAnnotations', 0):,}"
                   if kind == "viewport" else "-")
        lines.append(
            f"| {kind} | {r.get('annotations', 0):,} | {r.get('movesSent', 0):,} | {r.get('movesDelivered', 0):,} | "
            f"{r.get('deliveriesPerMove', 0):.2f} | {l['p50']:.2f} / {l['p99']:.2f} | "
            f"{jr.get('p50', 0):.1f} / {jr.get('p99', 0):.1f} / {jr.get('max', 0):.1f} | {r['joinMs']['p99']:.1f} | {r['lost']} | {outside} "
            f"| {r['serverCpuPercent']}% | {r['serverPeakRssKiB'] / 1024:.0f} MiB "
            f"| {' '.join(f'{k}={v}' for k, v in {**(r['errors'] or {}), **(r['closeCodes'] or {})}.items())} |")
    return lines


def threads_markdown(results):
    th = results.get("threads", {})
    lines = ["### Service threads: 100 sessions x 50 clients, server on one core (Meridian)", "",
             "| load | --threads | deliveries/s | server CPU (window) | CPU µs per delivery | latency ms p50 / p99 | lost | generator CPU in the window |",
             "|---|---|---|---|---|---|---|---|"]
    for load, source in (("2 draggers x 2 Hz (median of 5 runs)", th),
                         ("2 draggers x 10 Hz out of step (saturated, half the core)", th.get("saturated") or {})):
        for n in ("1", "2"):
            r = source.get(n) or {}
            if "latencyMs" not in r:
                lines.append(f"| {load} | {n} | failed: {r.get('failed', 'no run')!s:.80} | | | | | |")
                continue
            lines.append(f"| {load} | {n} | {r['deliveriesPerSecond']:,.0f} | {r.get('serverWindowCpuPercent')}% | "
                         f"{r.get('cpuMicrosecondsPerDelivery', '-')} | {r['latencyMs']['p50']:.2f} / {r['latencyMs']['p99']:.2f} | "
                         f"{r.get('lostInAllRuns', r.get('lost'))} | {r.get('generatorWindowCpuPercent', '-')}%"
                         f"{' **generator-bound**' if r.get('generatorBound') else ''} |")
    if th.get("ratios"):
        lines += ["", f"CPU per delivery, --threads 2 over --threads 1, pair by pair: {th['ratios']} (median {th.get('ratio')})."]
    return lines


def markdown(results):
    m = results["machine"]
    lines = [f"Run {results['date']}{' (--quick: short windows, a smoke run)' if results.get('quick') else ''} on "
             f"{m['nproc']} CPU(s) ({m['cpu']}), {m['memory']} RAM, Linux {m['kernel']}; load average at start "
             f"{m['loadAverageAtStart']}; server pinned to CPU 0, load generator to CPU 1: {m['pinned']}; loopback packets "
             f"received on the server's CPU (RPS on lo) in all but the abuse scenario: {m.get('loopbackOnServerCpu', False)}. "
             "Baseline: Tests/Benchmarks/lws_rooms.c on lws's poll loop and on libev; \"lws\" in the ratios is the faster of the two.", ""]

    def row(name, r):
        if not r or "failed" in r:
            return f"| {name} | failed: {(r or {}).get('failed', 'no run')!s:.80} | | | | | | |"
        l = r["latencyMs"]
        return (f"| {name} | {r['deliveriesPerSecond']:,.0f} | {l['p50']:.2f} / {l['p99']:.2f} / {l['p999']:.2f} / {l['max']:.1f} "
                f"| {r['lost']} | {r.get('movesConflated', 0):,} ({r.get('conflatedPercent', 0):.2f}%) "
                f"| {r['serverCpuPercent']}% | {generator_cpu(r)} | {' '.join(f'{k}={v}' for k, v in {**(r['errors'] or {}), **(r['closeCodes'] or {})}.items())} |")

    def generator_cpu(r):
        if "generatorWindowCpuPercent" not in r:
            return f"{r['cpuPercent']:.0f}% (whole run)"
        return f"{r['generatorWindowCpuPercent']:.0f}%" + (" **generator-bound**" if r.get("generatorBound") else "")

    def repeats(scenario):
        runs = {k: v["runs"] for k, v in scenario.items() if isinstance(v, dict) and "runs" in v and k in kinds}
        if not runs:
            return []
        return ["", f"Medians of {len(next(iter(runs.values())))} runs per server, interleaved; each run's deliveries/s, p50 / p99 ms, "
                    "generator CPU: " + "; ".join(f"{k}: " + ", ".join(
                        "failed" if x.get("failed") else f"{x['deliveriesPerSecond']:,} {x['p50']:.2f}/{x['p99']:.2f} {x.get('generatorWindowCpuPercent')}%"
                        for x in v) for k, v in runs.items()) + "."]

    def knee_table(scenario):
        shares = {s.get("serverShare") for k in kinds for s in scenario.get(k, {}).get("steps", [])}
        share = next(iter(shares)) if len(shares) == 1 else None
        out = [f"Each server limited to {share:.0%} of its core (CPU cgroup, 5 ms of every 10 ms); the generator has a whole core." if share
               else "Servers unrestricted (no CPU cgroup could be made): the generator may bound the steps.", ""]
        out += ["| server | knee: offered / delivered per s | steps (draggers x Hz: delivered/s, p99 ms, conflated %, server CPU µs per delivery, generator CPU) |",
               "|---|---|---|"]
        for kind in kinds:
            v = scenario.get(kind)
            if not v:
                continue
            steps = "; ".join(f"{s['draggers']}x{s['rate']}: {s.get('deliveriesPerSecond', 0):,.0f}, {s.get('latencyMs', {}).get('p99', 0):.1f}, "
                              f"{s.get('conflatedPercent', 0):.2f}%, {s.get('serverCpuMicrosPerDelivery', '-')} µs, {s.get('generatorWindowCpuPercent', '-')}%"
                              + ("" if s["ok"] else " GENERATOR-BOUND" if s.get("generatorBound") else " FAIL") for s in v["steps"])
            out.append(f"| {kind} | {v['kneeOffered']:,} / {v['kneeDelivered']:,.0f} | {steps} |")
        return out

    head = ["| server | deliveries/s | latency ms p50 / p99 / p99.9 / max | lost | moves conflated | server CPU | generator CPU in the window | errors, close codes |",
            "|---|---|---|---|---|---|---|---|"]
    kinds = ("meridian",) + BASELINES
    lines += ["### 1 session, 1000 clients, 10 draggers x 60 Hz (600k deliveries/s offered)", ""] + head
    lines += [row(k, results["dragStorm"].get(k)) for k in kinds] + repeats(results["dragStorm"])
    ds = results["dragStorm"].get("meridian", {})
    if "serverConflatedFrames" in ds:
        lines += ["", f"Meridian's /metrics counted {ds['serverConflatedFrames']:,} conflated frames in this run "
                      f"(the load tool: {ds.get('movesConflated', 0):,} moves never received)."]
    lines += ["", "### Knee at 1000 clients (highest offered rate with < 1% of moves conflated and p99 <= 100 ms; draggers x 60 Hz)", ""]
    lines += knee_table(results["knee"])
    lines += ["", "### 100 sessions x 50 clients, 1 dragger each at 5 Hz, out of step (25k deliveries/s offered; each server on half a core)", ""] + head
    lines += [row(k, results["manySessions"].get(k)) for k in kinds] + repeats(results["manySessions"])
    if results.get("smallSession"):
        lines += ["", "### 1 session, 100 clients, 10 draggers x 60 Hz (60k deliveries/s offered)", ""] + head
        lines += [row(k, results["smallSession"].get(k)) for k in kinds] + repeats(results["smallSession"])
    if results.get("manyKnee"):
        lines += ["", "### Knee of 100 sessions x 50 clients (draggers per session x Hz, each move to 50 clients)", ""]
        lines += knee_table(results["manyKnee"])
    lines += ["", "### 10,000 connections (100 sessions x 100), 1,000 deliveries/s (one dragger at 10 Hz)", "",
              "| server | connected | server CPU in the window | per delivery | RSS peak (KiB) | join p99 ms |", "|---|---|---|---|---|---|"]
    for kind in kinds:
        v = results["idleCpu"].get(kind, {})
        if "failed" in v or not v:
            lines.append(f"| {kind} | failed: {v.get('failed', 'no run')!s:.80} | | | | |")
            continue
        cpu = v.get("serverWindowCpuPercent", 0)
        per = cpu / 100 / max(v["deliveriesPerSecond"], 1) * 1e6
        lines.append(f"| {kind} | {v['connected']} | {cpu:.2f}% | {per:.1f} µs | {v['serverPeakRssKiB']} | {v['joinMs']['p99']:.1f} |")
    j = results["joinStorm"]
    lines += ["", "### 1000 joiners over 2 s into a session of 10,000 annotations (Meridian)", ""]
    if "failed" in j or "joinMs" not in j:
        lines.append(f"failed: {j.get('failed', 'not run')}")
    else:
        s = j.get("singleJoinMs") or {}
        lines.append(f"connect → snapshot: {j['joinMs']['count']} of 1000 joins completed within the run; p50 {j['joinMs']['p50']:.1f} ms, "
                     f"p90 {j['joinMs']['p90']:.1f} ms, p99 {j['joinMs']['p99']:.1f} ms, max {j['joinMs']['max']:.1f} ms; close codes "
                     f"{j['closeCodes'] or 'none'}; server CPU {j['serverCpuPercent']}%, peak RSS {j['serverPeakRssKiB']:,} KiB. "
                     f"One join at a time (5 clients): p50 {s.get('p50', 0):.1f} ms, max {s.get('max', 0):.1f} ms.")
    lines += [""] + big_map_markdown(results) + [""] + threads_markdown(results) + [""] + cluster_markdown(results)
    lines += ["", "### Ratios to the baseline (targets of issue 10)", "",
              "| target | Meridian | baseline | ratio | wanted | met |", "|---|---|---|---|---|---|"]
    for r in results["ratios"]:
        ratio = "" if r["ratio"] is None else f"{r['ratio']}x"
        note = f" ({r['note']})" if r["note"] else ""
        lines.append(f"| {r['target']} | {r['meridian']} | {r['baseline']} | {ratio} | {r['wanted']} | {'yes' if r['met'] else 'NO'}{note} |")
    lines += ["", "### Commands", "", "```", "python3 Tests/Benchmarks/bench.py" + (" --quick" if results.get("quick") else "")]
    lines += results["commands"] + ["```"]
    return "\n".join(lines)


def write(results):
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    doc = ROOT / "BENCHMARKS.md"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n\n<!-- bench:begin -->\n<!-- bench:end -->\n"
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    before, rest = text.split(begin, 1)
    after = rest.split(end, 1)[1]
    doc.write_text(before + begin + "\n" + markdown(results) + "\n" + end + after)
    for r in results["ratios"]:
        ratio = "" if r["ratio"] is None else f" = {r['ratio']}x"
        print(f"{'met' if r['met'] else 'MISSED'}: {r['target']}: meridian {r['meridian']} vs {r['baseline']}{ratio} (wanted {r['wanted']})")
    print(f"bench: wrote {doc.relative_to(ROOT)} and {(HERE / 'results.json').relative_to(ROOT)}")


class LoopbackSteering:
    """Loopback receipt on CPU 0 while on (``LO_RPS``); the previous masks back when off, at exit,
    and on SIGTERM."""

    def __init__(self):
        self.before = None
        # False once setting the mask failed (it needs root): said once, not tried again.
        self.possible = PIN and bool(LO_RPS)
        atexit.register(self.off)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    def on(self):
        """True when loopback receipt is on CPU 0."""
        if self.before is None and self.possible:
            try:
                self.before = {path: path.read_text().strip() for path in LO_RPS}
                for path in LO_RPS:
                    path.write_text("1\n")
            except OSError as e:
                self.off()
                self.possible = False
                print(f"bench: loopback receipt stays on the sending CPU ({e}): the generator's core also "
                      "processes what its sockets send", file=sys.stderr)
        return self.before is not None

    def off(self):
        for path, mask in (self.before or {}).items():
            try:
                path.write_text(mask + "\n")
            except OSError:
                pass
        self.before = None


def raise_descriptor_limit():
    """Both servers and the load generator inherit this: 10,000 connections need more than 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(hard, 65536), max(hard, 65536)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main():
    raise_descriptor_limit()
    if "--render" in sys.argv:
        results = json.loads((HERE / "results.json").read_text())
        results["ratios"] = ratios(results)
        write(results)
        return
    only = only_scenarios()
    if not only or only - {"bigMap", "big_map", "joinStorm", "join_storm", "abuse"}:
        build_baseline()
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "quick": QUICK, "machine": machine()}
    steering = LoopbackSteering()
    steps = [("dragStorm", drag_storm), ("knee", knee), ("manySessions", many_sessions), ("manyKnee", many_knee),
             ("smallSession", small_session), ("idleCpu", idle_cpu),
             ("joinStorm", join_storm), ("bigMap", big_map), ("threads", threads), ("cluster", cluster), ("abuse", abuse)]
    unknown = only - {name for name, _ in steps} - {step.__name__ for _, step in steps}
    if unknown:
        sys.exit(f"bench: no scenario {', '.join(sorted(unknown))}")
    for name, step in steps:
        if only and name not in only and step.__name__ not in only:
            continue
        print(f"bench: {name} …", flush=True)
        t0 = time.monotonic()
        if name in UNSTEERED:
            steering.off()
        elif steering.on():
            results["machine"]["loopbackOnServerCpu"] = True
        results[name] = step()
        print(f"bench: {name} done in {time.monotonic() - t0:.0f} s", flush=True)
    results["ratios"] = ratios(results)
    results["commands"] = COMMANDS
    if only:
        # A partial run: shown, never written over the last full run's files.
        print(json.dumps({k: v for k, v in results.items() if k != "ratios"}, indent=2))
        if "bigMap" in results:
            print("\n".join(big_map_markdown(results)))
        if "cluster" in results:
            print("\n".join(cluster_markdown(results)))
        if "abuse" in results:
            print("\n".join(abuse_markdown(results)))
            write_abuse(results)
        for r in results["ratios"]:
            ratio = "" if r["ratio"] is None else f" = {r['ratio']}x"
            note = f" ({r['note']})" if r["note"] else ""
            print(f"{'met' if r['met'] else 'MISSED'}: {r['target']}: meridian {r['meridian']} vs {r['baseline']}{ratio} (wanted {r['wanted']}){note}")
        return
    steering.off()
    for name, _ in steps:
        results.setdefault(name, {})
    write(results)
    write_abuse(results)


def only_scenarios():
    """The scenario names given with --only NAME[,NAME…] or --only=NAME[,NAME…]; empty: all."""
    names = []
    for i, a in enumerate(sys.argv):
        if a.startswith("--only="):
            names += a.split("=", 1)[1].split(",")
        elif a == "--only" and i + 1 < len(sys.argv):
            names += sys.argv[i + 1].split(",")
    return {n.strip() for n in names if n.strip()}


if __name__ == "__main__":
    main()
