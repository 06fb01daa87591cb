"""The browser dashboard in headless Chromium against the real server: the
overview, a session watched live while test clients change it, reconnection
after a server restart, and the time to render 10,000 annotations (reported)."""

import asyncio
import json
import math
import re
import shutil
import subprocess
import time

import pytest

from conftest import Server
from dashboard_support import MapFiles, flag, free_port, http_url, page, select_or_deselect, while_active  # noqa: F401 (page is a fixture)
from meridian_client import Client, run, members
from dashboard_support import close, pixels


def test_dashboard_files_have_their_content_types(server):
    import urllib.request
    expected = {"": "text/html", "app.js": "text/javascript", "meridian.js": "text/javascript",
                "dashboard.css": "text/css", "config.json": "application/json", "icon.svg": "image/svg+xml"}
    for name, kind in expected.items():
        with urllib.request.urlopen(http_url(server, name)) as r:
            assert r.status == 200 and r.headers["Content-Type"].startswith(kind), (name, r.headers["Content-Type"])
    with urllib.request.urlopen(f"http://{server.host}:{server.port}/") as r:
        assert r.headers["Content-Type"].startswith("text/html") and b"/dashboard/app.js" in r.read()


def test_overview_lists_sessions_and_links_to_them(server, session_id, page):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner"), ("bob", "editor")) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await asyncio.to_thread(page.open, http_url(server))

            def row(s):
                return next((x for x in s.get("sessions", []) if x["session"] == session_id), None)

            # The overview's parts are posted about once a second: wait for the one after the add.
            shown = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and row(s) and row(s)["participants"] == 2
                                            and row(s)["annotations"] == 1, "the session with two participants and its annotation")
            assert row(shown)["annotations"] == 1 and row(shown)["dashboards"] == 0
            # Activity (kept up until it shows) appears as a message rate.
            await while_active(page, alice, select_or_deselect, lambda s: row(s) and row(s)["messagesPerSecond"] > 0, "a message rate")
            link = f"a[href='/dashboard/?session={session_id}']"
            await asyncio.to_thread(page.wait_js, f"return document.querySelector(\"{link}\") !== null", "the session link")
            await asyncio.to_thread(page.screenshot, "overview")
            # Found and clicked in one step in the page: the overview redraws its rows every
            # second, and an element found before a redraw is stale after it.
            await asyncio.to_thread(page.driver.execute_script, f"document.querySelector(\"{link}\").click()")
            await asyncio.to_thread(page.wait, lambda s: s.get("session") == session_id and s["status"] == "live", "the session view")
            assert [p["name"] for p in page.state()["participants"]] == ["Alice", "Bob"]

    run(scenario())
    assert page.console_errors() == []


