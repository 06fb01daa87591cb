"""Everyone can use the dashboard: axe-core (axe-selenium-python) finds no serious or
critical violation on the overview and the session view in either theme; light and
dark themes follow prefers-color-scheme; prefers-reduced-motion stops the flashing;
annotations are listed; everything works from the keyboard."""

import asyncio
import contextlib

from axe_selenium_python import Axe
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from dashboard_support import contrast, flag, http_url, page  # noqa: F401
from meridian_client import members, run


def emulate(page, **features):
    page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": name.replace("_", "-"), "value": value} for name, value in features.items()]})


def serious_violations(page):
    axe = Axe(page.driver)
    axe.inject()
    results = axe.run()
    return [f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
            for v in results["violations"] if v["impact"] in ("serious", "critical")]


@contextlib.asynccontextmanager
async def busy_session(server, session_id):
    """Alice (owner) and Bob (editor) in a session with a point, a polygon, a camera, a location,
    a selection and a callout; closed when the block ends, however it ends."""
    async with members(server.url, session_id, ("alice", "owner", {"color": "#ff6b6b"}),
                       ("bob", "editor", {"color": "#fab005"})) as (alice, bob):
        await alice.ok({"type": "annotation.add", "annotation": flag(metadata={"note": "gate"})})
        await alice.ok({"type": "annotation.add", "annotation": {"type": "polygon", "id": "park", "alpha": 0.5, "title": "Park", "coordinates": [
            {"latitude": 48.850, "longitude": 2.280}, {"latitude": 48.862, "longitude": 2.300}, {"latitude": 48.845, "longitude": 2.310}]}})
        await alice.ok({"type": "camera.end", "camera": {"center": {"latitude": 48.86, "longitude": 2.30}, "zoom": 12},
                        "viewport": {"width": 390, "height": 844}})
        await bob.ok({"type": "location", "location": {"coordinate": {"latitude": 48.85, "longitude": 2.33}, "accuracy": 30}})
        await bob.ok({"type": "select", "id": "park"})
        await alice.ok({"type": "callout.show", "callout": {"title": "Meet here", "anchor": {"annotation": "flag"}}})
        yield alice, bob


def test_no_serious_accessibility_violations_in_either_theme(server, session_id, page):
    async def scenario():
        async with busy_session(server, session_id) as (alice, bob):
            for scheme in ("dark", "light"):
                await asyncio.to_thread(emulate, page, prefers_color_scheme=scheme)
                await asyncio.to_thread(page.open, http_url(server))
                await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["sessions"], "the overview")
                found = await asyncio.to_thread(serious_violations, page)
                assert found == [], f"overview, {scheme}: " + "\n".join(found)
                await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
                await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["history"]["loaded"] and s["settled"], "the session")
                page.driver.find_element("css selector", "#annotation-list li button").click()
                await asyncio.to_thread(page.wait, lambda s: s["inspector"] is not None, "the inspector open")
                found = await asyncio.to_thread(serious_violations, page)
                assert found == [], f"session, {scheme}: " + "\n".join(found)
                await asyncio.to_thread(page.screenshot, f"theme-{scheme}")

    run(scenario())
    assert page.console_errors() == []


def test_themes_follow_the_system_and_keep_participants_readable(server, session_id, page):
    async def scenario():
        async with busy_session(server, session_id) as (alice, bob):
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            seen = {}
            for scheme in ("dark", "light"):
                await asyncio.to_thread(emulate, page, prefers_color_scheme=scheme)
                # The theme switches at once; the map and the participants' colours follow at the
                # next frame drawn: wait for the map drawn in this theme's water.
                water = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-water').trim()")
                s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["theme"] == scheme and s["settled"]
                                            and s["mapBackground"] == water, f"the map drawn in the {scheme} theme")
                land = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-land').trim()")
                for p in s["participants"]:
                    assert contrast(p["color"], water) >= 3 and contrast(p["color"], land) >= 3, (scheme, p, water, land)
                seen[scheme] = (water, page.js("return getComputedStyle(document.body).backgroundColor"))
                text = page.js("return getComputedStyle(document.body).color")
                assert text != seen[scheme][1]
                await asyncio.to_thread(page.screenshot, f"{scheme}")
            assert seen["dark"] != seen["light"], seen

    run(scenario())
    assert page.console_errors() == []


