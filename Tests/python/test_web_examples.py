"""The web example apps (Leaflet and MapLibre GL JS over meridian.js) in headless Chromium
against the real server, with a Python client as the other participant: the page mirrors
the session and shows the other's drag live, a drag made in the page with real pointer
input is a Meridian drag the other sees, and a drag the server refuses (the other holds
the annotation) puts the marker back where the server has it and says why. The MapLibre
page also sends its camera, selects a clicked marker and shows the shared callout, and
says so when the server has no MapLibre GL JS to give it."""

import asyncio
import json

import pytest
from selenium.webdriver.common.actions.action_builder import ActionBuilder

from dashboard_support import MapFiles, flag, page  # noqa: F401 (page is a fixture)
from meridian_client import members, run, snapshot

# page, its test hook (window.NAME), and a script true once the point, the polyline and
# the polygon are drawn: as the library's own DOM nodes (Leaflet), or as a marker element
# and features MapLibre has rendered in its WebGL layers (queryRenderedFeatures).
EXAMPLES = {
    "leaflet": ("leaflet.html", "leafletExample",
                "return document.querySelectorAll('.leaflet-marker-icon').length === 1"
                " && document.querySelectorAll('path.leaflet-interactive').length === 2"),
    "maplibre": ("maplibre.html", "maplibreExample",
                 "const map = window.maplibreExample.map;"
                 " const drawn = (layer) => new Set(map.queryRenderedFeatures({ layers: [layer] }).map((f) => f.properties.id));"
                 " const lines = drawn('annotation-lines'), fills = drawn('annotation-fills');"
                 " return document.querySelectorAll('.maplibregl-marker.meridian-point').length === 1"
                 "   && lines.size === 2 && lines.has('route') && lines.has('park') && fills.size === 1 && fills.has('park')"),
}
FLAG = {"latitude": 48.8584, "longitude": 2.2945}
ROUTE = {"type": "polyline", "id": "route", "coordinates": [{"latitude": 48.84, "longitude": 2.27}, {"latitude": 48.87, "longitude": 2.32}]}
PARK = {"type": "polygon", "id": "park", "alpha": 0.6, "coordinates": [
    {"latitude": 48.850, "longitude": 2.280}, {"latitude": 48.862, "longitude": 2.300}, {"latitude": 48.845, "longitude": 2.310}]}
# Where the tests press and move the pointer, relative to the marker's centre (CSS pixels).
POINTER_PATH = [(15, 5), (30, 10), (45, 15), (60, 20)]


@pytest.fixture(params=sorted(EXAMPLES))
def example(request):
    return request.param


class Example:
    """One example page: opening it, and reading what its map layers show."""

    def __init__(self, page, server, session, name):
        self.page = page
        self.path, self.hook, self.drawn = EXAMPLES[name]
        self.url = f"http://{server.host}:{server.port}/dashboard/{self.path}?session={session}"

    def open(self, layers=1):
        self.page.open(self.url)
        self.page.wait_js(f"return document.body.dataset.status === 'live' && window.{self.hook}"
                          f" && window.{self.hook}.layerCount === {layers} && window.{self.hook}.screen('flag') !== null",
                          f"the {self.path} page live with {layers} layers")

    def marker(self, id="flag"):
        return self.page.js(f"return window.{self.hook}.markers[arguments[0]] || null", id)

    def screen(self, id="flag"):
        return self.page.js(f"return window.{self.hook}.screen(arguments[0])", id)

    def wait_marker_at(self, c, what, id="flag"):
        """Waits until the marker's layer is at coordinate `c` (to 1e-6 degree)."""
        return self.wait(f"(m => m && Math.abs(m.latitude - {c['latitude']!r}) < 1e-6"
                         f" && Math.abs(m.longitude - {c['longitude']!r}) < 1e-6 && m)(h.markers[{json.dumps(id)}])", what)

    def wait(self, expression, what):
        """Waits until `expression` over the hook `h` is truthy; returns its value."""
        return self.page.wait_js(f"const h = window.{self.hook}; return {expression};", what)


def press_and_move(page, start, path):
    """Real pointer input: the mouse to `start`, pressed, then moved along `path` (offsets from start)."""
    actions = ActionBuilder(page.driver)
    x, y = round(start["x"]), round(start["y"])
    actions.pointer_action.move_to_location(x, y).pointer_down()
    for dx, dy in path:
        actions.pointer_action.move_to_location(x + dx, y + dy)
    actions.perform()


