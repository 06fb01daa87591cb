"""The dashboard defects of issue 12, each reproduced in headless Chromium against
the real server: ghost members of pages in the back/forward cache, a hidden join
that created the session it looked at, crowds of moving participants, the callout
after a restart, and the overview's figures while disconnected; then those of the
session view of a busy session: an inspector opened out of sight, feed lines cut
short, drags shown as live after a disconnect, History hundreds of Tab presses
away, participants' colours that change with the theme, and light-theme colours
near black."""

import asyncio
import itertools
import math
import shutil
import uuid

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from busy_session import COLORS
from conftest import Server
from dashboard_support import (api, contrast, flag, free_port, http_url, overlaps, page,  # noqa: F401
                               select_or_deselect, to_screen, while_active)
from meridian_client import Client, members, owner_makes, run
from test_dashboard_access import emulate
from test_dashboard_busy import busy, lab, open_busy  # noqa: F401 (busy is a fixture)


def row_of(state, session):
    return next((x for x in state.get("sessions", []) if x["session"] == session), None)


async def overview_row(url, session):
    """The session's entry in the server's own overview (None when not open)."""
    watcher = await Client.open(url, "watcher")
    try:
        await watcher.ok({"type": "overview.watch"})
        m, _ = await watcher.until(lambda m: m["type"] == "overview")
        return next((s for s in m["sessions"] if s["session"] == session), None)
    finally:
        await watcher.close()


def test_a_page_left_for_another_closes_its_connection_and_resumes_when_restored(server, session_id, page):
    """Defect 1: a participant page (the web example) leaves the session when the user
    navigates away, even though Chromium keeps the page in its back/forward cache,
    and comes back into the session when the page is restored."""
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await asyncio.to_thread(page.open, f"http://{server.host}:{server.port}/dashboard/example.html?session={session_id}&name=Web")
            await asyncio.to_thread(page.wait_js, "return document.body.dataset.status === 'live'", "the example joined")
            joined, _ = await alice.until(lambda m: m["type"] == "participant.joined")
            web = joined["participant"]["id"]
            page.js("window.stillTheSamePage = true")
            await asyncio.to_thread(page.open, http_url(server))
            left, _ = await alice.until(lambda m: m["type"] == "participant.left" and m["participant"] == web, timeout=10)
            assert left["reason"] in ("left", "disconnected"), left

            await asyncio.to_thread(page.driver.back)
            await asyncio.to_thread(page.wait_js, "return window.stillTheSamePage === true && document.body.dataset.status === 'live'",
                                    "the page restored from the back/forward cache, live again")
            again, _ = await alice.until(lambda m: m["type"] == "participant.joined")
            assert again["participant"]["name"] == "Web" and again["participant"]["id"] != web

    run(scenario())
    assert page.console_errors() == []


def test_a_dashboard_left_for_the_overview_is_not_counted_and_resumes(server, session_id, page):
    """Defect 1 for the dashboard: its hidden member leaves with the page, so the
    overview does not count one more dashboard per page visited."""
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner")) as (alice,):
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live", "the session view")
            assert (await overview_row(server.url, session_id))["dashboards"] == 1
            page.js("window.stillTheSamePage = true")
            await asyncio.to_thread(page.open, http_url(server))
            shown = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and row_of(s, session_id) is not None,
                                            "the overview")
            await asyncio.to_thread(page.wait, lambda s: row_of(s, session_id)["dashboards"] == 0,
                                    "no dashboard counted for the page left behind")
            assert row_of(shown, session_id)["participants"] == 1
            await asyncio.to_thread(page.driver.back)
            s = await asyncio.to_thread(page.wait, lambda s: s.get("session") == session_id and s["status"] == "live"
                                        and s["welcomes"] >= 2, "the session view restored and rejoined")
            assert page.js("return window.stillTheSamePage") is True
            assert [p["name"] for p in s["participants"]] == ["Alice"]
            assert (await overview_row(server.url, session_id))["dashboards"] == 1

    run(scenario())
    assert page.console_errors() == []


