"""The session view's map, feed and header agree, in headless Chromium at 1600x1000
against the real server: Follow all keeps a busy session's annotations large whatever
the size of participants' viewports, and says what it follows; replay shows the feed
and the header at the replayed time; the participant filter brings the match into
view (several matches by where they are, not their whole viewports), the annotation filter dims the rest on the map and counts the matches, and the
overview's search shows a name otherwise folded into "+17"."""

import asyncio

from selenium.webdriver.common.keys import Keys

from busy_session import HARBOUR, NAMES, TINT, UNDER, annotations
from dashboard_support import flag, http_url, page, to_screen  # noqa: F401 (page is a fixture)
from meridian_client import members, run
from test_dashboard_busy import busy, frames_later, open_busy  # noqa: F401 (busy is a fixture)
from dashboard_support import close, pixel
from test_dashboard_history import log_of, scrub

WIDTH, HEIGHT = 1600, 1000


def page_clock(page, ms):
    """`ms` as the page's own clock() writes it."""
    return page.driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; import('/dashboard/ui.js').then((m) => done(m.clock(arguments[0])))", ms)


def screen_box(s, coordinates):
    """The width and height, in CSS pixels, of the box around `coordinates` (latitude, longitude) as the map draws them."""
    size = (s["mapSize"]["width"], s["mapSize"]["height"])
    points = [to_screen(s["view"], size, lat, lon) for lat, lon in coordinates]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return max(xs) - min(xs), max(ys) - min(ys)


def test_follow_all_fits_annotations_and_positions_not_whole_viewports(busy, page):
    server, _ = busy
    pins = [(a["coordinate"]["latitude"], a["coordinate"]["longitude"]) for a in annotations() if a["type"] == "point"]

    async def scenario():
        # One more participant near the harbour, zoomed out to a continent.
        async with members(server.url, "harbour", ("continental", "editor")) as (far,):
            await far.ok({"type": "camera.end", "camera": {"center": {"latitude": HARBOUR[0] + 0.005, "longitude": HARBOUR[1]}, "zoom": 3.5},
                          "viewport": {"width": 1024, "height": 768}})
            s = await asyncio.to_thread(page.wait, lambda s: len(s["participants"]) == 21 and all(p["visibleBounds"] for p in s["participants"]),
                                        "the zoomed-out participant")
            s = await asyncio.to_thread(frames_later, page, s, 40)
            s = await asyncio.to_thread(page.wait, lambda s: s["settled"] and s["autoFit"], "the map fitted again")
            width, height = screen_box(s, pins)
            map_w, map_h = s["mapSize"]["width"], s["mapSize"]["height"]
            await asyncio.to_thread(page.screenshot, "follow-all-with-a-continent")
            assert width >= 0.5 * map_w or height >= 0.5 * map_h, \
                f"the annotations span {width:.0f} x {height:.0f} px of a {map_w:.0f} x {map_h:.0f} px map at zoom {s['view']['zoom']:.2f}"
            follows = page.js("return document.getElementById('follow-all').textContent")
            assert "annotations" in follows and "21 participants" in follows, follows

    open_busy(page, server, width=WIDTH, height=HEIGHT)
    run(scenario())
    assert page.console_errors() == []