def release(page):
    actions = ActionBuilder(page.driver)
    actions.pointer_action.pointer_up()
    actions.perform()


async def joined_page(alice):
    """The participant id of the page, from its `participant.joined`."""
    joined, _ = await alice.until(lambda m: m["type"] == "participant.joined")
    return joined["participant"]["id"]


def close(a, b, tolerance=1e-9):
    return abs(a["latitude"] - b["latitude"]) < tolerance and abs(a["longitude"] - b["longitude"]) < tolerance


def test_example_mirrors_the_session_and_shows_a_remote_drag_live(server, session_id, page, example):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": flag(lat=FLAG["latitude"], lon=FLAG["longitude"])})
            await alice.ok({"type": "annotation.add", "annotation": ROUTE})
            await alice.ok({"type": "annotation.add", "annotation": PARK})
            ex = Example(page, server, session_id, example)
            await asyncio.to_thread(ex.open, 3)
            await asyncio.to_thread(page.wait_js, ex.drawn, "the point, the polyline and the polygon drawn")
            assert close(ex.marker(), FLAG, 1e-6), ex.marker()
            other = "maplibre.html" if example == "leaflet" else "leaflet.html"
            assert page.js("return document.getElementById('other').href").endswith(f"/dashboard/{other}?session={session_id}")

            # Alice's drag moves the marker while it goes on, and the page says who drags it.
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            d = await asyncio.to_thread(ex.wait, "h.drags.flag && h.drags.flag.state === 'starting' && h.drags.flag", "Alice's drag starting")
            assert d["label"] == "starting · Alice", d
            before = ex.screen()
            first = {"latitude": 48.8600, "longitude": 2.3000}
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": first})
            await asyncio.to_thread(ex.wait_marker_at, first, "the marker at Alice's first move")
            at_first = ex.screen()
            # East and north of where it was: right and up on the screen.
            assert at_first["x"] > before["x"] + 5 and at_first["y"] < before["y"] - 5, (before, at_first)
            await asyncio.to_thread(ex.wait, "h.drags.flag && h.drags.flag.label === 'dragging · Alice'", "Alice's drag moving")
            second = {"latitude": 48.8550, "longitude": 2.3050}
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": second})
            await asyncio.to_thread(ex.wait_marker_at, second, "the marker at Alice's second move")
            at_second = ex.screen()
            assert at_second["x"] > at_first["x"] + 5 and at_second["y"] > at_first["y"] + 5, (at_first, at_second)
            await asyncio.to_thread(page.screenshot, f"{example}-remote-drag")
            await alice.ok({"type": "drag", "id": "flag", "state": "ending"})
            await asyncio.to_thread(ex.wait, "Object.keys(h.drags).length === 0", "the drag over")
            assert close(ex.marker(), second, 1e-6), ex.marker()

            # Shapes follow the session's events too.
            await alice.ok({"type": "annotation.remove", "id": "park"})
            await asyncio.to_thread(ex.wait, "h.layerCount === 2", "the polygon removed")

    run(scenario())
    assert page.console_errors() == []


def test_a_drag_in_the_example_is_a_meridian_drag(server, session_id, page, example):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": flag(lat=FLAG["latitude"], lon=FLAG["longitude"])})
            ex = Example(page, server, session_id, example)
            await asyncio.to_thread(ex.open)
            web = await joined_page(alice)
            start, before = ex.screen(), ex.marker()

            await asyncio.to_thread(press_and_move, page, start, POINTER_PATH)
            await asyncio.to_thread(release, page)
            done, seen = await alice.until(lambda m: m["type"] == "drag" and m["state"] == "none" and m["participant"] == web)
            states = [m["state"] for m in seen if m["type"] == "drag" and m["participant"] == web]
            assert states[0] == "starting" and "dragging" in states and states[-1] == "ending", states
            assert set(states) == {"starting", "dragging", "ending"}, states
            # Paced: never more moves than the pointer made.
            assert states.count("dragging") <= len(POINTER_PATH), states
            final = done["coordinate"]
            # Right and down on the screen: east and south.
            assert final["longitude"] > before["longitude"] and final["latitude"] < before["latitude"], (before, final)
            await asyncio.to_thread(ex.wait_marker_at, final, "the marker at the committed coordinate")
            # The marker is where the pointer took it: at the end of its path, or (Leaflet draws a move
            # at the next animation frame and drops a frame still pending at the release) one step before.
            after = ex.screen()
            ends = [(start["x"] + dx, start["y"] + dy) for dx, dy in POINTER_PATH[-2:]]
            assert any(abs(after["x"] - x) <= 2 and abs(after["y"] - y) <= 2 for x, y in ends), (start, after)
            committed = next(a for a in (await snapshot(server.url, session_id))["annotations"] if a["id"] == "flag")
            assert close(committed["coordinate"], final), (committed, final)
            assert ex.page.js(f"return window.{ex.hook}.message") == ""

            # After its own drag the page follows the others' drags of that point again.
            moved = {"latitude": 48.8570, "longitude": 2.2900}
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": moved})
            await asyncio.to_thread(ex.wait_marker_at, moved, "the marker at Alice's move after the page's drag")
            await alice.ok({"type": "drag", "id": "flag", "state": "ending"})

    run(scenario())
    assert page.console_errors() == []