def test_an_unknown_session_is_reported_and_not_created(server, page):
    """Defect 2: the page says there is no such session, links to the overview, and
    its hidden join creates nothing."""
    missing = "no-such-" + uuid.uuid4().hex[:8]
    page.open(http_url(server, f"?session={missing}"))
    text = page.wait_js("const n = document.getElementById('no-session');"
                        " return n && !n.hidden && document.body.dataset.status === 'no-session' && n.textContent",
                        "the no-such-session notice")
    assert missing in text, text
    link = page.js("const a = document.querySelector('#no-session a[href=\"/dashboard/\"]'); return a && a.textContent")
    assert link, "no link to the overview"
    assert page.js("return document.getElementById('status').textContent") != "live"
    page.screenshot("no-such-session")
    status, body = api(server, f"/api/sessions/{missing}")
    assert status == 404, body
    assert run(overview_row(server.url, missing)) is None

    async def started():
        # Once a participant starts the session, the page (retrying its hidden join) shows it.
        alice = await Client.open(server.url, "alice")
        try:
            await alice.join(missing, "Alice", "owner")
            s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and [p["name"] for p in s["participants"]] == ["Alice"],
                                        "the session once started", 30)
            assert s["session"] == missing
            assert page.js("return document.getElementById('no-session').hidden") is True
        finally:
            await alice.close()

    run(started())
    assert page.console_errors() == []