def test_replay_holds_the_feed_and_the_header_at_the_replayed_time(server, session_id, page):
    def spot(k):
        return {"latitude": 48.85 + 0.0005 * k, "longitude": 2.29 + 0.0005 * k}

    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            stop = asyncio.Event()

            async def edits():
                k = 0
                while not stop.is_set():
                    k += 1
                    await alice.ok({"type": "annotation.update", "id": "flag", "changes": {"coordinate": spot(k)}})
                    await asyncio.sleep(0.15)

            streaming = asyncio.create_task(edits())
            try:
                await asyncio.sleep(2)
                before_page = [e for e in await asyncio.to_thread(log_of, server, session_id)
                               if e.get("event", {}).get("type") == "annotation.updated"]
                await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
                await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["history"]["loaded"] and s["settled"], "the session")
                # Between two logged edits made before the page opened.
                a, b = before_page[-4], before_page[-3]
                at = (a["time"] + b["time"]) // 2
                scrub(page, at)
                s = await asyncio.to_thread(page.wait, lambda s: s["replay"]["active"] and s["replay"]["time"] == at, "the replay")
                # Live edits keep arriving while the replay shows an earlier time.
                s = await asyncio.to_thread(page.wait, lambda t: t["seq"] >= s["seq"] + 3, "live edits during the replay")
                s = await asyncio.to_thread(frames_later, page, s, 2)
                header = page.js("return document.getElementById('status').textContent")
                newest = s["feed"][0]
                shown = (header, newest["seq"], newest["time"] <= at, s["replay"]["seq"], s["replay"]["annotations"]["flag"])
                expected = (f"replay · {page_clock(page, at)}", a["seq"], True, a["seq"], a["event"]["annotation"]["coordinate"])
                assert shown == expected, f"header, newest feed line (seq, before the replayed time), map (seq, flag): {shown}, not {expected}"
                await asyncio.to_thread(page.screenshot, "replay-feed-and-header")
                # Live: all three at the present again.
                page.driver.find_element("id", "replay-live").click()
                s = await asyncio.to_thread(page.wait, lambda t: not t["replay"]["active"] and t["feed"][0]["seq"] > s["seq"],
                                            "the newest lines live again")
                assert page.js("return document.getElementById('status').textContent") == "live"
                assert s["feed"][0]["seq"] > a["seq"] and s["seq"] >= s["feed"][0]["seq"]
            finally:
                stop.set()
                await streaming

    run(scenario())
    assert page.console_errors() == []


def test_a_participant_filter_brings_the_match_into_view(busy, page):
    server, session = busy
    # The map west of the harbour: Ida Meier's camera, east of the pier head, is out of view.
    s = open_busy(page, server, f"&map=16/{HARBOUR[0]}/{HARBOUR[1] - 0.03}", WIDTH, HEIGHT)
    size = (s["mapSize"]["width"], s["mapSize"]["height"])

    def ida_on_screen(s):
        ida = next(p for p in s["participants"] if p["name"] == "Ida Meier")["visibleBounds"]
        lat = (ida["southWest"]["latitude"] + ida["northEast"]["latitude"]) / 2
        lon = (ida["southWest"]["longitude"] + ida["northEast"]["longitude"]) / 2
        x, y = to_screen(s["view"], size, lat, lon)
        return 0 <= x <= size[0] and 0 <= y <= size[1], (round(x), round(y))

    assert not ida_on_screen(s)[0], ida_on_screen(s)
    page.driver.find_element("id", "people-filter").send_keys("Ida")
    s = page.wait(lambda s: s["peopleShown"] == [session.by_name("Ida Meier").participant] and s["settled"], "the filter applied")
    s = frames_later(page, s, 3)
    page.screenshot("people-filter")
    assert ida_on_screen(s)[0], f"Ida Meier's camera at {ida_on_screen(s)[1]} on a {size} map after filtering for her"
    assert page.console_errors() == []


def test_a_participant_filter_matching_several_fits_where_they_are_not_their_viewports(busy, page):
    server, _ = busy
    # The map west of the harbour; two participants east of it, close together, each zoomed out to a continent.
    open_busy(page, server, f"&map=16/{HARBOUR[0]}/{HARBOUR[1] - 0.03}", WIDTH, HEIGHT)
    centres = [(HARBOUR[0] + 0.004, HARBOUR[1] + 0.010), (HARBOUR[0] + 0.006, HARBOUR[1] + 0.012)]

    async def scenario():
        async with members(server.url, "harbour", ("surveyor-north", "editor"), ("surveyor-south", "editor")) as pair:
            for member, (lat, lon) in zip(pair, centres):
                await member.ok({"type": "camera.end", "camera": {"center": {"latitude": lat, "longitude": lon}, "zoom": 3.5},
                                 "viewport": {"width": 1024, "height": 768}})
            s = await asyncio.to_thread(page.wait, lambda s: len(s["participants"]) == 22 and all(
                p["visibleBounds"] for p in s["participants"] if p["name"].startswith("Surveyor")), "the two surveyors")
            size = (s["mapSize"]["width"], s["mapSize"]["height"])
            assert not any(0 <= x <= size[0] for x, _ in (to_screen(s["view"], size, lat, lon) for lat, lon in centres))
            page.driver.find_element("id", "people-filter").send_keys("surveyor")
            s = await asyncio.to_thread(page.wait, lambda s: len(s["peopleShown"]) == 2 and s["settled"], "the filter applied")
            s = await asyncio.to_thread(frames_later, page, s, 3)
            await asyncio.to_thread(page.screenshot, "people-filter-several")
            points = [to_screen(s["view"], size, lat, lon) for lat, lon in centres]
            assert all(0 <= x <= size[0] and 0 <= y <= size[1] for x, y in points), f"the surveyors at {points} on a {size} map"
            # Fitted to where they are (close together), not to their continent-wide viewports.
            assert s["view"]["zoom"] >= 12, f"zoom {s['view']['zoom']:.2f} after filtering for two participants a few hundred metres apart"

    run(scenario())
    assert page.console_errors() == []