def test_session_view_follows_a_live_session(server, session_id, page):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner", {"color": "#ff6b6b"}),
                           ("bob", "editor", {"color": "#4dabf7"})) as (alice, bob):
            await alice.ok({"type": "camera.end", "camera": {"center": {"latitude": 48.86, "longitude": 2.30}, "zoom": 12},
                            "viewport": {"width": 390, "height": 844}})
            await bob.ok({"type": "location", "location": {"coordinate": {"latitude": 48.85, "longitude": 2.33},
                                                           "accuracy": 30, "authorization": "reduced"}})
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and len(s["participants"]) == 2, "two participants")
            # Alice's visible area from her camera and viewport (Web Mercator): 390 points at zoom 12
            # span 390 / (256 * 2^12) of 360 degrees of longitude.
            bounds = page.state()["participants"][0]["visibleBounds"]
            half = 390 / (256 * 2 ** 12) * 360 / 2
            assert abs(bounds["southWest"]["longitude"] - (2.30 - half)) < 1e-9 and abs(bounds["northEast"]["longitude"] - (2.30 + half)) < 1e-9
            y = (1 - math.log(math.tan(math.radians(48.86)) + 1 / math.cos(math.radians(48.86))) / math.pi) / 2
            lat = lambda y: math.degrees(math.atan(math.sinh(math.pi - 2 * math.pi * y)))
            dy = 844 / 2 / (256 * 2 ** 12)
            assert abs(bounds["northEast"]["latitude"] - lat(y - dy)) < 1e-9 and abs(bounds["southWest"]["latitude"] - lat(y + dy)) < 1e-9

            # Annotations of every shape, with styles and z-order.
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await alice.ok({"type": "annotation.add", "annotation": {
                "type": "polygon", "id": "park", "zIndex": -1, "alpha": 0.5, "fillColor": "#2f9e44", "strokeColor": "#8ce99a",
                "coordinates": [{"latitude": 48.850, "longitude": 2.280}, {"latitude": 48.862, "longitude": 2.300},
                                {"latitude": 48.845, "longitude": 2.310}]}})
            await alice.ok({"type": "annotation.add", "annotation": {
                "type": "polyline", "id": "route", "strokeColor": "#ffd43b", "lineWidth": 6,
                "coordinates": [{"latitude": 48.840, "longitude": 2.270}, {"latitude": 48.870, "longitude": 2.320}]}})
            await alice.ok({"type": "annotation.add", "annotation": {
                "type": "point", "id": "cafe", "image": "cafe", "title": "Café", "zIndex": 2,
                "coordinate": {"latitude": 48.855, "longitude": 2.320}}})
            await bob.ok({"type": "select", "id": "cafe"})
            s = await asyncio.to_thread(page.wait, lambda s: s["annotationCount"] == 4 and
                                        any(p["selection"] == "cafe" for p in s["participants"]), "four annotations and Bob's selection")
            await asyncio.to_thread(page.screenshot, "1-annotations")

            # Alice drags the flag: starting, then the moving marker.
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            await asyncio.to_thread(page.wait, lambda s: [(d["id"], d["state"]) for d in s["drags"]] == [("flag", "starting")],
                                    "the drag starting")
            moved = {"latitude": 48.8600, "longitude": 2.3000}
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": moved})
            await asyncio.to_thread(page.wait, lambda s: s["drags"] and s["drags"][0]["state"] == "dragging"
                                    and s["drags"][0]["coordinate"] == moved, "the moving marker")
            assert page.js("return window.meridianDashboard.annotation('flag').coordinate") == moved
            moved2 = {"latitude": 48.8610, "longitude": 2.3050}
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": moved2})
            await asyncio.to_thread(page.wait, lambda s: s["drags"] and s["drags"][0]["coordinate"] == moved2, "a later move")
            await asyncio.to_thread(page.wait_js,
                                    "return document.querySelector('#drags li[data-annotation=flag][data-state=dragging]') !== null",
                                    "the dragging row")

            # Bob's conflicting drag is refused; the dashboard shows the refusal.
            answer, _ = await bob.request({"type": "drag", "id": "flag", "state": "starting"})
            assert answer["type"] == "error" and answer["code"] == "drag_conflict", answer
            await asyncio.to_thread(page.wait, lambda s: {"id": "flag", "participant": bob.participant, "holder": alice.participant}
                                    in s["refusals"], "Bob's refused drag")
            text = await asyncio.to_thread(page.wait_js, "const r = document.querySelector('#drags li.refused'); return r && r.textContent",
                                           "the refusal row")
            assert "Bob" in text and "Alice" in text, text
            await asyncio.to_thread(page.screenshot, "2-drag-refused")

            # Alice ends the drag: the committed coordinate, state none.
            final = {"latitude": 48.8620, "longitude": 2.3100}
            await alice.ok({"type": "drag", "id": "flag", "state": "ending", "coordinate": final})
            await asyncio.to_thread(page.wait, lambda s: s["drags"] == [], "the drag back to none")
            assert page.js("return window.meridianDashboard.annotation('flag').coordinate") == final
            ended = await asyncio.to_thread(page.wait_js, "const r = document.querySelector('#drags li.outcome[data-state=ending]');"
                                            " return r && r.textContent", "the committed drag")
            assert "committed" in ended and "48.86200, 2.31000" in ended, ended
            assert page.js("return document.querySelector('#drags li[data-state=dragging], #drags li[data-state=starting]')") is None

            # The shared callout.
            await alice.ok({"type": "callout.show", "callout": {"title": "Meet here", "detail": "at the flag",
                                                                 "anchor": {"annotation": "flag"}}})
            shown = await asyncio.to_thread(page.wait_js,
                                            "const c = document.getElementById('callout'); return !c.hidden && c.textContent",
                                            "the callout")
            assert "Meet here" in shown and "Alice" in shown, shown
            assert page.state()["calloutBy"] == alice.participant
            # The shared camera and its holder.
            await alice.ok({"type": "camera.lease.acquire"})
            await alice.ok({"type": "camera.end", "target": "shared",
                            "camera": {"center": {"latitude": 48.857, "longitude": 2.300}, "zoom": 13}})
            await asyncio.to_thread(page.wait, lambda s: s["cameraLease"] == alice.participant and s["sharedCamera"], "the shared camera")
            held = page.js("return document.getElementById('shared-camera').textContent")
            assert "Alice" in held, held
            # Following the shared camera puts the dashboard's map where the presenter looks.
            await asyncio.to_thread(lambda: page.driver.find_element("id", "follow-shared").click())
            s = await asyncio.to_thread(page.wait, lambda s: s["view"]["zoom"] == 13, "the map following the shared camera")
            assert page.js("return document.getElementById('follow-shared').getAttribute('aria-pressed')") == "true"
            assert abs(s["view"]["x"] - (2.300 + 180) / 360) < 1e-12
            await asyncio.to_thread(page.screenshot, "3-callout")

            # The server's rates for this session reach the activity charts.
            await asyncio.to_thread(page.wait, lambda s: s["serverRates"]["peakDeliveriesPerSecond"] > 0, "server delivery rate")

            # Bob disconnects.
            await bob.close()
            await asyncio.to_thread(page.wait, lambda s: [p["name"] for p in s["participants"]] == ["Alice"], "Bob gone")
            feed = page.js("return document.getElementById('feed').textContent")
            assert "Bob left (disconnected)" in feed, feed
            # The dashboard never appeared as a participant and changed nothing.
            ack, _ = await alice.ping()
            assert page.state()["seq"] == ack["seq"]
            await asyncio.to_thread(page.screenshot, "4-after-disconnect")
            # The same view on a laptop and on a wall screen (for people to look at).
            for label, size in (("laptop", (1280, 800)), ("wall", (2560, 1440))):
                await asyncio.to_thread(page.driver.set_window_size, *size)
                await asyncio.to_thread(page.wait_js, f"return window.innerWidth >= {size[0] - 40}", f"the {label} size")
                await asyncio.to_thread(page.screenshot, f"5-{label}")

    run(scenario())
    assert page.console_errors() == []


