"""What issue 12 asks of the dashboard, in headless Chromium against the real server:
geographic context (offline basemap, scale bar, cursor coordinates), a legend,
highlighted selections of shapes, inspecting annotations, zooming to a participant,
filtering participants, the overview's names, sparklines, last activity, search and
sort, and the Leaflet example showing viewports and drags."""

import asyncio
import json
import math
import urllib.request

import pytest

from selenium.webdriver.common.action_chains import ActionChains

from dashboard_support import api, close, contrast, flag, http_url, page, pixel, pixels, to_screen, while_active, world  # noqa: F401
from meridian_client import Client, run, members


def click_at(page, x, y):
    """A real pointer click at (x, y) CSS pixels of the map canvas."""
    canvas = page.driver.find_element("id", "map")
    rect = page.js("const r = document.getElementById('map').getBoundingClientRect(); return [r.width, r.height]")
    ActionChains(page.driver).move_to_element_with_offset(canvas, x - rect[0] / 2, y - rect[1] / 2).click().perform()


def move_to(page, x, y):
    canvas = page.driver.find_element("id", "map")
    rect = page.js("const r = document.getElementById('map').getBoundingClientRect(); return [r.width, r.height]")
    ActionChains(page.driver).move_to_element_with_offset(canvas, x - rect[0] / 2, y - rect[1] / 2).perform()


ROUTE = [{"latitude": 48.840, "longitude": 2.270}, {"latitude": 48.870, "longitude": 2.320}]
PARK = [{"latitude": 48.850, "longitude": 2.280}, {"latitude": 48.862, "longitude": 2.300}, {"latitude": 48.845, "longitude": 2.310}]


@pytest.mark.parametrize("renderer", ["maplibre", "canvas"])
def test_the_basemap_scale_bar_and_cursor_coordinates(server, session_id, page, renderer):
    # MapLibre draws the basemap under the canvas; without it (here: asked for) the canvas does,
    # at the same place.
    with urllib.request.urlopen(http_url(server, "basemap.json")) as r:
        body = r.read()
        assert r.headers["Content-Type"].startswith("application/json")
    data = json.loads(body)
    assert len(body) < 400_000 and "Natural Earth" in data["source"] and data["licence"] == "public domain"
    assert len(data["countries"]) > 200 and len(data["coastlines"]) > 100

    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await alice.ok({"type": "annotation.add", "annotation": flag("lyon", 45.76, 4.84)})
            query = f"?session={session_id}" + ("&renderer=canvas" if renderer == "canvas" else "")
            await asyncio.to_thread(page.open, http_url(server, query))
            s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["basemapLoaded"] and s["scale"] and s["settled"],
                                        "the basemap and scale")
            assert s["basemapRenderer"] == renderer, s["basemapError"]
            # The scale bar: its length in pixels times metres per pixel is its label.
            width = page.js("return document.getElementById('scale-bar').getBoundingClientRect().width")
            label = s["scale"]
            metres = float(label.split()[0]) * (1000 if label.endswith("km") else 1)
            x, y = s["view"]["x"], s["view"]["y"]
            lat = math.degrees(math.atan(math.sinh(math.pi - 2 * math.pi * y)))
            per_pixel = 40075016.686 * math.cos(math.radians(lat)) / (256 * 2 ** s["view"]["zoom"])
            assert abs(width - metres / per_pixel) <= 3, (width, metres / per_pixel)
            # Land is drawn (Paris is on it) in the theme's land colour, the sea in the water colour.
            land = page.js("return getComputedStyle(document.getElementById('map')).getPropertyValue('--map-land').trim()")
            size = (s["mapSize"]["width"], s["mapSize"]["height"])
            px, py = to_screen(s["view"], size, 46.8, 2.3)  # between Paris and Lyon: land, no mark, no grid line
            assert close(pixel(page, px, py), land, 12), (pixel(page, px, py), land)
            # The cursor's coordinates follow the pointer.
            sx, sy = to_screen(s["view"], size, 46.5, 3.5)
            await asyncio.to_thread(move_to, page, sx, sy)
            # (the pointer passes other places on its way: wait for where it stops)
            def at_target(_):
                text = page.js("return document.getElementById('cursor').textContent")
                parts = text.split(", ")
                if len(parts) != 2 or "N" not in parts[0]:
                    return None
                lat_v, lon_v = (float(x.split("°")[0]) for x in parts)
                return text if abs(lat_v - 46.5) < 0.05 and abs(lon_v - 3.5) < 0.05 else None

            from selenium.webdriver.support.ui import WebDriverWait
            text = await asyncio.to_thread(lambda: WebDriverWait(page.driver, 10, 0.05).until(at_target))
            assert text.endswith("E"), text
            await asyncio.to_thread(page.screenshot, "basemap")

    run(scenario())
    assert page.console_errors() == []