def test_the_annotation_filter_dims_the_rest_and_counts_the_matches(busy, page):
    server, _ = busy
    lat, lon = HARBOUR
    s = open_busy(page, server, f"&map=17/{lat}/{lon}", WIDTH, HEIGHT)
    k = float(page.js("return parseFloat(getComputedStyle(document.documentElement).fontSize) / 16"))

    def pier_head(s):
        # The head of the pier head's pin (not a crane), between its white dot and its edge.
        x, y = to_screen(s["view"], (s["mapSize"]["width"], s["mapSize"]["height"]), lat, lon)
        return [pixel(page, x + dx * k, y - 19 * k) for dx in (-6, 6)]

    assert all(close(c, TINT, 30) for c in pier_head(s))
    cranes = [a for a in annotations() if "crane" in f"{a['id']} {a['title']}".lower()]
    assert UNDER not in {a["id"] for a in cranes}
    page.driver.find_element("id", "annotation-filter").send_keys("crane")
    page.wait_js("return document.getElementById('annotation-list').querySelectorAll('li:not(.spacer)').length <= "
                 f"{len(cranes)}", "the list filtered")
    count = page.wait_js("return document.getElementById('annotation-count').textContent", "the count")
    s = frames_later(page, page.wait(lambda s: s["settled"], "the map settled"), 3)
    page.screenshot("annotation-filter")
    shown = (count, [close(c, TINT, 30) for c in pier_head(s)])
    assert shown == (f"({len(cranes)} of 300)", [False, False]), f"heading and the pier head's pin in full colour: {shown}"
    # Cleared: everything counted and drawn again.
    page.driver.find_element("id", "annotation-filter").send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    page.wait_js("return document.getElementById('annotation-count').textContent === '(300)'", "the count of all")
    s = frames_later(page, page.wait(lambda s: s["settled"], "the map settled"), 3)
    assert all(close(c, TINT, 30) for c in pier_head(s))
    assert page.console_errors() == []


def test_the_overview_search_shows_a_name_folded_into_the_rest(busy, page):
    server, _ = busy
    page.driver.set_window_size(WIDTH, HEIGHT)
    page.open(http_url(server))
    page.wait(lambda s: s["status"] == "live" and "harbour" in s["shown"], "the overview")
    row = "tr[data-session='harbour']"
    names = page.js(f"return document.querySelector(\"{row} td.names\").textContent")
    assert NAMES[-1] not in page.js(f"return document.querySelector(\"{row} td.names .who\").textContent"), names
    page.driver.find_element("id", "overview-search").send_keys("Ida")
    page.wait(lambda s: s["filter"] == "Ida" and s["shown"] == ["harbour"], "the search applied")
    who = page.js(f"return document.querySelector(\"{row} td.names .who\").textContent")
    page.screenshot("overview-search")
    assert NAMES[-1] in who, f"the row shows {who!r} for a search matching {NAMES[-1]}"
    # Still one line: visible, not cut off.
    clipped = page.js(f"const w = document.querySelector(\"{row} td.names .who\"); return w.scrollWidth > w.clientWidth + 1")
    assert not clipped or who.startswith(NAMES[-1]), who
    assert page.console_errors() == []
