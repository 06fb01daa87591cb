#!/usr/bin/env python3
"""`make bench`: Meridian against two baselines, driven by `meridian load`.

Every server runs pinned to CPU 0 and the load generator to CPU 1 (taskset). Results are
written to Tests/Benchmarks/results.json and into BENCHMARKS.md between the bench markers.
Usage: bench.py [--quick | --render]   (--quick: shorter windows, for a smoke run;
--render: rewrite BENCHMARKS.md from the last results.json)
"""
import json
import os
import platform
import re
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MERIDIAN = ROOT / ".build/release/meridian"
LWS_BIN = ROOT / ".build/bench/lws_broadcast"
QUICK = "--quick" in sys.argv
NPROC = os.cpu_count() or 1
PIN = shutil.which("taskset") is not None and NPROC >= 2
COMMANDS = []


def pinned(cpu, argv):
    return (["taskset", "-c", str(cpu)] if PIN else []) + [str(a) for a in argv]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_baseline():
    LWS_BIN.parent.mkdir(parents=True, exist_ok=True)
    flags = subprocess.check_output(["pkg-config", "--cflags", "--libs", "libwebsockets"], text=True).split()
    subprocess.check_call(["gcc", "-O2", "-D_GNU_SOURCE", "-o", str(LWS_BIN), str(HERE / "lws_broadcast.c")] + flags)


class Server:
    def __init__(self, kind, extra=()):
        self.kind = kind
        if kind == "meridian":
            # Loopback, no tokens; the load generator opens up to 10,000 connections from 127.0.0.1
            # and sends at the rates the scenarios set: lift the per-IP and per-connection limits.
            argv = [MERIDIAN, "serve", "--port", "0", "--log-level", "error", "--auth", "none", "--max-connections-per-ip", "100000",
                    "--rate-limit", "1000000", "--rate-burst", "1000000", *extra]
        elif kind == "lws":
            argv = [LWS_BIN, free_port()]
        else:
            argv = [sys.executable, HERE / "py_broadcast.py", free_port()]
        self.argv = pinned(0, argv)
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def load(server, **options):
    """Runs `meridian load` against `server`; returns the report with the server's CPU use."""
    argv = [MERIDIAN, "load", "--port", server.port, "--json", "--quiet"]
    for key, value in options.items():
        argv += ["--" + key.replace("_", "-"), value]
    argv = pinned(1, argv)
    COMMANDS.append(" ".join(str(a) for a in argv).replace(str(ROOT) + "/", ""))
    cpu0, t0 = server.cpu_seconds(), time.monotonic()
    peak = {"rss": server.rss_kib()}
    done = threading.Event()

    def sample():
        while not done.wait(0.25):
            try:
                peak["last"] = server.rss_kib()
                peak["rss"] = max(peak["rss"], peak["last"])
            except OSError:
                return
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600)
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
    report["serverPeakRssKiB"] = peak["rss"]
    report["serverEndRssKiB"] = peak.get("last", peak["rss"])
    return report


def ok(report, p99_limit):
    return ("failed" not in report and report.get("lost", 1) == 0 and report.get("connectFailures", 1) == 0
            and report["latencyMs"]["p99"] <= p99_limit and report.get("latencyMs", {}).get("count", 0) > 0)


def summary(r):
    if "failed" in r:
        return {"failed": r["failed"]}
    keys = ("connected", "deliveriesPerSecond", "lost", "outOfOrder", "duplicates", "dragsGranted", "dragsRefused",
            "errors", "closeCodes", "cpuPercent", "serverCpuPercent", "serverPeakRssKiB")
    out = {k: r.get(k) for k in keys}
    out["latencyMs"] = r["latencyMs"]
    out["joinMs"] = r["joinMs"]
    return out


def run_one(kind, extra=(), **options):
    server = Server(kind, extra)
    try:
        return load(server, **options)
    finally:
        server.stop()


def drag_storm(kinds):
    window = 5 if QUICK else 10
    # 1000 joins cost the server O(n²) presence traffic: let it settle before measuring.
    return {k: summary(run_one(k, clients=1000, draggers=10, rate=60, ramp_up=3, settle=4, duration=window)) for k in kinds}


def saturation(kinds, clients):
    window = 3 if QUICK else 5
    steps = [(2, 60), (4, 60), (7, 60), (10, 60), (20, 60), (40, 60), (40, 120)] if clients >= 1000 else \
            [(10, 60), (25, 60), (50, 60), (100, 60), (100, 150), (100, 300)]
    results = {}
    for kind in kinds:
        best, tried = None, []
        for draggers, rate in steps:
            r = run_one(kind, clients=clients, draggers=draggers, rate=rate, contention=0, ramp_up=2,
                        settle=4 if clients >= 1000 else 1, duration=window)
            tried.append({"draggers": draggers, "rate": rate, "offered": draggers * rate * clients, "ok": ok(r, 100), **summary(r)})
            if not ok(r, 100):
                break
        results[kind] = {"best": best_step(tried), "steps": tried}
    return results