def test_the_session_view_draws_when_the_browser_gives_no_animation_frames(server, session_id, page):
    """A browser may stop giving a page animation frames (a hidden or throttled window, or a
    headless one that drops them): the map still draws and the panels still show the session."""
    # Before any script of the page runs, animation frames are asked for and never given.
    page.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.framesAsked = 0;
        window.requestAnimationFrame = () => ++window.framesAsked;
        window.cancelAnimationFrame = () => {};"""})

    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            s = await asyncio.to_thread(page.wait, lambda s: s.get("status") == "live" and s.get("annotationCount") == 1
                                        and s["frames"] > 0 and s["settled"] and [p["name"] for p in s["participants"]] == ["Alice"],
                                        "the session drawn without animation frames")
            assert s["mapSize"]["width"] > 0 and s["drawnAnnotations"] == 1, s
            # The page did ask for frames: what drew it was the fallback, not a frame.
            assert page.js("return window.framesAsked") > 0
            # Changes keep coming through.
            await alice.ok({"type": "annotation.add", "annotation": flag("second")})
            await asyncio.to_thread(page.wait, lambda s: s["annotationCount"] == 2 and s["drawnAnnotations"] == 2, "a second annotation drawn")

    run(scenario())
    assert page.console_errors() == []


def test_dashboard_shows_disconnection_and_reconnects(session_id, page):
    port = free_port()
    server = Server("--port", str(port))
    try:
        async def first():
            async with members(server.url, session_id, ("alice", "owner")) as (alice,):
                await alice.ok({"type": "annotation.add", "annotation": flag()})
                await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
                await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["annotationCount"] == 1, "the first server's session")

        run(first())
        server.stop()
        page.wait_js("return !document.getElementById('offline').hidden", "the disconnected banner")
        page.screenshot("disconnected")
        server = Server("--port", str(port))

        async def second():
            bob = await Client.open(server.url, "bob")
            await bob.join(session_id, "Bob", "owner")
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["annotationCount"] == 0
                                    and [p["name"] for p in s["participants"]] == ["Bob"], "the restarted server's session")
            await bob.ok({"type": "annotation.add", "annotation": flag("again")})
            await asyncio.to_thread(page.wait, lambda s: s["annotationCount"] == 1, "events after reconnecting")
            assert page.js("return document.getElementById('offline').hidden") is True
            await bob.close()

        run(second())
    finally:
        server.stop()
    # While the server was down the browser reports each failed WebSocket attempt (and the event log's
    # request, when the server went down while it was being read); nothing else may fail.
    assert page.console_errors(allowed=("WebSocket connection to", "/api/sessions/")) == []


def test_render_time_of_10000_annotations_is_reported(start_server, session_id, page):
    count = 10_000
    # 10,000 adds in a burst: above the default per-connection rate limit.
    server = start_server("--rate-limit", "1000000", "--rate-burst", "1000000")

    async def scenario():
        alice = await Client.open(server.url, "alice", validate=False)
        try:
            await alice.join(session_id, "Alice", "owner")
            refs = []
            for i in range(count):
                a = {"type": "point", "id": f"p{i}", "title": f"Point {i}", "zIndex": i % 7,
                     "coordinate": {"latitude": 40 + (i // 100) * 0.05, "longitude": -5 + (i % 100) * 0.1}}
                refs.append(await alice.send({"type": "annotation.add", "annotation": a}, check=False))
            answer, _ = await alice.answer(refs[-1], timeout=120)
            assert answer["type"] == "ack", answer
            started = time.monotonic()
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            s = await asyncio.to_thread(page.wait, lambda s: s["annotationCount"] == count and s["renderMs"] is not None,
                                        "10,000 annotations", 120)
            wall = time.monotonic() - started
            # The offline basemap is loaded before the page joins: the first frame draws it under the annotations.
            assert s["basemapLoaded"] is True
            # The time is to the map drawn fitted to the session (10 by 5 degrees: about zoom 6), which is also
            # the first frame drawn: nothing is drawn at the world view before the fit.
            assert s["fits"] >= 1 and s["firstFrame"]["view"]["zoom"] > 4, (s["fits"], s["firstFrame"])
            print(f"\ndashboard render of {count} annotations with the basemap: {s['renderMs']:.0f} ms from snapshot to drawn "
                  f"(one frame {s['drawMs']:.0f} ms); {wall * 1000:.0f} ms from page load to drawn")
            await asyncio.to_thread(page.screenshot, "10000")
        finally:
            await alice.close()

    run(scenario(), timeout=300)
    assert page.console_errors() == []


def cut_connections(port):
    """Resets every TCP connection to the server's port, as a network failure would."""
    ss = shutil.which("ss")
    if ss is None:
        pytest.skip("`ss` (iproute2) is needed to cut connections")
    result = subprocess.run([ss, "-K", "-tn", "dst", f"127.0.0.1:{port}"], capture_output=True, text=True)
    if result.returncode != 0 or "ESTAB" not in result.stdout:
        pytest.skip(f"`ss -K` cannot reset sockets here (needs CAP_NET_ADMIN and INET_DIAG_DESTROY): {result.stderr.strip()}")