def test_a_refused_drag_snaps_back_and_says_why(server, session_id, page, example):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            # Alice's drag lease must outlive a slow browser: it is what refuses the page's drag.
            await alice.ok({"type": "session.configure", "settings": {"leaseTimeoutMs": 120000}})
            await alice.ok({"type": "annotation.add", "annotation": flag(lat=FLAG["latitude"], lon=FLAG["longitude"])})
            ex = Example(page, server, session_id, example)
            await asyncio.to_thread(ex.open)
            web = await joined_page(alice)
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            await asyncio.to_thread(ex.wait, "h.drags.flag && h.drags.flag.state === 'starting'", "Alice holding the flag")
            start, held = ex.screen(), ex.marker()
            assert close(held, FLAG, 1e-6), held

            # The pointer takes the marker and keeps it pressed 60 px away while the refusal comes.
            await asyncio.to_thread(press_and_move, page, start, POINTER_PATH)
            said = await asyncio.to_thread(ex.wait, "h.message.includes('refused') && h.message", "the refusal on the page")
            assert "Alice" in said, said
            snapped, at = ex.marker(), ex.screen()
            assert close(snapped, FLAG, 1e-6), snapped
            assert abs(at["x"] - start["x"]) <= 1.5 and abs(at["y"] - start["y"]) <= 1.5, (start, at)
            await asyncio.to_thread(release, page)
            assert close(ex.marker(), FLAG, 1e-6), ex.marker()
            await asyncio.to_thread(page.screenshot, f"{example}-refused-drag")

            # The page follows the holder's drag from there, and never moved the flag itself.
            moved = {"latitude": 48.8570, "longitude": 2.3000}
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": moved})
            await alice.ok({"type": "drag", "id": "flag", "state": "ending"})
            await asyncio.to_thread(ex.wait_marker_at, moved, "the marker at Alice's committed coordinate")
            assert not [m for m in alice.log if m["type"] == "drag" and m["participant"] == web], alice.log

    run(scenario())
    assert page.console_errors() == []


def click(page, at):
    """Real pointer input: a click at `at` (CSS pixels of the viewport)."""
    actions = ActionBuilder(page.driver)
    actions.pointer_action.move_to_location(round(at["x"]), round(at["y"])).click()
    actions.perform()


def same_camera(a, b, tolerance=1e-9):
    return (close(a["center"], b["center"], tolerance) and all(abs(a[k] - b[k]) < tolerance for k in ("zoom", "pitch", "bearing")))


