"""How long the dashboard takes to draw a large session's clusters.

    python3 Tests/Benchmarks/dashboard_draw.py [--bin .build/release/meridian] [--runs 10] [--count 100000] [--zoom 2]

Starts the server (`--bin`, else $MERIDIAN_BIN, else .build/debug/meridian), fills a
session with COUNT points spread over the world, and opens its session view at ZOOM
in headless Chromium RUNS times, a fresh page load each time. Each run reads the
page's `clustersDrawMs`: from the first `clusters` message's arrival at the page
(before parsing) to the end of the map frame that drew it. Prints JSON:
{"annotations", "zoom", "drawMs": {"p50", "max"}, "runs"} (the target is 100 ms).
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", help="the meridian binary (default $MERIDIAN_BIN, else .build/debug/meridian)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--zoom", type=int, default=2)
    args = parser.parse_args()
    if args.bin:
        os.environ["MERIDIAN_BIN"] = str(Path(args.bin).resolve())

    from browser import Page, chromium
    from conftest import Server
    from dashboard_support import add_points, http_url, world_points

    server = Server("--rate-limit", "1000000", "--rate-burst", "1000000", "--max-annotations", str(max(args.count, 100_000)))
    driver = None
    try:
        asyncio.run(add_points(server.url, "bench", world_points(args.count)))
        driver = chromium()
        page = Page(driver, "dashboard-draw")
        times = []
        for _ in range(args.runs):
            page.open("about:blank")
            page.open(http_url(server, f"?session=bench&map={args.zoom}/0/0"))
            s = page.wait(lambda s: s["clusterDraws"] >= 1, "the clusters drawn", 60)
            if args.zoom <= 2:  # the whole world is in view
                assert sum(c["count"] for c in s["clusters"]) == args.count, "not every annotation is in a drawn cluster"
            times.append(s["clustersDrawMs"])
        errors = page.console_errors()
        assert not errors, errors
    finally:
        if driver:
            driver.quit()
        server.stop()
    print(json.dumps({"annotations": args.count, "zoom": args.zoom,
                      "drawMs": {"p50": round(statistics.median(times), 1), "max": round(max(times), 1)}, "runs": args.runs}))


if __name__ == "__main__":
    main()