def test_dashboard_resumes_after_a_network_failure(start_server, session_id, page):
    server = start_server()  # its own server: every connection to it is cut

    async def scenario():
        alice = await Client.open(server.url, "alice")
        await alice.join(session_id, "Alice", "owner")
        await alice.ok({"type": "annotation.add", "annotation": flag()})
        await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
        await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["annotationCount"] == 1, "the session")
        # Alice's connection is cut with the dashboard's: her participant.left happens
        # while the dashboard is away, so it can only arrive through the resume.
        cut_connections(server.port)
        s = await asyncio.to_thread(page.wait, lambda s: s["resumes"] == 1 and s["status"] == "live" and s["participants"] == [],
                                    "the resumed session without Alice")
        assert s["welcomes"] == 2
        bob = await Client.open(server.url, "bob")
        await bob.join(session_id, "Bob", "owner")
        ack, _ = await bob.ping()
        await asyncio.to_thread(page.wait, lambda s: s["seq"] == ack["seq"] and [p["name"] for p in s["participants"]] == ["Bob"],
                                "events after the resume")
        feed = page.js("return document.getElementById('feed').textContent")
        assert "Alice left (disconnected)" in feed, feed
        await bob.close()

    run(scenario())
    assert page.console_errors() == []


def test_dashboard_options_reach_the_page(start_server, tmp_path):
    import urllib.request
    tiles = "https://tiles.example/{z}/{x}/{y}.png"
    style = "https://tiles.example/styles/streets.json"
    (tmp_path / "index.html").write_text("<!doctype html><title>custom</title>")
    server = start_server("--dashboard-tiles", tiles, "--dashboard-style", style, "--dashboard-directory", str(tmp_path))
    with urllib.request.urlopen(http_url(server, "config.json")) as r:
        assert json.load(r) == {"tileURL": tiles, "styleURL": style}
    with urllib.request.urlopen(f"http://{server.host}:{server.port}/") as r:
        assert r.read() == b"<!doctype html><title>custom</title>"