def test_the_maplibre_example_shares_its_camera_selects_and_shows_the_callout(server, session_id, page):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": flag(lat=FLAG["latitude"], lon=FLAG["longitude"])})
            await alice.ok({"type": "camera.end", "camera": {"center": {"latitude": 48.86, "longitude": 2.30}, "zoom": 13},
                            "viewport": {"width": 390, "height": 844}})
            ex = Example(page, server, session_id, "maplibre")
            await asyncio.to_thread(ex.open)
            web = await joined_page(alice)
            size = page.js("const r = document.getElementById('map').getBoundingClientRect(); return {width: r.width, height: r.height}")

            # Alice's viewport: its outline in her colour on the map, her name over it.
            v = await asyncio.to_thread(ex.wait, "Object.keys(h.viewports).length === 1 && h.viewports", "Alice's viewport")
            alice_view = v[alice.participant]
            assert alice_view["name"] == "Alice" and alice_view["tooltip"] == "Alice", alice_view
            lons = [c["longitude"] for c in alice_view["corners"]]
            half = 390 / (256 * 2 ** 13) * 360 / 2
            assert abs(min(lons) - (2.30 - half)) < 1e-9 and abs(max(lons) - (2.30 + half)) < 1e-9, lons
            await asyncio.to_thread(page.wait_js, "return window.maplibreExample.map.queryRenderedFeatures({ layers: ['viewport-lines'] })"
                                    f".some((f) => f.properties.participant === {json.dumps(alice.participant)})", "Alice's viewport drawn")
            assert page.js("return [...document.querySelectorAll('.meridian-name')].map((e) => e.textContent)") == ["Alice"]

            # The camera the page fitted to the session, as Meridian has it (a zoom one above MapLibre's).
            await asyncio.to_thread(ex.wait, "!h.map.isMoving()", "the map at rest")
            shown = ex.page.js("return window.maplibreExample.camera")
            assert abs(shown["zoom"] - (ex.page.js("return window.maplibreExample.map.getZoom()") + 1)) < 1e-9, shown
            end, seen = await alice.until(lambda m: m["type"] == "camera.end" and m["participant"] == web
                                          and same_camera(m["camera"], shown))
            assert any(m["type"] == "camera.begin" and m["participant"] == web for m in seen), seen
            assert end["viewport"] == {"width": round(size["width"]), "height": round(size["height"])}, (end, size)
            assert close(end["camera"]["center"], FLAG, 1e-6), end  # fitted to the one point

            # A pan with the pointer (away from the marker): begin, changes, end with where the map is now.
            start = {"x": size["width"] * 0.25, "y": size["height"] * 0.75}
            start = {k: v + page.js("return document.getElementById('map').getBoundingClientRect()")[k] for k, v in start.items()}
            await asyncio.to_thread(press_and_move, page, start, [(20 * i, 10 * i) for i in range(1, 7)])
            await asyncio.to_thread(release, page)
            await asyncio.to_thread(ex.wait, "!h.map.isMoving()", "the map at rest after the pan")
            panned = ex.page.js("return window.maplibreExample.camera")
            # The map was pulled right and down: the centre is now west and north of the flag.
            assert panned["center"]["longitude"] < FLAG["longitude"] and panned["center"]["latitude"] > FLAG["latitude"], panned
            _, seen = await alice.until(lambda m: m["type"] == "camera.end" and m["participant"] == web and same_camera(m["camera"], panned))
            moves = [m for m in seen if m["type"].startswith("camera.") and m.get("participant") == web]
            assert moves and moves[0]["type"] == "camera.begin", moves
            assert any(m["type"] == "camera.changing" for m in moves), moves

            # A click on the marker selects it: the selection is the session's, and its own callout shows.
            click(page, ex.screen())
            selected, _ = await alice.until(lambda m: m["type"] == "selection" and m["participant"] == web)
            assert selected["annotation"] == "flag" and selected["showsCallout"], selected
            await asyncio.to_thread(ex.wait, "h.selection === 'flag' && h.ownCallout && h.ownCallout.title === 'Flag'", "the page's selection")
            # A click on the map itself deselects.
            click(page, start)
            deselected, _ = await alice.until(lambda m: m["type"] == "selection" and m["participant"] == web)
            assert deselected["annotation"] is None, deselected
            await asyncio.to_thread(ex.wait, "h.selection === null && h.ownCallout === null", "nothing selected")

            # The shared callout is a popup at its annotation, follows its drag, and a click on it taps it.
            await alice.ok({"type": "callout.show", "callout": {"title": "Meet here", "detail": "By the tower", "anchor": {"annotation": "flag"}}})
            shown = await asyncio.to_thread(ex.wait, "h.callout && h.callout.title === 'Meet here' && h.callout", "the shared callout")
            assert close(shown, FLAG, 1e-6), shown
            text = page.js("return [...document.querySelectorAll('.maplibregl-popup.shared')].map((p) => p.textContent)")
            assert text == ["Meet hereBy the towershown by Alice"], text
            moved = {"latitude": 48.8570, "longitude": 2.3000}
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": moved})
            await asyncio.to_thread(ex.wait, f"h.callout && Math.abs(h.callout.latitude - {moved['latitude']}) < 1e-6"
                                    f" && Math.abs(h.callout.longitude - {moved['longitude']}) < 1e-6", "the callout with the dragged flag")
            await alice.ok({"type": "drag", "id": "flag", "state": "ending"})
            body = page.js("const r = document.querySelector('.maplibregl-popup.shared .maplibregl-popup-content').getBoundingClientRect();"
                           " return {x: r.left + r.width / 2, y: r.top + r.height / 2}")
            click(page, body)
            tapped, _ = await alice.until(lambda m: m["type"] == "callout.tapped")
            assert tapped["by"] == web and tapped["part"] == "body", tapped
            await alice.ok({"type": "callout.hide"})
            await asyncio.to_thread(ex.wait, "h.callout === null && document.querySelectorAll('.maplibregl-popup').length === 0", "the callout hidden")
            await alice.ok({"type": "camera.end", "camera": {"center": {"latitude": 48.80, "longitude": 2.40}, "zoom": 13},
                            "viewport": {"width": 390, "height": 844}})
            await asyncio.to_thread(ex.wait, "(v => v && Math.abs(v.corners.reduce((s, c) => s + c.longitude, 0) / 4 - 2.40) < 1e-6)"
                                    f"(h.viewports[{json.dumps(alice.participant)}])", "Alice's viewport moved")
            assert not [m for m in alice.log if m["type"] == "drag" and m["participant"] == web], alice.log

    run(scenario())
    assert page.console_errors() == []


