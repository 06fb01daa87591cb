"""What the session view costs the browser while a busy session moves.

    python3 Tests/Benchmarks/dashboard_cpu.py [--bin .build/debug/meridian] [--seconds 20] [--settle 5]
        [--drags 3] [--drag-hz 20] [--dashboard-directory DIR] [--renderer maplibre|canvas]

Starts the server (`--bin`, else $MERIDIAN_BIN, else .build/debug/meridian; with
`--dashboard-directory`, serving the dashboard from DIR), builds the busy session of the
dashboard tests (busy_session.py: 300 annotations, 20 participants whose cameras move,
selections, the shared callout and camera, locations) and keeps DRAGS annotations dragged at
DRAG_HZ frames a second, opens its session view in headless Chromium at 1600x1000, lets it
settle for SETTLE seconds, then measures for SECONDS:

  - the page's renderer process CPU (Chrome DevTools Protocol `Performance.getMetrics`:
    ProcessTime) and its main thread's (ThreadTime), as fractions of a core, and all of
    Chromium's (its browser, renderer and GPU processes, from /proc);
  - the main thread's split: script, layout, style recalculation and the rest of its tasks
    (paint, compositing, garbage collection...), as fractions of a core;
  - the round trips of the page's own pings (a ping a second, as its latency chart shows them):
    p50, p99 and max in ms; and the page's long tasks (over 50 ms), which keep an answer waiting;
  - the map frames the page drew per second.

Prints JSON.
"""

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

# The page's pings as its latency chart shows them (each value written to #latency-now), and its
# main thread's long tasks (over 50 ms: what keeps a pong waiting).
WATCH_PINGS = """
window.__pings = [];
window.__longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
  .observe({ type: "longtask" });
new MutationObserver(() => {
  const ms = parseFloat(document.getElementById("latency-now").textContent);
  if (Number.isFinite(ms)) window.__pings.push(ms);
}).observe(document.getElementById("latency-now"), { childList: true, characterData: true, subtree: true });
"""


def browser_cpu_seconds(root):
    """CPU seconds (user and system) of every process under `root` (chromedriver: Chromium's
    browser, renderer and GPU processes), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo.extend(child for child, (parent, _) in stats.items() if parent == pid)
    return total


def metrics(driver):
    return {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}


async def keep_dragging(session, drags, hz, stop):
    """DRAGS annotations dragged by editors at `hz` frames a second until `stop` is set: the busy
    session's two, and more made draggable by the owner."""
    from busy_session import DRAGGED, HARBOUR
    ids = list(DRAGGED)
    extra = [f"gate-{k}" for k in range(1, max(0, drags - len(ids)) + 1)]
    for k, ident in enumerate(extra):
        await session.owner.ok({"type": "annotation.update", "id": ident, "changes": {"draggable": True}})
        await session.clients[3 + k].ok({"type": "drag", "id": ident, "state": "starting"})
    draggers = list(zip(session.clients[1:3], ids))[:drags] + list(zip(session.clients[3:], extra))
    lat0, lon0 = HARBOUR
    t = 0.0
    while not stop.is_set():
        await asyncio.sleep(1 / hz)
        t += 1 / hz
        for k, (client, ident) in enumerate(draggers):
            coordinate = {"latitude": lat0 - 0.008 + 0.008 * k + 0.001 * math.sin(t + k),
                          "longitude": lon0 + 0.02 - 0.02 * k + 0.002 * math.cos(t + k)}
            await client.send({"type": "drag", "id": ident, "state": "dragging", "coordinate": coordinate}, check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", help="the meridian binary (default $MERIDIAN_BIN, else .build/debug/meridian)")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--settle", type=float, default=5)
    parser.add_argument("--drags", type=int, default=3)
    parser.add_argument("--drag-hz", type=float, default=20)
    parser.add_argument("--dashboard-directory", help="serve the dashboard from this directory")
    parser.add_argument("--renderer", choices=["maplibre", "canvas"], default="maplibre",
                        help="what draws the basemap: MapLibre GL JS (the default) or the page's canvas")
    args = parser.parse_args()
    if args.bin:
        os.environ["MERIDIAN_BIN"] = str(Path(args.bin).resolve())

    from browser import Page, chromium
    from busy_session import BusySession
    from conftest import Server
    from dashboard_support import http_url

    extra = ["--dashboard-directory", str(Path(args.dashboard_directory).resolve())] if args.dashboard_directory else []
    server = Server("--rate-limit", "1000000", "--rate-burst", "1000000", *extra)
    session = driver = None
    stop = None
    try:
        session = BusySession(server.url, "harbour").start()
        stop = asyncio.Event()
        asyncio.run_coroutine_threadsafe(keep_dragging(session, args.drags, args.drag_hz, stop), session.loop)
        driver = chromium()
        driver.set_window_size(1600, 1000)
        page = Page(driver, "dashboard-cpu")
        page.open(http_url(server, "?session=harbour" + ("&renderer=canvas" if args.renderer == "canvas" else "")))
        page.wait(lambda s: s["status"] == "live" and len(s["participants"]) == 20 and s["annotationCount"] == 300
                  and s["labels"], "the busy session drawn", 60)
        time.sleep(args.settle)
        driver.execute_cdp_cmd("Performance.enable", {"timeDomain": "threadTicks"})
        page.js(WATCH_PINGS)
        frames0 = page.js("return window.meridianDashboard.state.frames")
        before, browser0 = metrics(driver), browser_cpu_seconds(driver.service.process.pid)
        time.sleep(args.seconds)
        after, browser1 = metrics(driver), browser_cpu_seconds(driver.service.process.pid)
        frames1 = page.js("return window.meridianDashboard.state.frames")
        pings = page.js("return window.__pings")
        long_tasks = page.js("return window.__longTasks")
        errors = page.console_errors()
        assert not errors, errors[:5]
    finally:
        if stop is not None:
            session.loop.call_soon_threadsafe(stop.set)
        if driver:
            driver.quit()
        if session:
            session.stop()
        server.stop()

    wall = after["Timestamp"] - before["Timestamp"]
    share = lambda name: round((after[name] - before[name]) / wall, 3)  # noqa: E731
    pings.sort()
    pct = lambda q: round(pings[min(len(pings) - 1, int(q * len(pings)))], 1) if pings else None  # noqa: E731
    task, script, layout, style = (share(n) for n in ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration"))
    print(json.dumps({
        "seconds": round(wall, 1), "drags": args.drags, "dragHz": args.drag_hz,
        "cpu": {"browser": round((browser1 - browser0) / wall, 3), "process": share("ProcessTime"), "mainThread": share("ThreadTime"),
                "script": script, "layout": layout, "style": style, "other": round(task - script - layout - style, 3)},
        "pingMs": {"p50": round(statistics.median(pings), 1) if pings else None, "p99": pct(0.99),
                   "max": max(pings) if pings else None, "count": len(pings)},
        "longTasks": {"count": len(long_tasks), "maxMs": round(max(long_tasks), 1) if long_tasks else None},
        "framesPerSecond": round((frames1 - frames0) / wall, 1),
    }))


if __name__ == "__main__":
    main()
