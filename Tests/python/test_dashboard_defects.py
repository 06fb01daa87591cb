"""The dashboard defects of issue 12, each reproduced in headless Chromium against
the real server: ghost members of pages in the back/forward cache, a hidden join
that created the session it looked at, crowds of moving participants, the callout
after a restart, and the overview's figures while disconnected."""

import asyncio
import itertools
import shutil
import uuid

from conftest import Server
from dashboard_support import api, contrast, flag, free_port, http_url, overlaps, page, to_screen  # noqa: F401
from meridian_client import Client, members, run


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
        async def before():
            alice = await Client.open(server.url, "alice")
            await alice.join(session_id, "Alice", "owner")
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await alice.ok({"type": "callout.show", "callout": {"title": "Meet here", "anchor": {"annotation": "flag"}}})
            await alice.close()

        run(before())
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
            alice = await Client.open(server.url, "alice")
            await alice.join(session_id, "Alice", "owner")
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await asyncio.to_thread(page.open, http_url(server))
            done = asyncio.Event()

            async def activity():
                i = 0
                while not done.is_set():
                    await alice.ok({"type": "select", "id": "flag"} if i % 2 == 0 else {"type": "deselect"})
                    i += 1
                    await asyncio.sleep(0.02)  # a paced member: 50 requests a second, under the rate limit

            task = asyncio.create_task(activity())
            try:
                await asyncio.to_thread(page.wait, lambda s: row_of(s, session_id) and row_of(s, session_id)["messagesPerSecond"] > 0,
                                        "a message rate")
            finally:
                done.set()
                await task
            await alice.close()

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