def test_the_legend_names_every_mark(server, session_id, page):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live", "the session")

    run(scenario())
    items = page.js("return [...document.querySelectorAll('.legend li')].map((li) => li.textContent)")
    text = " ".join(items).lower()
    for mark in ("point annotation", "crowded", "polyline", "polygon", "viewport", "location", "coarse", "selected",
                 "dragged", "refused", "shared camera", "callout", "land"):
        assert mark in text, mark
    assert page.js("return [...document.querySelectorAll('.legend svg')].every((s) => s.getAttribute('aria-hidden') === 'true')")


def test_selected_shapes_are_highlighted_and_annotations_inspected(server, session_id, page):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner", {"color": "#e03131"}),
                           ("bob", "editor", {"color": "#1c7ed6"})) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": {"type": "polyline", "id": "route", "strokeColor": "#ffd43b", "lineWidth": 4,
                                                                      "coordinates": ROUTE, "title": "Route"}})
            await alice.ok({"type": "annotation.add", "annotation": {"type": "polygon", "id": "park", "alpha": 0.5, "fillColor": "#2f9e44",
                                                                      "coordinates": PARK}})
            await alice.ok({"type": "annotation.add", "annotation": flag(lat=48.866, lon=2.275, metadata={"crane": 7, "crew": ["Ada", "Lin"]},
                                                                         kind="crane")})
            await bob.ok({"type": "select", "id": "route"})
            await alice.ok({"type": "select", "id": "park"})
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["annotationCount"] == 3 and s["settled"], "the shapes")
            colors = {p["name"]: p["color"] for p in s["participants"]}
            size = (s["mapSize"]["width"], s["mapSize"]["height"])
            # Beside the polyline (4 px wide), within the 10 px band: Bob's colour, a band along the whole shape.
            a, b = to_screen(s["view"], size, *ROUTE[0].values()), to_screen(s["view"], size, *ROUTE[1].values())
            length = math.dist(a, b)
            nx, ny = -(b[1] - a[1]) / length, (b[0] - a[0]) / length
            for t in (0.2, 0.8):
                x, y = a[0] + (b[0] - a[0]) * t + nx * 3.5, a[1] + (b[1] - a[1]) * t + ny * 3.5
                assert close(pixel(page, x, y), colors["Bob"]), (t, pixel(page, x, y), colors["Bob"], s["view"], page.state()["view"])
            # The polygon's outline in Alice's colour, at an edge's middle.
            p0, p1 = to_screen(s["view"], size, *PARK[0].values()), to_screen(s["view"], size, *PARK[2].values())
            mid = ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2)
            found = [c for row in pixels(page, mid[0] - 4, mid[1] - 4, 9, 9) for c in row]
            assert any(close(c, colors["Alice"]) for c in found), (found[:5], colors["Alice"])
            await asyncio.to_thread(page.screenshot, "selected-shapes")

            # Hovering the pin names it; clicking it opens the inspector.
            px, py = to_screen(s["view"], size, 48.866, 2.275)
            await asyncio.to_thread(move_to, page, px, py - 15)
            hover = await asyncio.to_thread(page.wait_js, "const h = document.getElementById('hover'); return !h.hidden && h.textContent", "the hover")
            assert "flag" in hover
            await asyncio.to_thread(click_at, page, px, py - 15)
            s = await asyncio.to_thread(page.wait, lambda s: s["inspector"] and s["inspector"]["id"] == "flag", "the inspector")
            facts = s["inspector"]["facts"]
            assert facts["Type"] == "point" and facts["Kind"] == "crane" and facts["Draggable"] == "yes"
            assert s["inspector"]["metadata"] == {"crane": 7, "crew": ["Ada", "Lin"]}
            assert facts["Selected by"] == "nobody" and facts["Dragged by"] == "nobody"
            await bob.ok({"type": "select", "id": "flag"})
            await bob.ok({"type": "drag", "id": "flag", "state": "starting"})
            s = await asyncio.to_thread(page.wait, lambda s: s["inspector"]["facts"]["Dragged by"] == "Bob (starting)", "Bob in the inspector")
            assert s["inspector"]["facts"]["Selected by"] == "Bob"
            text = page.js("return document.getElementById('inspector').textContent")
            assert '"crane": 7' in text and "Ada" in text
            await asyncio.to_thread(page.screenshot, "inspector")
            # A click on a polyline inspects it.
            x, y = a[0] + (b[0] - a[0]) * 0.5, a[1] + (b[1] - a[1]) * 0.5
            await asyncio.to_thread(click_at, page, x, y)
            s = await asyncio.to_thread(page.wait, lambda s: s["inspector"] and s["inspector"]["id"] == "route", "the route inspected")
            assert s["inspector"]["facts"]["Line width"] == "4" and s["inspector"]["facts"]["Stroke"] == "#ffd43b"

    run(scenario())
    assert page.console_errors() == []