def map_colors(page, x, y, size=5):
    """The colours shown in a size x size box of the map at (x, y)."""
    return [c for row in pixels(page, x, y, size, size) for c in row]


def test_session_view_works_by_keyboard_and_draws_configured_tiles(session_id, page):
    # Tiles of one colour from a tile server of the test's own: MapLibre draws them under the session.
    with MapFiles(tile_rgb=(0xC4, 0x5A, 0x1E)) as files:
        server = Server("--port", str(free_port()), "--dashboard-tiles", files.url + "/tiles/{z}/{x}/{y}.png")
        try:
            async def scenario():
                async with members(server.url, session_id, ("alice", "owner")) as (alice,):
                    await alice.ok({"type": "annotation.add", "annotation": flag()})
                    await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
                    s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["tilesLoaded"] > 0 and s["settled"],
                                                "raster tiles")
                    assert s["basemapRenderer"] == "maplibre", s["basemapError"]
                    assert all(re.fullmatch(r"/tiles/\d+/\d+/\d+\.png", p) for p in files.paths) and files.paths, files.paths
                    shown = map_colors(page, s["mapSize"]["width"] * 0.25, s["mapSize"]["height"] * 0.7)
                    assert sum(close(c, "#c45a1e", 12) for c in shown) > len(shown) / 2, shown
                    from selenium.webdriver.common.keys import Keys
                    from selenium.webdriver.common.action_chains import ActionChains
                    # Tab reaches the map (after the header link); it has a visible focus ring and zooms with +.
                    for _ in range(12):
                        ActionChains(page.driver).send_keys(Keys.TAB).perform()
                        if page.js("return document.activeElement.id") == "map":
                            break
                    assert page.js("return document.activeElement.id") == "map"
                    assert page.js("return getComputedStyle(document.activeElement).outlineStyle") == "solid"
                    zoom = page.state()["view"]["zoom"]
                    page.driver.switch_to.active_element.send_keys("+")
                    await asyncio.to_thread(page.wait, lambda s: abs(s["view"]["zoom"] - (zoom + 1)) < 1e-9, "the map zoomed in by keyboard")
                    x = page.state()["view"]["x"]
                    page.driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
                    await asyncio.to_thread(page.wait, lambda s: s["view"]["x"] > x, "the map panned by keyboard")
                    await asyncio.to_thread(page.screenshot, "tiles")
                    assert page.console_errors() == []  # before the server stops and the page reconnects

            run(scenario())
        finally:
            server.stop()