def test_a_crowd_of_moving_cameras_is_fitted_labelled_apart_and_coloured_apart(start_server, session_id, page):
    """Defect 3: 50 participants moving their cameras (changing, no end yet) are
    brought into view; labels do not overlap; every participant has its own colour
    with at least 3:1 contrast on the map."""
    # The 50 clients' fan-out keeps this process busy: a long drag lease, and no schema check of every message.
    server = start_server("--lease-timeout", "300")
    count = 50

    def spot(i):
        return 44 + (i // 10) * 2.0, -4 + (i % 10) * 2.5

    async def scenario():
        clients = []
        try:
            alice = await Client.open(server.url, "alice")
            clients.append(alice)
            await alice.join(session_id, "Alice", "owner")
            await alice.ok({"type": "annotation.add", "annotation": {**flag("crane-7", *spot(0)), "title": "Crane 7"}})
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live", "the session")
            for i in range(1, count):
                c = await Client.open(server.url, f"p{i}", validate=False)
                await c.join(session_id, f"Walker {i}", "editor")
                clients.append(c)
            for i, c in enumerate(clients):
                lat, lon = spot(i)
                await c.send({"type": "camera.changing", "camera": {"center": {"latitude": lat, "longitude": lon}, "zoom": 11},
                              "viewport": {"width": 390, "height": 844}})
            await alice.ok({"type": "drag", "id": "crane-7", "state": "starting"})
            await alice.ok({"type": "drag", "id": "crane-7", "state": "dragging", "coordinate": dict(zip(("latitude", "longitude"), spot(0)))})
            s = await asyncio.to_thread(page.wait, lambda s: len(s["participants"]) == count
                                        and all(p["visibleBounds"] for p in s["participants"]) and s["drags"], "50 moving cameras")

            def fitted(s):
                size = (s["mapSize"]["width"], s["mapSize"]["height"])
                points = [to_screen(s["view"], size, *spot(i)) for i in range(count)]
                xs, ys = [p[0] for p in points], [p[1] for p in points]
                inside = all(0 <= x <= size[0] and 0 <= y <= size[1] for x, y in points)
                return inside and (max(xs) - min(xs) > size[0] / 2 or max(ys) - min(ys) > size[1] / 2)

            # Labels follow the fitted view by a frame: wait for both.
            s = await asyncio.to_thread(page.wait, lambda s: fitted(s) and len(s["labels"]) >= 10, "the crowd fitted and labelled")
            for width in (1600, 2560):
                if width != 1600:
                    await asyncio.to_thread(page.driver.set_window_size, width, 1440)
                    s = await asyncio.to_thread(page.wait, lambda s: s["mapSize"]["width"] > 1700 and fitted(s) and len(s["labels"]) >= 10, "the wall size")
                labels = s["labels"]
                texts = [label["text"] for label in labels]
                assert "Crane 7" in texts or "dragging · Alice" in texts, texts
                assert len(labels) >= 10, texts
                for a, b in itertools.combinations(labels, 2):
                    assert not overlaps(a, b), f"labels overlap at {width} px: {a} and {b}"
                await asyncio.to_thread(page.screenshot, f"crowd-{width}")
            colors = [p["color"] for p in s["participants"]]
            assert len(set(c.lower() for c in colors)) == count, colors
            for c in colors:
                assert contrast(c, s["mapBackground"]) >= 3, (c, s["mapBackground"])
        finally:
            for c in clients:
                await c.close()

    run(scenario())
    assert page.console_errors() == []


def test_the_callout_after_a_restart_names_no_null(session_id, page, tmp_path):
    """Defect 4: the shared callout survives a restart without who showed it."""
    port = free_port()
    data = str(tmp_path / "data")
    server = Server("--port", str(port), "--data-dir", data)
    try:
        run(owner_makes(server.url, session_id, {"type": "annotation.add", "annotation": flag()},
                        {"type": "callout.show", "callout": {"title": "Meet here", "anchor": {"annotation": "flag"}}}))
        server.stop()
        server = Server("--port", str(port), "--data-dir", data)
        page.open(http_url(server, f"?session={session_id}"))
        text = page.wait_js("const c = document.getElementById('callout'); return !c.hidden && c.textContent", "the callout")
        assert "Meet here" in text and "null" not in text and "undefined" not in text, text
        # The page reads the event log once the snapshot is drawn; the server stops after that
        # read, so the page has nothing in flight that the stop could refuse.
        page.wait(lambda s: s["history"]["loaded"], "the event log loaded")
        page.screenshot("callout-after-restart")
    finally:
        server.stop()
    assert page.console_errors() == []


def test_the_overview_dims_its_figures_while_disconnected(session_id, page):
    """Defect 5: rates are not shown as current while the overview is disconnected."""
    port = free_port()
    server = Server("--port", str(port))
    try:
        async def busy():
            async with members(server.url, session_id, ("alice", "owner")) as (alice,):
                await alice.ok({"type": "annotation.add", "annotation": flag()})
                await asyncio.to_thread(page.open, http_url(server))
                await while_active(page, alice, select_or_deselect,
                                   lambda s: row_of(s, session_id) and row_of(s, session_id)["messagesPerSecond"] > 0, "a message rate")

        run(busy())
        server.stop()
        s = page.wait(lambda s: s["status"] in ("disconnected", "reconnecting"), "the disconnection")
        assert s["stale"] is True
        rates = page.js("return [...document.querySelectorAll('#sessions td.rate, #tiles .rate strong')].map((n) => n.textContent)")
        assert rates and all(r == "—" for r in rates), rates
        opacity = float(page.js("return getComputedStyle(document.getElementById('overview-body')).opacity"))
        assert opacity < 0.8, opacity
        notice = page.js("return document.getElementById('overview-summary').textContent")
        assert "disconnected" in notice.lower(), notice
        page.screenshot("overview-disconnected")
        server = Server("--port", str(port))
        s = page.wait(lambda s: s["status"] == "live" and not s["stale"], "the overview live again")
    finally:
        server.stop()
    assert page.console_errors(allowed=("WebSocket connection to",)) == []


# The session view of a busy session (busy_session.py: 20 named participants, 300 annotations,
# cameras and drags moving): details opened out of sight, feed lines cut before what they are
# about, a lost connection shown as live, hundreds of Tab presses to History, and participants'
# colours that change with the theme.

def press(page, *keys):
    ActionChains(page.driver).send_keys(*keys).perform()


def focused(page):
    """Where the focus is: {section (its heading's id), list (the id of the list it is in), row (its position)}."""
    return page.js("const a = document.activeElement; const s = a.closest('section[aria-labelledby]');"
                   " const li = a.closest('li[aria-posinset]'); const list = a.closest('ul, ol');"
                   " return {section: s && s.getAttribute('aria-labelledby'), list: list && list.id, tag: a.tagName,"
                   " id: a.id, row: li && Number(li.getAttribute('aria-posinset')), key: li && (li.dataset.annotation || li.dataset.participant)}")


def test_an_annotation_inspected_from_a_scrolled_panel_comes_into_view_with_the_focus(busy, page):
    """Inspecting an annotation near the end of the list, the side panel scrolled down to it,
    shows its details where the user looks (inside the panel's visible part and the window)
    and moves the keyboard focus to them."""
    server, _ = busy
    open_busy(page, server)
    # The side panel scrolled down to the annotation list, the list to its end.
    page.js("const l = document.getElementById('annotation-list'); l.scrollIntoView({block: 'end'}); l.scrollTop = l.scrollHeight")
    target = page.wait_js("const li = document.querySelector('#annotation-list li[aria-posinset=\"298\"]'); return li && li.dataset.annotation",
                          "a row near the end of the list")
    assert page.js("return document.querySelector('.side').scrollTop") > 200
    page.driver.find_element("css selector", f"#annotation-list li[data-annotation='{target}'] button").click()
    page.wait(lambda s: s["inspector"] and s["inspector"]["id"] == target, "the annotation inspected")
    geometry = page.js("""
        const rect = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
        const side = document.querySelector('.side'), inspector = document.getElementById('inspector');
        return {side: rect(side), sideHeight: side.clientHeight, inspector: rect(inspector),
                details: rect(inspector.querySelector('dl')), heading: rect(document.getElementById('h-inspector')),
                window: {width: innerWidth, height: innerHeight}, focus: inspector.contains(document.activeElement)}""")
    side, win = geometry["side"], geometry["window"]
    visible = {"top": max(side["top"], 0), "bottom": min(side["top"] + geometry["sideHeight"], win["height"]),
               "left": max(side["left"], 0), "right": min(side["right"], win["width"])}
    for part in ("heading", "details"):
        r = geometry[part]
        assert visible["top"] - 1 <= r["top"] and r["bottom"] <= visible["bottom"] + 1, (part, r, visible)
        assert visible["left"] - 1 <= r["left"] and r["right"] <= visible["right"] + 1, (part, r, visible)
    assert geometry["focus"], focused(page)
    page.screenshot("inspected-from-the-list-end")
    # Escape closes it and gives the focus back to the map, as before.
    press(page, Keys.ESCAPE)
    page.wait(lambda s: s["inspector"] is None, "the inspector closed")
    assert page.js("return document.activeElement.id") == "map"
    assert page.console_errors() == []


FEED_LINE_GEOMETRY = """
    // Where the feed's line holding `marker` is, where its visible part is, and the client rects
    // of the last occurrence of each of `parts` in the line's text (across its text nodes): in
    // one call, so that the feed does not move between them.
    const [marker, parts] = arguments;
    const feed = document.getElementById('feed');
    const line = [...feed.querySelectorAll('li')].find((li) => li.textContent.includes(marker));
    if (!line) return null;
    const box = (r) => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
    const f = feed.getBoundingClientRect();
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    const nodes = [];
    let text = "";
    while (walker.nextNode()) { nodes.push([walker.currentNode, text.length]); text += walker.currentNode.data; }
    const locate = (pos) => { for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i][1] <= pos) return [nodes[i][0], pos - nodes[i][1]]; };
    const rects = {};
    for (const part of parts) {
      const at = text.lastIndexOf(part);
      if (at < 0) { rects[part] = null; continue; }
      const range = document.createRange();
      const [startNode, startOffset] = locate(at), [endNode, endOffset] = locate(at + part.length - 1);
      range.setStart(startNode, startOffset);
      range.setEnd(endNode, endOffset + 1);
      rects[part] = [...range.getClientRects()].map(box);
    }
    return {line: box(line.getBoundingClientRect()), overflows: line.scrollWidth > line.clientWidth, rects,
            feed: {left: f.left, top: f.top, right: f.left + feed.clientWidth, bottom: f.top + feed.clientHeight}};
"""


def test_feed_lines_show_who_dragged_which_annotation_and_its_state(server, session_id, page):
    """A participant with a long name starts dragging an annotation with a long title: the
    feed's line shows the name, the title and the state, none of them cut off."""
    who = "Alexandra Konstantinopoulou-Vandenberghe (night shift)"
    title = "North-east corner of the temporary crane exclusion zone at berth 14"

    async def scenario():
        alice = await Client.open(server.url, "alice")
        try:
            await alice.join(session_id, who, "owner")
            await alice.ok({"type": "annotation.add", "annotation": flag("zone-ne", title=title)})
            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["history"]["loaded"], "the session")
            await alice.ok({"type": "drag", "id": "zone-ne", "state": "starting"})
            await asyncio.to_thread(page.wait, lambda s: any(f["text"] == f"{who} drag “{title}”: starting" for f in s["feed"]),
                                    "the drag in the feed")
        finally:
            await alice.close()

    run(scenario())
    parts = (who, f"“{title}”", "starting")
    geometry = page.js(FEED_LINE_GEOMETRY, f"drag “{title}”: starting", list(parts))
    assert geometry, "no line for the drag in the feed"
    for part in parts:
        assert geometry["rects"][part], (part, geometry)
        for r in geometry["rects"][part]:
            for name in ("line", "feed"):
                outer = geometry[name]
                assert outer["left"] - 1 <= r["left"] and r["right"] <= outer["right"] + 1, (part, "cut off by the", name, r, outer)
                assert outer["top"] - 1 <= r["top"] and r["bottom"] <= outer["bottom"] + 1, (part, "cut off by the", name, r, outer)
    assert not geometry["overflows"], geometry
    page.screenshot("long-feed-line")
    assert page.console_errors() == []