def test_the_maplibre_example_draws_the_session_over_the_servers_style(start_server, session_id, page):
    # A MapLibre style of the server's (`--dashboard-style`; here one background colour, in
    # production vector streets): the page draws it, with the session's layers added over it.
    with MapFiles(style_color="#2e8b57") as files:
        server = start_server("--dashboard-style", files.url + "/style.json")
        ex = Example(page, server, session_id, "maplibre")

        async def scenario():
            async with members(server.url, session_id, ("alice", "owner")) as (alice,):
                await alice.ok({"type": "annotation.add", "annotation": {"type": "point", "id": "flag", "coordinate": FLAG}})
                await alice.ok({"type": "annotation.add", "annotation": ROUTE})
                await alice.ok({"type": "annotation.add", "annotation": PARK})
                await asyncio.to_thread(ex.open, 3)
                await asyncio.to_thread(page.wait_js, ex.drawn, "the point, the polyline and the polygon drawn")
                layers = page.js("return window.maplibreExample.map.getStyle().layers.map((l) => l.id)")
                assert layers[0] == "streets" and "countries" not in layers and "annotation-lines" in layers, layers
                assert files.paths == ["/style.json"], files.paths
                assert page.console_errors() == []

        run(scenario())


def test_the_maplibre_example_says_when_the_server_has_no_maplibre(start_server, session_id, page, tmp_path):
    empty = tmp_path / "no-maplibre"
    empty.mkdir()
    server = start_server("--maplibre-directory", str(empty))
    # Logged before the server listens, so it is in the log once the server has started.
    warning = (f"MapLibre GL JS not found (no maplibre-gl.js in {empty}): /dashboard/maplibre.html cannot load; "
               "the session view draws its basemap on its canvas instead")
    assert warning in server.log_text(), server.log_text()[-2000:]

    page.open(f"http://{server.host}:{server.port}/dashboard/maplibre.html?session={session_id}")
    page.wait_js("return document.body.dataset.status !== 'connecting'", "the page past connecting")
    assert page.js("return document.body.dataset.status") == "error"
    assert "MapLibre GL JS missing" in page.js("return document.getElementById('status').textContent")
    message = page.js("return document.getElementById('message').textContent")
    assert "MapLibre GL JS is missing on this server" in message and "make web-deps" in message, message
    assert page.js("return window.maplibreExample === undefined")  # it never joined the session
    # The page's only errors are the library's files it could not load.
    assert page.console_errors(allowed=("/vendor/maplibre-gl/maplibre-gl.",)) == []
    assert len(page.console_errors()) >= 1

    # The session view does without it: its canvas draws the offline basemap, and it says why.
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await asyncio.to_thread(page.open, f"http://{server.host}:{server.port}/dashboard/?session={session_id}")
            s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["settled"] and s["drawnAnnotations"] == 1,
                                        "the session drawn without MapLibre")
            assert s["basemapRenderer"] == "canvas" and "make web-deps" in s["basemapError"], s["basemapError"]

    run(scenario())
    assert page.console_errors(allowed=("/vendor/maplibre-gl/maplibre-gl.",)) == []
