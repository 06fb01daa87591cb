"""The dashboard's session view of 100,000 annotations, in headless Chromium against the
real server: at zoom 2 it draws the server's clusters (their counts adding up to the
session) and no annotation one by one; clicking a cluster zooms to where it splits, and
its place then holds several clusters with the same members; past the zoom where
clustering stops it draws the annotations in view one by one, and holds only those in
the area the server sends."""

import asyncio
import math

from selenium.webdriver.common.action_chains import ActionChains

from dashboard_support import add_points, http_url, page, to_screen, world, world_points  # noqa: F401
from meridian_client import run
from test_dashboard_features import click_at

COUNT = 100_000
CELLS_PER_TILE = 4  # the server clusters on 64-point cells: 4 across a 256-point tile


def cell(coordinate, zoom):
    """The column and row of the server's cluster cell holding a coordinate at integer `zoom`."""
    x, y = world(coordinate["latitude"], coordinate["longitude"])
    n = 2 ** zoom * CELLS_PER_TILE
    return min(n - 1, int(x * n)), min(n - 1, int(y * n))


def in_area(lat, lon, area):
    """Whether a coordinate lies in a server area (edges included; it may cross the antimeridian)."""
    sw, ne = area["southWest"], area["northEast"]
    if not sw["latitude"] <= lat <= ne["latitude"]:
        return False
    if sw["longitude"] <= ne["longitude"]:
        return sw["longitude"] <= lon <= ne["longitude"]
    return lon >= sw["longitude"] or lon <= ne["longitude"]


def clustered_at(zoom):
    """The page shows the server's clusters for integer zoom `zoom`, and nothing is pending."""
    def ready(s):
        view = s["interest"]["view"]
        return (s["status"] == "live" and s["settled"] and view is not None and view["clusters"]
                and view["zoom"] == zoom and int(s["view"]["zoom"]) == zoom and s["clusters"])
    return ready


def double_click_at(page, x, y):
    canvas = page.driver.find_element("id", "map")
    rect = page.js("const r = document.getElementById('map').getBoundingClientRect(); return [r.width, r.height]")
    ActionChains(page.driver).move_to_element_with_offset(canvas, x - rect[0] / 2, y - rect[1] / 2).double_click().perform()