def effective_opacity(page, selector):
    """The opacity an element is drawn with: its own times its ancestors'."""
    return page.js("let e = document.querySelector(arguments[0]), o = 1;"
                   " for (; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity); return o", selector)


def test_a_lost_connection_shows_the_drags_as_of_then_until_fresh_state(session_id, page):
    """While disconnected, the Drags panel and the map show the drags (and the other live
    state) faded and as of the disconnect; once reconnected, fresh state shows as current."""
    port = free_port()
    servers = [Server("--port", str(port))]
    dragging = "#drags li[data-state='dragging']"

    async def drag(name, coordinate):
        """`name` joins, adds the flag and drags it (in progress: the server holds the drag)."""
        c = await Client.open(servers[-1].url, name.lower())
        await c.join(session_id, name, "owner")
        await c.ok({"type": "annotation.add", "annotation": flag()})
        await c.ok({"type": "drag", "id": "flag", "state": "starting"})
        await c.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": coordinate})
        return c

    try:
        async def first():
            alice = await drag("Alice", {"latitude": 48.86, "longitude": 2.30})
            try:
                await asyncio.to_thread(page.open, http_url(server=servers[-1], query=f"?session={session_id}"))
                s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["drags"] and s["settled"], "the drag")
                assert s.get("stale") is not True and s.get("mapStale") is not True
                assert page.js(f"return document.querySelector(\"{dragging}\") !== null")
                assert effective_opacity(page, dragging) == 1
                # The server goes away with the drag in progress (killed: a stopped server would end
                # the drags and tell the page first, as a lost network or a crash does not).
                servers[-1].process.kill()
                await asyncio.to_thread(servers[-1].process.wait)
            finally:
                await alice.close()

        run(first())
        page.wait_js("return !document.getElementById('offline').hidden", "the disconnected banner")
        page.wait_js(f"const li = document.querySelector(\"{dragging}\");"
                     " return li && li.closest('[data-stale=\"true\"]') !== null", "the drag marked stale")
        assert effective_opacity(page, dragging) < 1
        panel = page.js("return document.getElementById('h-drags').closest('section').textContent")
        assert "as of the disconnect" in panel.lower(), panel
        assert "as it was" in page.js("return document.getElementById('offline').textContent")
        s = page.wait(lambda s: s["stale"] and s["mapStale"], "the map drawn faded")
        assert s["drags"], s["drags"]
        page.screenshot("drags-as-of-the-disconnect")

        servers.append(Server("--port", str(port)))

        async def second():
            bob = await drag("Bob", {"latitude": 48.85, "longitude": 2.29})
            try:
                await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and not s["stale"] and not s["mapStale"]
                                        and [d["participant"] for d in s["drags"]] == [bob.participant], "Bob's drag, current")
                assert page.js(f"return document.querySelector(\"{dragging}\").closest('[data-stale=\"true\"]')") is None
                assert effective_opacity(page, dragging) == 1
                assert "as of" not in page.js("return document.getElementById('h-drags').closest('section').innerText").lower()
            finally:
                await bob.close()

        run(second())
    finally:
        for server in servers:
            server.stop()
    assert page.console_errors(allowed=("WebSocket connection to", "/api/sessions/")) == []


