"""The web example apps (Leaflet and OpenLayers over meridian.js) in headless Chromium
against the real server, with a Python client as the other participant: the page mirrors
the session and shows the other's drag live, a drag made in the page with real pointer
input is a Meridian drag the other sees, and a drag the server refuses (the other holds
the annotation) puts the marker back where the server has it and says why."""

import asyncio
import json

import pytest
from selenium.webdriver.common.actions.action_builder import ActionBuilder

from dashboard_support import flag, page  # noqa: F401 (page is a fixture)
from meridian_client import members, run, snapshot

# page, its test hook (window.NAME), and a script true once the point, the polyline and
# the polygon are drawn as the library's own DOM nodes.
EXAMPLES = {
    "leaflet": ("leaflet.html", "leafletExample",
                "return document.querySelectorAll('.leaflet-marker-icon').length === 1"
                " && document.querySelectorAll('path.leaflet-interactive').length === 2"),
    "openlayers": ("openlayers.html", "openLayersExample",
                   "const layer = window.openLayersExample.map.getLayersByName('Annotations')[0];"
                   " return ['flag', 'route', 'park'].every((id) => {"
                   "   const f = layer.getFeaturesByAttribute('id', id)[0];"
                   "   return f && document.getElementById(f.geometry.id) !== null; })"),
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
            other = "openlayers.html" if example == "leaflet" else "leaflet.html"
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