def test_100000_annotations_are_clustered_split_and_drawn_one_by_one_when_close(start_server, session_id, page):
    points = world_points(COUNT)
    coordinates = {ident: (lat, lon) for ident, lat, lon in points}
    # 100,000 adds in a burst: above the default per-connection rate limit.
    server = start_server("--rate-limit", "1000000", "--rate-burst", "1000000")
    run(add_points(server.url, session_id, points), timeout=150)

    page.open(http_url(server, f"?session={session_id}&map=2/0/0"))
    # The overview says how large the session is: too large to mirror whole.
    # The draw times are set once the frame that drew the clusters has rendered: wait for them too.
    s = page.wait(lambda s: clustered_at(2)(s) and s["sessionAnnotations"] == COUNT and s["renderMs"] is not None,
                  "clusters at zoom 2", 60)
    assert s["interest"]["mode"] == "viewport" and s["interest"]["view"]["zoom"] == 2
    page.screenshot("1-zoom-2")
    drawn = s["clusters"]
    assert sum(c["count"] for c in drawn) == COUNT, [c["count"] for c in drawn]
    assert len(drawn) > 50, len(drawn)
    width, height = s["mapSize"]["width"], s["mapSize"]["height"]
    assert all(0 <= c["x"] <= width and 0 <= c["y"] <= height for c in drawn)
    assert s["annotationCount"] == 0 and s["drawnAnnotations"] == 0
    assert page.js("return window.meridianDashboard.drawn()") == []
    assert s["clustersDrawMs"] is not None and s["renderMs"] is not None

    # A click on the cluster nearest the middle zooms to where it splits, centred on it.
    middle = (width / 2, height / 2)
    parent = min((c for c in drawn if c["count"] > 1 and c["splitZoom"] is not None),
                 key=lambda c: math.dist((c["x"], c["y"]), middle))
    split = parent["splitZoom"]
    assert 2 < split < s["interest"]["clusterBelow"], parent
    click_at(page, parent["x"], parent["y"])
    s = page.wait(lambda s: clustered_at(split)(s) and s["view"]["zoom"] == split, f"the cluster split at zoom {split}")
    page.screenshot("2-split")
    cx, cy = world(parent["coordinate"]["latitude"], parent["coordinate"]["longitude"])
    assert abs(s["view"]["x"] - cx) < 1e-9 and abs(s["view"]["y"] - cy) < 1e-9
    # Its cell lies wholly in view; the clusters in it now are its members, in more than one cluster.
    home = cell(parent["coordinate"], 2)
    shift = split - 2
    children = [c for c in s["clusters"] if tuple(v >> shift for v in cell(c["coordinate"], split)) == home]
    assert len(children) > 1, children
    assert sum(c["count"] for c in children) == parent["count"], (parent, children)

    # A double click on one of those zooms to where it splits, and no further.
    child = min((c for c in children if c["count"] > 1 and c["splitZoom"] is not None),
                key=lambda c: math.dist((c["x"], c["y"]), middle))
    deeper = child["splitZoom"]
    double_click_at(page, child["x"], child["y"])
    s = page.wait(lambda s: clustered_at(deeper)(s) and s["view"]["zoom"] == deeper, f"the double-clicked cluster split at zoom {deeper}")
    assert s["view"]["zoom"] == deeper
    page.screenshot("3-double-click")

    # Past the zoom where clustering stops: the annotations in view, one by one.
    close = s["interest"]["clusterBelow"]
    for _ in range(close - deeper):
        page.driver.find_element("id", "zoom-in").click()
    s = page.wait(lambda s: s["settled"] and s["view"]["zoom"] == close and s["interest"]["view"]["zoom"] == close
                  and not s["interest"]["view"]["clusters"] and s["annotationCount"] > 0, f"annotations one by one at zoom {close}")
    page.screenshot("4-one-by-one")
    assert s["clusters"] == []
    # The page holds exactly the annotations of the server's area (the view and its margin).
    area = s["interest"]["view"]["area"]
    held = {ident for ident, (lat, lon) in coordinates.items() if in_area(lat, lon, area)}
    assert s["annotationCount"] == len(held) < COUNT / 100, (s["annotationCount"], len(held))
    # It draws those in view (a pin is drawn when its tip is within 40 px of the map, where some of it can show).
    size = (s["mapSize"]["width"], s["mapSize"]["height"])
    shown = set(page.js("return window.meridianDashboard.drawn()"))

    def within(ident, slack):
        x, y = to_screen(s["view"], size, *coordinates[ident])
        return -slack <= x <= size[0] + slack and -slack <= y <= size[1] + slack

    in_view = {ident for ident in held if within(ident, 0)}
    assert in_view and in_view <= shown, sorted(in_view - shown)[:5]
    assert all(within(ident, 40) for ident in shown), sorted(i for i in shown if not within(i, 40))[:5]
    some = sorted(in_view)[0]
    a = page.js("return window.meridianDashboard.annotation(arguments[0])", some)
    assert (a["coordinate"]["latitude"], a["coordinate"]["longitude"]) == coordinates[some]
    assert page.console_errors() == []


def test_a_small_session_is_mirrored_whole(start_server, session_id, page):
    """At most 10,000 annotations: the page asks for the whole session once it knows its size."""
    points = world_points(300, seed=5)
    server = start_server()
    run(add_points(server.url, session_id, points, window=50))
    page.open(http_url(server, f"?session={session_id}&map=2/0/0"))
    s = page.wait(lambda s: s["status"] == "live" and s["settled"] and s["interest"]["mode"] == "everything"
                  and s["annotationCount"] == len(points), "the whole session")
    assert s["clusters"] == [] and s["drawnAnnotations"] == len(points)
    page.screenshot("whole")
    assert page.console_errors() == []