def test_history_is_a_few_tab_presses_away_and_lists_move_by_arrow_keys(busy, page):
    """With 300 annotations and 20 participants, Tab from the start of the page reaches History
    in a few presses: each long list is one stop, and arrow keys move within it."""
    server, _ = busy
    open_busy(page, server)
    path = []
    for presses in range(1, 61):
        press(page, Keys.TAB)
        path.append(focused(page))
        if path[-1]["section"] == "h-replay":
            break
    else:
        raise AssertionError(f"History not reached in 60 Tab presses; the last stops: {path[-8:]}")
    print(f"\nHistory reached in {presses} Tab presses: {[p['id'] or p['list'] or p['tag'] for p in path]}")
    assert presses <= 25, (presses, path)
    for list_id in ("people", "annotation-list"):
        assert sum(p["list"] == list_id for p in path) == 1, (list_id, path)
    # Back into the annotation list: the row it holds, then arrow keys, Home and End.
    for _ in range(10):
        ActionChains(page.driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        if focused(page)["list"] == "annotation-list":
            break
    at = focused(page)
    assert at["list"] == "annotation-list" and at["row"] == 1, at
    press(page, Keys.ARROW_DOWN)
    assert focused(page)["row"] == 2 and focused(page)["list"] == "annotation-list", focused(page)
    press(page, Keys.ARROW_DOWN)
    press(page, Keys.ARROW_UP)
    assert focused(page)["row"] == 2, focused(page)
    press(page, Keys.END)
    at = focused(page)
    assert at["row"] == 300 and at["list"] == "annotation-list", at
    # The row moved to is in view in the list.
    inside = page.js("const b = document.activeElement.getBoundingClientRect(), l = document.getElementById('annotation-list').getBoundingClientRect();"
                     " return b.top >= l.top - 1 && b.bottom <= l.bottom + 1")
    assert inside
    # Enter inspects it; Tab from the list leaves it (the next stop is after the list).
    press(page, Keys.ENTER)
    page.wait(lambda s: s["inspector"] and s["inspector"]["id"] == at["key"], "the last annotation inspected")
    press(page, Keys.ESCAPE)
    page.wait(lambda s: s["inspector"] is None, "the inspector closed")
    page.driver.execute_script("document.querySelector('#annotation-list button[tabindex=\"0\"]').focus()")
    assert focused(page)["row"] == 300
    press(page, Keys.TAB)
    assert focused(page)["list"] != "annotation-list", focused(page)
    page.screenshot("keyboard-lists")
    assert page.console_errors() == []


def lch_hue(hex_color):
    """CIE LCh(ab) hue (degrees) and chroma of a #rrggbb colour."""
    _, a, b = lab(hex_color)
    return math.degrees(math.atan2(b, a)) % 360, math.hypot(a, b)


def hue_difference(a, b):
    return abs((a - b + 180) % 360 - 180)


def test_a_participant_keeps_their_colour_in_both_themes(busy, page):
    """Each participant's colour (viewport, pin ring, label) has the same hue in the light and
    the dark theme, lighter or darker for contrast: at least 3:1 on the map in both."""
    server, _ = busy
    open_busy(page, server)
    seen = {}
    for scheme in ("dark", "light"):
        emulate(page, prefers_color_scheme=scheme)
        water = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-water').trim()")
        land = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-land').trim()")
        s = page.wait(lambda s: s["theme"] == scheme and s["settled"] and s["mapBackground"] == water, f"the map in the {scheme} theme")
        colours = {p["name"]: p["color"] for p in s["participants"]}
        assert len(set(colours.values())) == 20, colours
        for c in colours.values():
            assert contrast(c, water) >= 3 and contrast(c, land) >= 3, (scheme, c)
        # Beyond the 20 here: the colours of 40 people (their own colours those of the 20), from the page's own function.
        many = page.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "import('/dashboard/colors.js').then((m) => done(Object.fromEntries(m.displayColors(Array.from({length: 40}, (_, i) =>"
            " ({id: 'x' + i, color: arguments[0][i % 20]})), [arguments[1], arguments[2]]))))", COLORS, water, land)
        assert len(set(many.values())) == 40, many
        for c in many.values():
            assert contrast(c, water) >= 3 and contrast(c, land) >= 3, (scheme, c)
        seen[scheme] = {**colours, **many}
        page.screenshot(f"colours-{scheme}")
    changed = []
    for who in seen["dark"]:
        (dark_hue, dark_chroma), (light_hue, light_chroma) = lch_hue(seen["dark"][who]), lch_hue(seen["light"][who])
        # A hue to keep (both coloured, not grey), and kept.
        if min(dark_chroma, light_chroma) < 10 or hue_difference(dark_hue, light_hue) > 15:
            changed.append((who, seen["dark"][who], seen["light"][who], round(hue_difference(dark_hue, light_hue))))
    assert changed == [], f"{len(changed)} of {len(seen['dark'])} change colour with the theme: {changed}"
    assert page.console_errors() == []