def test_reduced_motion_stops_the_refusal_flash(server, session_id, page):
    async def scenario():
        async with busy_session(server, session_id) as (alice, bob):
            await asyncio.to_thread(emulate, page, prefers_reduced_motion="reduce")
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["reducedMotion"], "reduced motion")
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            answer, _ = await bob.request({"type": "drag", "id": "flag", "state": "starting"})
            assert answer["code"] == "drag_conflict"
            s = await asyncio.to_thread(page.wait, lambda s: s["refusals"], "the refusal")
            assert s["flashing"] is False
            animation = page.js("const r = document.querySelector('#drags li.refused'); return r && getComputedStyle(r).animationName")
            assert animation == "none", animation
            # Without the preference the same refusal flashes.
            await asyncio.to_thread(emulate, page, prefers_reduced_motion="no-preference")
            answer, _ = await bob.request({"type": "drag", "id": "flag", "state": "starting"})
            assert answer["code"] == "drag_conflict"
            await asyncio.to_thread(page.wait, lambda s: s["flashing"] is True, "the flash without the preference")

    run(scenario())
    assert page.console_errors() == []


def test_everything_by_keyboard(server, session_id, page):
    def tab_to(selector, limit=80):
        for _ in range(limit):
            ActionChains(page.driver).send_keys(Keys.TAB).perform()
            if page.js("return document.activeElement.matches(arguments[0])", selector):
                return
        raise AssertionError(f"Tab never reached {selector}")

    def press(key):
        ActionChains(page.driver).send_keys(key).perform()

    async def scenario():
        async with busy_session(server, session_id) as (alice, bob):
            await asyncio.to_thread(page.open, http_url(server))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["sessions"], "the overview")
            # The overview: search, sort and open a session, all by keyboard.
            await asyncio.to_thread(tab_to, "#overview-search")
            press(session_id)
            await asyncio.to_thread(page.wait, lambda s: s["shown"] == [session_id], "the search")
            await asyncio.to_thread(tab_to, "th[data-sort='seq'] button")
            press(Keys.ENTER)
            await asyncio.to_thread(page.wait, lambda s: s["sort"] and s["sort"]["key"] == "seq", "sorted by seq")
            await asyncio.to_thread(tab_to, f"a[href^='/dashboard/?session={session_id}']")
            press(Keys.ENTER)
            await asyncio.to_thread(page.wait, lambda s: s.get("session") == session_id and s["status"] == "live" and s["settled"], "the session")
            # The annotation list (one Tab stop; arrow keys move within it): Enter inspects;
            # Escape closes and returns to the map.
            await asyncio.to_thread(tab_to, "#annotation-list li button")
            for _ in range(3):
                if page.js("return document.activeElement.matches(\"#annotation-list li[data-annotation='park'] button\")"):
                    break
                press(Keys.ARROW_DOWN)
            press(Keys.ENTER)
            s = await asyncio.to_thread(page.wait, lambda s: s["inspector"] and s["inspector"]["id"] == "park", "park inspected")
            assert s["inspector"]["facts"]["Selected by"] == "Bob"
            press(Keys.ESCAPE)
            await asyncio.to_thread(page.wait, lambda s: s["inspector"] is None, "the inspector closed")
            assert page.js("return document.activeElement.id") == "map"
            # The map: Enter inspects what is in its middle (the park, after the list centred on it).
            press(Keys.ENTER)
            await asyncio.to_thread(page.wait, lambda s: s["inspector"] and s["inspector"]["id"] == "park", "inspected from the map")
            press(Keys.ESCAPE)
            # A participant: Enter zooms to their view.
            await asyncio.to_thread(tab_to, f"#people li[data-participant='{alice.participant}'] button")
            press(Keys.ENTER)
            await asyncio.to_thread(page.wait, lambda s: s["zoomedTo"] == alice.participant, "zoomed to Alice")
            # The feed's filters and the replay controls are reachable.
            for selector in ("#feed-participant", "#feed-type", "#replay-time", "#replay-play", "#replay-speed"):
                await asyncio.to_thread(tab_to, selector)
            outline = page.js("return getComputedStyle(document.activeElement).outlineStyle")
            assert outline == "solid", outline
            await asyncio.to_thread(page.screenshot, "keyboard")

    run(scenario())
    assert page.console_errors() == []