def test_a_participant_is_zoomed_to_and_participants_are_filtered(server, session_id, page):
    async def scenario():
        clients = []
        try:
            for i in range(12):
                c = await Client.open(server.url, f"c{i}")
                await c.join(session_id, ["Ada", "Bea", "Cy"][i % 3] + f" {i}", "editor")
                await c.ok({"type": "camera.end", "camera": {"center": {"latitude": 40 + i, "longitude": -3 + i}, "zoom": 8 + i % 4},
                            "viewport": {"width": 390, "height": 844}})
                clients.append(c)
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and len(s["participants"]) == 12, "twelve participants")
            await asyncio.to_thread(lambda: page.driver.find_element("id", "people-filter").send_keys("bea"))
            # (the map draws once it is fitted: settled)
            s = await asyncio.to_thread(page.wait, lambda s: len(s["peopleShown"]) == 4 and s["settled"], "the filtered list")
            names = {p["id"]: p["name"] for p in s["participants"]}
            assert all(names[i].startswith("Bea") for i in s["peopleShown"])
            drawn = {label["text"] for label in s["labels"]}
            assert drawn and all(t.startswith("Bea") for t in drawn), drawn
            await asyncio.to_thread(page.screenshot, "filtered")
            # Click Bea 4: the map shows her viewport, centred on her camera.
            target = next(i for i in s["peopleShown"] if names[i] == "Bea 4")
            await asyncio.to_thread(lambda: page.driver.find_element("css selector", f"#people li[data-participant='{target}'] button").click())
            s = await asyncio.to_thread(page.wait, lambda s: s["zoomedTo"] == target, "the zoom to Bea 4")
            cx, cy = world(44, 1)
            assert abs(s["view"]["x"] - cx) < 1e-9 and abs(s["view"]["y"] - cy) < 1e-9
            # Her 390 x 844 point viewport at zoom 8 fills 90 % of the map's height (the tighter side).
            expected = 8 + math.log2(min(s["mapSize"]["width"] * 0.9 / 390, s["mapSize"]["height"] * 0.9 / 844))
            assert abs(s["view"]["zoom"] - expected) < 1e-6, (s["view"]["zoom"], expected)
        finally:
            for c in clients:
                await c.close()

    run(scenario())
    assert page.console_errors() == []