def test_light_theme_colours_are_plain_colours_none_near_black(busy, page):
    """On the light map each participant's colour is a plain colour, not near black or grey
    (CIE L* and chroma at least 30): the busy session's, and those of 40 people from the page's
    own function (how far apart they are: test_dashboard_busy.py)."""
    server, _ = busy
    open_busy(page, server)
    emulate(page, prefers_color_scheme="light")
    water = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-water').trim()")
    land = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-land').trim()")
    s = page.wait(lambda s: s["theme"] == "light" and s["settled"] and s["mapBackground"] == water, "the map in the light theme")
    colours = {p["name"]: p["color"] for p in s["participants"]}
    many = page.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/dashboard/colors.js').then((m) => done(Object.fromEntries(m.displayColors(Array.from({length: 40}, (_, i) =>"
        " ({id: 'x' + i, color: arguments[0][i % 20]})), [arguments[1], arguments[2]]))))", COLORS, water, land)
    lch = {who: (lab(c)[0], math.hypot(*lab(c)[1:])) for who, c in {**colours, **many}.items()}
    dark = {who: (c, *map(round, lch[who])) for who, c in {**colours, **many}.items() if min(lch[who]) < 30}
    assert dark == {}, f"{len(dark)} colours near black or grey (L*, chroma): {dark}"
    page.screenshot("colours-light-plain")
    assert page.console_errors() == []