def test_a_map_style_draws_under_the_session_with_streets_at_harbour_zoom(session_id, page):
    # A MapLibre style (here one background colour; in production vector streets) instead of the
    # offline basemap: drawn under the session, and the map no longer says it has no streets.
    with MapFiles(style_color="#2e8b57") as files:
        server = Server("--port", str(free_port()), "--dashboard-style", files.url + "/style.json")
        try:
            async def scenario():
                async with members(server.url, session_id, ("alice", "owner")) as (alice,):
                    await alice.ok({"type": "annotation.add", "annotation": flag()})
                    await alice.ok({"type": "annotation.add", "annotation": flag("pier", 48.8590, 2.2950)})
                    await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
                    s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["settled"] and s["view"]["zoom"] >= 12,
                                                "the session at harbour zoom")
                    assert s["basemapRenderer"] == "maplibre" and s["basemapError"] is None, s["basemapError"]
                    assert files.paths == ["/style.json"], files.paths
                    assert page.js("return document.getElementById('basemap-note').hidden") is True
                    shown = map_colors(page, s["mapSize"]["width"] * 0.25, s["mapSize"]["height"] * 0.7)
                    assert sum(close(c, "#2e8b57", 12) for c in shown) > len(shown) / 2, shown
                    await asyncio.to_thread(page.screenshot, "style")
                    assert page.console_errors() == []  # before the server stops and the page reconnects

            run(scenario())
        finally:
            server.stop()


def test_a_map_style_that_does_not_load_is_named_and_the_session_still_shows(session_id, page):
    with MapFiles() as files:
        server = Server("--port", str(free_port()), "--dashboard-style", files.url + "/no-such-style.json")
        try:
            async def scenario():
                async with members(server.url, session_id, ("alice", "owner")) as (alice,):
                    await alice.ok({"type": "annotation.add", "annotation": flag()})
                    await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
                    s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["drawnAnnotations"] == 1
                                                and s["basemapError"], "the style's error")
                    assert "/no-such-style.json" in s["basemapError"], s["basemapError"]  # named, with why MapLibre gave
                    assert files.paths == ["/no-such-style.json"], files.paths

            run(scenario())
        finally:
            server.stop()