def test_the_overview_shows_names_activity_and_searches_and_sorts(server, page):
    import uuid
    first, second = "ov-a-" + uuid.uuid4().hex[:6], "ov-b-" + uuid.uuid4().hex[:6]

    async def scenario():
        alice = await Client.open(server.url, "alice")
        bob = await Client.open(server.url, "bob")
        cy = await Client.open(server.url, "cy")
        try:
            await alice.join(first, "Alice", "owner")
            await bob.join(second, "Bob", "owner")
            await cy.join(second, "Cyrus", "viewer")
            await asyncio.to_thread(page.open, http_url(server))

            def row(s, id):
                return next((x for x in s["sessions"] if x["session"] == id), None)

            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and row(s, first) and row(s, second), "both sessions")
            await while_active(page, bob, lambda i: {"type": "camera.end", "camera": {"center": {"latitude": 10, "longitude": i % 50}, "zoom": 3}},
                               lambda s: row(s, second)["messagesPerSecond"] > 0, "activity in the second session")
            names = page.js(f"return document.querySelector(\"tr[data-session='{second}'] td.names\").textContent")
            assert "Bob" in names and "Cyrus" in names, names
            last = page.js(f"return document.querySelector(\"tr[data-session='{second}'] td.last-activity\").textContent")
            assert last.endswith("s ago"), last
            # The sparkline has drawn something.
            inked = page.js(f"const c = document.querySelector(\"tr[data-session='{second}'] canvas.spark\");"
                            " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                            " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n")
            assert inked > 20, inked
            # Search by a participant's name.
            await asyncio.to_thread(lambda: page.driver.find_element("id", "overview-search").send_keys("cyr"))
            s = await asyncio.to_thread(page.wait, lambda s: s["shown"] == [second], "the search by name")
            await asyncio.to_thread(page.screenshot, "overview-search")
            page.driver.find_element("id", "overview-search").clear()
            page.js("document.getElementById('overview-search').dispatchEvent(new Event('input'))")
            # Sort by session id, then the other way.
            header = page.driver.find_element("css selector", "th[data-sort='session'] button")
            header.click()
            s = await asyncio.to_thread(page.wait, lambda s: s["sort"] and s["sort"]["key"] == "session", "sorted by id")
            ids = [x for x in s["shown"] if x in (first, second)]
            assert ids == [first, second]
            assert page.js("return document.querySelector(\"th[data-sort='session']\").getAttribute('aria-sort')") == "ascending"
            header.click()
            s = await asyncio.to_thread(page.wait, lambda s: s["sort"]["descending"], "sorted the other way")
            assert [x for x in s["shown"] if x in (first, second)] == [second, first]
            page.driver.find_element("css selector", "th[data-sort='participants'] button").click()
            s = await asyncio.to_thread(page.wait, lambda s: s["sort"]["key"] == "participants", "sorted by participants")
            counts = [row(s, x)["participants"] for x in s["shown"]]
            assert counts == sorted(counts, reverse=True)
            await asyncio.to_thread(page.screenshot, "overview")
        finally:
            for c in (alice, bob, cy):
                await c.close()

    run(scenario())
    assert page.console_errors() == []


def test_leaflet_example_shows_viewports_and_drags(server, session_id, page):
    async def scenario():
        alice = await Client.open(server.url, "alice")
        try:
            await alice.join(session_id, "Alice", "owner", color="#e03131")
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await alice.ok({"type": "camera.end", "camera": {"center": {"latitude": 48.86, "longitude": 2.30}, "zoom": 13},
                            "viewport": {"width": 390, "height": 844}})
            await asyncio.to_thread(page.open, f"http://{server.host}:{server.port}/dashboard/leaflet.html?session={session_id}")
            v = await asyncio.to_thread(page.wait_js, "const v = window.leafletExample && window.leafletExample.viewports;"
                                        " return v && Object.keys(v).length === 1 && v", "Alice's viewport")
            alice_view = next(iter(v.values()))
            assert alice_view["name"] == "Alice" and alice_view["tooltip"] == "Alice"
            assert contrast(alice_view["color"], page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-water').trim()")) >= 3
            lons = [c["longitude"] for c in alice_view["corners"]]
            half = 390 / (256 * 2 ** 13) * 360 / 2
            assert abs(min(lons) - (2.30 - half)) < 1e-9 and abs(max(lons) - (2.30 + half)) < 1e-9
            assert page.js("return document.querySelectorAll('.leaflet-tooltip').length") >= 1
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            d = await asyncio.to_thread(page.wait_js, "const d = window.leafletExample.drags.flag; return d && d.state === 'starting' && d",
                                        "the drag starting")
            assert d["label"] == "starting · Alice" and d["color"] == alice_view["color"]
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 48.861, "longitude": 2.301}})
            await asyncio.to_thread(page.wait_js, "const d = window.leafletExample.drags.flag; return d && d.label === 'dragging · Alice'",
                                    "the drag moving")
            await asyncio.to_thread(page.screenshot, "leaflet-presence")
            await alice.ok({"type": "drag", "id": "flag", "state": "ending"})
            await asyncio.to_thread(page.wait_js, "return Object.keys(window.leafletExample.drags).length === 0", "the drag over")
            await alice.ok({"type": "camera.end", "camera": {"center": {"latitude": 48.80, "longitude": 2.40}, "zoom": 13},
                            "viewport": {"width": 390, "height": 844}})
            await asyncio.to_thread(page.wait_js, "const v = Object.values(window.leafletExample.viewports)[0];"
                                    " return v && Math.abs(v.corners.reduce((s, c) => s + c.longitude, 0) / 4 - 2.40) < 1e-6", "the viewport moved")
        finally:
            await alice.close()
        await asyncio.to_thread(page.wait_js, "return Object.keys(window.leafletExample.viewports).length === 0", "Alice's viewport gone")

    run(scenario())
    assert page.console_errors() == []