def best_step(tried):
    """The passing step that delivered the most: past the server's capacity a step can still
    pass (conflation keeps p99 down) while delivering less than an earlier one."""
    passing = [t for t in tried if t.get("ok", "failed" not in t and t.get("lost") == 0 and t["latencyMs"]["p99"] <= 100)]
    return max(passing, key=lambda t: t["deliveriesPerSecond"], default=None)


def idle(kinds):
    results = {}
    n = 10_000
    for kind in kinds:
        server = Server(kind)
        try:
            time.sleep(0.5)
            base = server.rss_kib()
            # 100 sessions of 100: presence fan-out stays small, so memory is what connections hold.
            r = load(server, clients=n, sessions=100, draggers=0, ramp_up=5, duration=4 if QUICK else 6)
            results[kind] = {
                "connected": r.get("connected"), "baseRssKiB": base, "peakRssKiB": r["serverPeakRssKiB"],
                "endRssKiB": r["serverEndRssKiB"],
                # Settled: the last sample, after the connections sat idle for the measured window.
                "perConnectionKiB": round((r["serverEndRssKiB"] - base) / max(r.get("connected") or n, 1), 2),
                "peakPerConnectionKiB": round((r["serverPeakRssKiB"] - base) / max(r.get("connected") or n, 1), 2),
                "connectFailures": r.get("connectFailures"), "closeCodes": r.get("closeCodes"),
                "joinMs": r.get("joinMs"),
            }
        finally:
            server.stop()
    return results


def join_storm():
    r = run_one("meridian", clients=1000, draggers=0, annotations=10_000, ramp_up=2, duration=10)
    single = run_one("meridian", clients=5, draggers=0, annotations=10_000, ramp_up=0.5, duration=2)
    return {**summary(r), "singleJoinMs": single["joinMs"]}


def many_sessions():
    return summary(run_one("meridian", clients=5000, sessions=100, draggers=2, rate=60, ramp_up=3, settle=3,
                           duration=5 if QUICK else 10))


def machine():
    model = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                  if l.startswith("model name")), platform.processor())
    mem = next((l.split(":", 1)[1].strip() for l in Path("/proc/meminfo").read_text().splitlines()
                if l.startswith("MemTotal")), "?")
    load1 = os.getloadavg()[0]
    return {"nproc": NPROC, "cpu": model, "memory": mem, "kernel": platform.release(), "pinned": PIN,
            "loadAverageAtStart": round(load1, 2)}


def markdown(results):
    m = results["machine"]
    lines = [f"Run {results['date']} on {m['nproc']} CPU(s) ({m['cpu']}), {m['memory']} RAM, Linux {m['kernel']}; "
             f"load average at start {m['loadAverageAtStart']}; server pinned to CPU 0, load generator to CPU 1: {m['pinned']}.", ""]

    def row(name, r):
        if not r or "failed" in r:
            return f"| {name} | failed: {(r or {}).get('failed', 'no passing step')!s:.80} | | | | | |"
        l = r["latencyMs"]
        return (f"| {name} | {r['deliveriesPerSecond']:,.0f} | {l['p50']:.2f} / {l['p99']:.2f} / {l['p999']:.2f} / {l['max']:.1f} "
                f"| {r['lost']} | {r['serverCpuPercent']}% | {r['cpuPercent']:.0f}% | {r['errors'] or ''} {r['closeCodes'] or ''} |")

    head = ["| server | deliveries/s | latency ms p50 / p99 / p99.9 / max | lost | server CPU | load CPU | errors, close codes |",
            "|---|---|---|---|---|---|---|"]
    lines += ["### Drag storm (1 session, 1000 clients, 10 draggers at 60 Hz: 600k deliveries/s offered)", ""] + head
    lines += [row(k, v) for k, v in results["dragStorm"].items()] + [""]
    for size, key in (("1000", "saturation1000"), ("100", "saturation100")):
        lines += [f"### Saturation, {size} clients per session (highest step with no loss and p99 <= 100 ms)", ""] + head
        for kind, v in results[key].items():
            lines.append(row(kind + (f" ({v['best']['draggers']} draggers x {v['best']['rate']} Hz)" if v["best"] else ""), v["best"]))
        lines.append("")
        lines.append("Steps tried: " + "; ".join(
            f"{kind} {s['draggers']}x{s['rate']}Hz→{s.get('deliveriesPerSecond') or 0:,.0f}/s p99 {s.get('latencyMs', {}).get('p99', 0):.1f} ms lost {s.get('lost')}"
            for kind, v in results[key].items() for s in v["steps"]))
        lines.append("")
    lines += ["### 10,000 idle connections (100 sessions x 100 clients)", "", "| server | connected | RSS before → peak → idle (KiB) | per connection, idle (KiB) | per connection at the peak (KiB) | join p99 ms |", "|---|---|---|---|---|---|"]
    for kind, v in results["idle"].items():
        lines.append(f"| {kind} | {v['connected']} | {v['baseRssKiB']} → {v['peakRssKiB']} → {v['endRssKiB']} | {v['perConnectionKiB']} | {v['peakPerConnectionKiB']} | {(v.get('joinMs') or {}).get('p99', 0):.1f} |")
    j = results["joinStorm"]
    lines += ["", "### Join storm (1000 clients over 2 s into a session of 10,000 annotations)", ""]
    lines.append(f"connect → snapshot: {j['joinMs']['count']} of 1000 joins completed within the run; among them p50 {j['joinMs']['p50']:.1f} ms, "
                 f"p90 {j['joinMs']['p90']:.1f} ms, p99 {j['joinMs']['p99']:.1f} ms, max {j['joinMs']['max']:.1f} ms; "
                 f"close codes {j['closeCodes'] or 'none'}; server CPU {j['serverCpuPercent']}%, peak RSS {j['serverPeakRssKiB']} KiB. "
                 f"One join at a time (5 clients): p50 {j['singleJoinMs']['p50']:.1f} ms, max {j['singleJoinMs']['max']:.1f} ms."
                 if "failed" not in j else f"failed: {j['failed']}")
    lines += ["", "### Many sessions (100 sessions x 50 clients, 2 draggers each at 60 Hz: 600k deliveries/s offered)", ""] + head
    lines += [row("meridian", results["manySessions"]), ""]
    lines += ["### Ratios", ""] + [f"- {r}" for r in results["ratios"]] + [""]
    lines += ["### Commands", "", "```"] + results["commands"] + ["```"]
    return "\n".join(lines)