def test_example_web_map_app_adds_and_drags_points(server, session_id, page):
    from selenium.webdriver.common.action_chains import ActionChains

    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            # The example opens centred on 0°, 0°: this point is at the middle of its map.
            await alice.ok({"type": "annotation.add", "annotation": flag("centre", 0, 0)})
            await asyncio.to_thread(page.open, f"http://{server.host}:{server.port}/dashboard/example.html?session={session_id}&name=Web")
            await asyncio.to_thread(page.wait_js, "return document.body.dataset.status === 'live'", "the example joined")
            joined, _ = await alice.until(lambda m: m["type"] == "participant.joined")
            web = joined["participant"]["id"]
            canvas = page.driver.find_element("id", "map")

            def drag():
                ActionChains(page.driver).move_to_element(canvas).click_and_hold() \
                    .move_by_offset(60, 0).move_by_offset(60, 0).release().perform()

            await asyncio.to_thread(drag)
            done, seen = await alice.until(lambda m: m["type"] == "drag" and m["state"] == "none" and m["participant"] == web)
            states = [m["state"] for m in seen if m["type"] == "drag"] + ["none"]
            assert states[0] == "starting" and "dragging" in states and states[-2:] == ["ending", "none"], states
            assert done["coordinate"]["longitude"] > 1 and abs(done["coordinate"]["latitude"]) < 1e-6 + 1, done

            def tap():
                ActionChains(page.driver).move_to_element_with_offset(canvas, -200, -100).click().perform()

            await asyncio.to_thread(tap)
            added, _ = await alice.until(lambda m: m["type"] == "annotation.added")
            a = added["annotation"]
            assert a["id"].startswith("web-") and a["draggable"] is True
            assert a["coordinate"]["longitude"] < 0 and a["coordinate"]["latitude"] > 0, a
            await asyncio.to_thread(page.screenshot, "example")

    run(scenario())
    assert page.console_errors() == []


def test_dashboard_with_a_token_in_the_page_fragment(start_server, session_id, page, tmp_path):
    """Under --auth jwt the dashboard takes a dashboard token from #token=, watches the
    overview with it, keeps it on the link to a session and joins that session hidden."""
    from test_auth import SECRET, claims, hs256
    secret = tmp_path / "secret"
    secret.write_text(SECRET)
    server = start_server("--auth", "jwt", "--jwt-secret-file", str(secret))
    token = hs256(claims("wall", "dashboard", session="*"))

    async def scenario():
        alice = await Client.open(server.url, "alice")
        try:
            welcome, _ = await alice.request({"type": "join", "session": session_id, "token": hs256(claims("alice", "owner", session=session_id, name="Alice"))})
            assert welcome["type"] == "welcome"
            await alice.ok({"type": "annotation.add", "annotation": flag()})

            def row(s):
                return next((x for x in s.get("sessions", []) if x["session"] == session_id), None)

            await asyncio.to_thread(page.open, http_url(server) + f"#token={token}")
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and row(s) and row(s)["participants"] == 1,
                                    "the overview, watched with the token")
            link = f"a[href='/dashboard/?session={session_id}#token={token}']"
            await asyncio.to_thread(page.wait_js, f"return document.querySelector(\"{link}\") !== null", "the session link keeping the token")
            # Found and clicked in one step in the page: the overview redraws its rows every
            # second, and an element found before a redraw is stale after it.
            await asyncio.to_thread(page.driver.execute_script, f"document.querySelector(\"{link}\").click()")
            shown = await asyncio.to_thread(page.wait, lambda s: s.get("session") == session_id and s["status"] == "live", "the session view")
            assert [p["name"] for p in shown["participants"]] == ["Alice"], "the dashboard joined hidden"
            # The event log is read with the same token.
            logged = await asyncio.to_thread(page.wait, lambda s: s["history"]["loaded"] or s["history"]["error"], "the event log")
            assert logged["history"]["error"] is None and logged["history"]["entries"] >= 2, logged["history"]
        finally:
            await alice.close()

    run(scenario())
    assert page.console_errors() == []


def test_dashboard_without_a_token_shows_the_refusal(start_server, page, tmp_path):
    from test_auth import SECRET
    secret = tmp_path / "secret"
    secret.write_text(SECRET)
    server = start_server("--auth", "jwt", "--jwt-secret-file", str(secret))
    page.open(http_url(server))
    page.wait_js("return document.body.innerText.includes('unauthorized')", "the refusal shown on the page")