def ratios(results):
    out = []
    ds = results["dragStorm"]
    for kind in ("lws", "python"):
        if "failed" not in ds.get(kind, {"failed": 1}) and "failed" not in ds["meridian"]:
            out.append(f"drag storm p99: meridian {ds['meridian']['latencyMs']['p99']:.2f} ms vs {kind} {ds[kind]['latencyMs']['p99']:.2f} ms")
    for key in ("saturation1000", "saturation100"):
        best = {k: v["best"] for k, v in results[key].items()}
        m = best.get("meridian")
        for kind in ("lws", "python"):
            b = best.get(kind)
            if m and b:
                per_cpu_m = m["deliveriesPerSecond"] / max(m["serverCpuPercent"] / 100, 0.01)
                per_cpu_b = b["deliveriesPerSecond"] / max(b["serverCpuPercent"] / 100, 0.01)
                out.append(f"{key}: meridian {m['deliveriesPerSecond']:,.0f}/s vs {kind} {b['deliveriesPerSecond']:,.0f}/s "
                           f"= {m['deliveriesPerSecond'] / max(b['deliveriesPerSecond'], 1):.1f}x; per server CPU-second "
                           f"{per_cpu_m:,.0f} vs {per_cpu_b:,.0f} = {per_cpu_m / max(per_cpu_b, 1):.1f}x")
    idle_r = results["idle"]
    if "meridian" in idle_r and "lws" in idle_r:
        out.append(f"idle memory per connection: meridian {idle_r['meridian']['perConnectionKiB']} KiB vs lws {idle_r['lws']['perConnectionKiB']} KiB")
    return out


def main():
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (65536, 65536))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if "--render" in sys.argv:
        # Rewrites BENCHMARKS.md from results.json (e.g. after a change to how results are summarised).
        results = json.loads((HERE / "results.json").read_text())
        for name in ("saturation1000", "saturation100"):
            for kind in results[name].values():
                kind["best"] = best_step(kind["steps"])
        results["ratios"] = ratios(results)
        write(results)
        return
    build_baseline()
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine()}
    steps = [
        ("dragStorm", lambda: drag_storm(["meridian", "lws", "python"])),
        ("saturation1000", lambda: saturation(["meridian", "lws"], 1000)),
        ("saturation100", lambda: saturation(["meridian", "lws"], 100)),
        ("idle", lambda: idle(["meridian", "lws"])),
        ("joinStorm", join_storm),
        ("manySessions", many_sessions),
    ]
    for name, step in steps:
        print(f"bench: {name} …", flush=True)
        t0 = time.monotonic()
        results[name] = step()
        print(f"bench: {name} done in {time.monotonic() - t0:.0f} s", flush=True)
    results["ratios"] = ratios(results)
    results["commands"] = COMMANDS
    write(results)


def write(results):
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    doc = ROOT / "BENCHMARKS.md"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n\n<!-- bench:begin -->\n<!-- bench:end -->\n"
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    before, rest = text.split(begin, 1)
    after = rest.split(end, 1)[1]
    doc.write_text(before + begin + "\n" + markdown(results) + "\n" + end + after)
    print("\n".join(results["ratios"]))
    print(f"bench: wrote {doc.relative_to(ROOT)} and {(HERE / 'results.json').relative_to(ROOT)}")


if __name__ == "__main__":
    main()
