"""The session view stays readable when the session is busy (busy_session.py: 300
annotations, 20 participants with moving cameras, two drags, a refused drag, eight
selections, the shared callout and camera, six locations, two coarse), in headless
Chromium at 1440x900 against the real server: few labels, by priority, stable between
frames and one per participant; viewports as outlines that leave a pin its colour;
a map that does not move under the user; titles in the panels; one callout; a palette
whose colours differ plainly in both themes; fixed-height rows; the last minute of
rates from the first frame; an unknown session with nothing active."""

import itertools
import math
import time

import pytest

from browser import ARTIFACTS
from busy_session import CALLOUT_ON, DRAGGED, HARBOUR, NAMES, SELECTED, TINT, UNDER, BusySession, annotations
from conftest import Server
from dashboard_support import api, contrast, http_url, overlaps, page, to_screen  # noqa: F401 (page is a fixture)
from test_dashboard_access import emulate, serious_violations
from dashboard_support import close, pixel

TITLES = {a["id"]: a["title"] for a in annotations()}


@pytest.fixture(scope="module")
def busy():
    """One server and one busy session for the module's tests (building it takes a few seconds)."""
    server = Server()
    session = BusySession(server.url, "harbour").start()
    yield server, session
    session.stop()
    crashed = not server.alive()
    server.stop()
    assert not crashed, server.log_text()[-3000:]


def open_busy(page, server, query="", width=1440, height=900):
    page.driver.set_window_size(width, height)
    page.open(http_url(server, f"?session=harbour{query}"))
    return page.wait(lambda s: s["status"] == "live" and len(s["participants"]) == 20 and s["annotationCount"] == 300
                     and s["settled"] and s["labels"], "the busy session drawn")


def frames_later(page, s, count=25):
    """The state once the map has drawn `count` more frames (the cameras keep moving)."""
    return page.wait(lambda t: t["frames"] >= s["frames"] + count, f"{count} more frames", 30)


def lab(hex_color):
    """CIELAB (D65) of a #rrggbb colour, written apart from the page's."""
    rgb = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
    xyz = [(0.4124564 * lin[0] + 0.3575761 * lin[1] + 0.1804375 * lin[2]) / 0.95047,
           0.2126729 * lin[0] + 0.7151522 * lin[1] + 0.0721750 * lin[2],
           (0.0193339 * lin[0] + 0.1191920 * lin[1] + 0.9503041 * lin[2]) / 1.08883]
    f = [t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def ciede2000(c1, c2):
    """CIEDE2000 (Sharma, Wu and Dalal 2005) of two #rrggbb colours, written apart from the page's."""

    (L1, a1, b1), (L2, a2, b2) = lab(c1), lab(c2)
    cb = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(cb ** 7 / (cb ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0
    dh = 0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    dH = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh) / 2)
    lbp, cbp = (L1 + L2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hbp = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hbp = (h1p + h2p) / 2
    else:
        hbp = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(hbp - 30)) + 0.24 * math.cos(math.radians(2 * hbp))
         + 0.32 * math.cos(math.radians(3 * hbp + 6)) - 0.20 * math.cos(math.radians(4 * hbp - 63)))
    rt = -math.sin(math.radians(60 * math.exp(-((hbp - 275) / 25) ** 2))) * 2 * math.sqrt(cbp ** 7 / (cbp ** 7 + 25 ** 7))
    sl = 1 + 0.015 * (lbp - 50) ** 2 / math.sqrt(20 + (lbp - 50) ** 2)
    sc, sh = 1 + 0.045 * cbp, 1 + 0.015 * cbp * t
    return math.sqrt(((L2 - L1) / sl) ** 2 + ((c2p - c1p) / sc) ** 2 + (dH / sh) ** 2 + rt * ((c2p - c1p) / sc) * (dH / sh))


def test_the_colour_difference_used_here_measures_known_differences():
    # Identical colours differ by 0, black and white by 100 (L* from 0 to 100), red and green plainly.
    assert abs(ciede2000("#ff0000", "#ff0000")) < 1e-9
    assert abs(ciede2000("#000000", "#ffffff") - 100) < 0.01
    assert 20 < ciede2000("#ff0000", "#00ff00") < 100
    # Just noticeable: a step of one in one channel.
    assert ciede2000("#808080", "#808081") < 1


def test_labels_are_few_prioritised_one_per_participant_and_stable(busy, page):
    server, session = busy
    s = open_busy(page, server)
    # The first frame drawn is the harbour, fitted, not the whole world.
    first = s["firstFrame"]
    assert first["view"]["zoom"] > 11 and first["annotations"] > 100, first
    labels = s["labels"]
    area = s["mapSize"]["width"] * s["mapSize"]["height"]
    focus = [label for label in labels if label["key"].startswith("drag:") or label["key"][2:] in SELECTED + list(DRAGGED)]
    assert len(labels) - len(focus) <= round(area / 20000), (len(labels), area)
    assert 15 <= len(labels) <= 70, [label["text"] for label in labels]
    for a, b in itertools.combinations(labels, 2):
        assert not overlaps(a, b), (a, b)
    # None under the page's controls over the map: the toolbar, the scale and cursor, the note on
    # the offline basemap, the basemap's attribution.
    controls = page.js("""const o = document.getElementById('map').getBoundingClientRect();
        return [...document.querySelectorAll('.map-controls, .map-readout, #basemap-note, .maplibregl-ctrl-attrib')]
          .map((e) => [e.className || e.id, e.getBoundingClientRect()]).filter(([, r]) => r.width && r.height)
          .map(([name, r]) => ({name, x: r.left - o.left, y: r.top - o.top, w: r.width, h: r.height}))""")
    assert {"map-controls", "map-readout", "basemap-note"} <= {c["name"] for c in controls}, controls
    for label, control in itertools.product(labels, controls):
        assert not overlaps(label, control), (label, control)
    # Each participant at most once, by name alone (no "(coarse)" twin), in a pill of their colour;
    # every one of the 20 named, by that pill or by what they drag.
    people = [label for label in labels if label["kind"] == "participant"]
    assert len({label["key"] for label in people}) == len(people) and all(label["text"] in NAMES for label in people), people
    named = lambda labels: {n for n in NAMES if any(label["text"] in (n, f"dragging · {n}") for label in labels)}  # noqa: E731
    assert named(labels) == set(NAMES), sorted(set(NAMES) - named(labels))
    # What is dragged and selected is labelled first.
    texts = {label["text"] for label in labels}
    for who in (NAMES[1], NAMES[2]):
        assert f"dragging · {who}" in texts, texts
    assert sum(TITLES[i] in texts for i in SELECTED) >= 6, texts
    # Stable: for 20 s while the cameras and drags move, the annotations that stay where they are
    # keep their labels (at most a tenth change), and everyone stays named.
    still = lambda labels: {label["key"] for label in labels if label["kind"] == "annotation" and label["key"][2:] not in DRAGGED}  # noqa: E731
    before = still(labels)
    window_ends = time.monotonic() + 20
    later = page.wait(lambda t: time.monotonic() >= window_ends and t["frames"] > s["frames"], "20 s of frames", 60)
    after = still(later["labels"])
    assert len(before & after) >= 0.9 * len(before | after), (sorted(before - after), sorted(after - before))
    assert named(later["labels"]) == set(NAMES), sorted(set(NAMES) - named(later["labels"]))
    assert page.console_errors() == []


def test_viewports_are_outlines_and_the_map_keeps_a_pin_its_colour(busy, page):
    server, session = busy
    # Zoomed to the pin every viewport covers (a coarse location's circle too).
    lat, lon = HARBOUR
    s = open_busy(page, server, f"&map=17/{lat}/{lon}")
    assert s["layersShown"]["viewportFill"] is False and s["autoFit"] is False
    assert page.js("return document.querySelector('#legend-layers input[data-layer=viewportFill]').checked") is False
    covering = [p for p in s["participants"] if p["visibleBounds"]["southWest"]["latitude"] < lat < p["visibleBounds"]["northEast"]["latitude"]
                and p["visibleBounds"]["southWest"]["longitude"] < lon < p["visibleBounds"]["northEast"]["longitude"]]
    assert len(covering) >= 10, len(covering)

    def pin_colour(s):
        size = (s["mapSize"]["width"], s["mapSize"]["height"])
        x, y = to_screen(s["view"], size, lat, lon)
        k = float(page.js("return parseFloat(getComputedStyle(document.documentElement).fontSize) / 16"))
        # In the pin's head, between its white dot and its edge.
        return [pixel(page, x + dx * k, y - 19 * k) for dx in (-6, 6)]

    found = pin_colour(s)
    assert all(close(c, TINT, 30) for c in found), (found, TINT)
    # The viewports' fill, switched on from the legend, stays under the pins.
    page.driver.find_element("css selector", "#legend-layers input[data-layer=viewportFill]").click()
    s = page.wait(lambda s: s["layersShown"]["viewportFill"] and s["settled"], "the viewports filled")
    assert all(close(c, TINT, 30) for c in pin_colour(s))
    # At harbour zoom without raster tiles the map says so, and how to add them.
    note = page.wait_js("const n = document.getElementById('basemap-note'); return !n.hidden && n.textContent", "the basemap note")
    assert "--dashboard-tiles" in note, note
    page.screenshot("pin-under-viewports")
    assert page.console_errors() == []


def test_the_map_stays_put_under_the_user(busy, page):
    server, session = busy
    from selenium.webdriver.common.action_chains import ActionChains
    s = open_busy(page, server)
    assert s["autoFit"] is True and page.js("return document.getElementById('follow-all').getAttribute('aria-pressed')") == "true"
    size = (s["mapSize"]["width"], s["mapSize"]["height"])
    fixed = (HARBOUR[0] + 0.01, HARBOUR[1] - 0.02)

    def drift(a, b):
        pa, pb = to_screen(a["view"], size, *fixed), to_screen(b["view"], size, *fixed)
        return math.dist(pa, pb)

    # Following everyone, while 20 cameras and two drags move inside the fitted view: no refit.
    later = frames_later(page, s, 40)
    assert drift(s, later) <= 1, (s["view"], later["view"])
    # The user pans: following stops (the button says so) and the map stays where they put it.
    canvas = page.driver.find_element("id", "map")
    ActionChains(page.driver).move_to_element(canvas).click_and_hold().move_by_offset(40, 0).move_by_offset(60, 30).release().perform()
    panned = page.wait(lambda s: s["autoFit"] is False and s["settled"], "following turned off by the pan")
    assert page.js("return document.getElementById('follow-all').getAttribute('aria-pressed')") == "false"
    assert drift(s, panned) > 50
    later = frames_later(page, panned, 40)
    assert drift(panned, later) <= 1 and later["fits"] == panned["fits"]
    # "Follow all" brings it back.
    page.driver.find_element("id", "follow-all").click()
    back = page.wait(lambda s: s["autoFit"] is True and s["fits"] > panned["fits"] and s["settled"], "following again")
    assert drift(s, back) < 30
    assert page.console_errors() == []


def test_panels_show_titles_one_callout_and_fixed_rows(busy, page):
    server, session = busy
    s = open_busy(page, server)
    # Drags by title; the refused attempts in one row with a count.
    rows = page.js("return [...document.querySelectorAll('#drags li')].map((li) => [li.dataset.state, li.textContent, li.dataset.count || null])")
    dragging = [text for state, text, _ in rows if state == "dragging"]
    assert sorted(dragging) and all(any(TITLES[i] in t for i in DRAGGED) for t in dragging), rows
    for _ in range(3):
        answer, _ = session.run(session.clients[3].request({"type": "drag", "id": DRAGGED[0], "state": "starting"}))
        assert answer["code"] == "drag_conflict"
    refused = page.wait_js("const r = [...document.querySelectorAll('#drags li.refused')];"
                           " return r.length === 1 && Number(r[0].dataset.count) >= 3 && r[0].textContent", "the refusals in one row")
    assert TITLES[DRAGGED[0]] in refused and "×" in refused and NAMES[1] in refused, refused
    # The participants list names what each selected.
    meta = page.js(f"const li = document.querySelector('#people li[data-participant=\"{session.clients[4].participant}\"]');"
                   " return li && li.textContent")
    assert f"selected {TITLES[SELECTED[0]]}" in meta, meta
    # The feed is not a list of own-camera moves; "everything" has them.
    assert not any("own camera" in f["text"] for f in s["feed"]), s["feed"][:5]
    from selenium.webdriver.support.ui import Select
    Select(page.driver.find_element("id", "feed-type")).select_by_value("everything")
    page.wait(lambda s: any("own camera" in f["text"] for f in s["feed"]), "own-camera moves under everything")
    # One callout: on the map; the panel describes it (in the theme's colours), nothing covers the map.
    assert s["callouts"] == 1
    assert page.js("return document.querySelector('.map-area #callout, .map-area .callout') === null")
    text = page.js("return document.getElementById('callout').textContent")
    assert "Pilot boarding" in text and TITLES[CALLOUT_ON] in text and NAMES[0] in text, text
    assert page.js("return getComputedStyle(document.getElementById('callout')).backgroundColor") == \
        page.js("const d = document.createElement('div'); d.style.color = 'var(--panel-2)'; document.body.append(d);"
                " const c = getComputedStyle(d).color; d.remove(); return c")
    # Every annotation is listed (no cap), only a screenful of rows is in the page; the last is reached by scrolling.
    assert s["annotationListTotal"] == 300
    rendered = page.js("return document.querySelectorAll('#annotation-list li:not(.spacer)').length")
    assert rendered < 40, rendered
    page.js("const l = document.getElementById('annotation-list'); l.scrollTop = l.scrollHeight")
    page.wait_js("return document.querySelector('#annotation-list li[aria-posinset=\"300\"][aria-setsize=\"300\"]') !== null", "the last row")
    # Rows of one height; sections fold.
    heights = page.js("return [...document.querySelectorAll('#people li:not(.spacer), #annotation-list li:not(.spacer)')]"
                      ".map((li) => li.getBoundingClientRect().height)")
    assert len(set(round(h) for h in heights)) == 1, set(heights)
    shown = page.js("return document.querySelectorAll('#people li:not(.spacer)').length")
    assert shown >= 12, shown
    fold = page.driver.find_element("css selector", "#h-people button.fold")
    fold.click()
    assert fold.get_attribute("aria-expanded") == "false" and page.js("return document.getElementById('people').offsetParent") is None
    fold.click()
    assert page.js("return document.getElementById('people').offsetParent") is not None
    assert page.console_errors() == []


def test_palette_distances_screenshots_and_axe_in_both_themes(busy, page):
    server, session = busy
    for scheme in ("dark", "light"):
        emulate(page, prefers_color_scheme=scheme)
        page.driver.set_window_size(1440, 900)
        page.open(http_url(server, "?session=harbour"))
        water = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-water').trim()")
        land = page.js("return getComputedStyle(document.documentElement).getPropertyValue('--map-land').trim()")
        s = page.wait(lambda s: s["status"] == "live" and len(s["participants"]) == 20 and s["settled"] and s["theme"] == scheme
                      and s["mapBackground"] == water and s["history"]["loaded"], f"the busy session in the {scheme} theme")
        colours = [p["color"] for p in s["participants"]]
        # The 24 colours a 24-person session gets, from the page's own function.
        colours24 = page.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "import('/dashboard/colors.js').then((m) => done([...m.displayColors(Array.from({length: 24}, (_, i) =>"
            " ({id: 'x' + i, color: arguments[0][i % 20]})), [arguments[1], arguments[2]]).values()]))", colours, water, land)
        for group in (colours, colours24):
            assert len(set(group)) == len(group)
            for c in group:
                assert contrast(c, water) >= 3 and contrast(c, land) >= 3, (scheme, c)
            worst = min(itertools.combinations(group, 2), key=lambda pair: ciede2000(*pair))
            # At 3:1 on the light map a colour has L* 57 at most; 24 plain ones (L* and chroma 30
            # or more) in that band are about 18 apart at best, where the dark map leaves room for 20.
            assert ciede2000(*worst) >= (20 if scheme == "dark" else 16.5), (scheme, worst, ciede2000(*worst))
        ARTIFACTS.mkdir(exist_ok=True)
        page.driver.save_screenshot(str(ARTIFACTS / f"dashboard-busy-{scheme}.png"))
        found = serious_violations(page)
        assert found == [], f"{scheme}: " + "\n".join(found)
    assert page.console_errors() == []


def test_rates_from_the_first_frame_and_the_overview_row(busy, page):
    server, session = busy
    # A sample a second since the session opened (the module's first test may be this one: wait for three).
    deadline = time.monotonic() + 10
    while True:
        status, rates = api(server, "/api/sessions/harbour/rates")
        assert status == 200, rates
        if len(rates["messagesPerSecond"]) >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(rates["messagesPerSecond"]) >= 3 and max(rates["messagesPerSecond"]) > 10, rates
    assert len(rates["messagesPerSecond"]) == len(rates["deliveriesPerSecond"]) <= 60
    assert api(server, "/api/sessions/no-such-session/rates")[0] == 404
    # The session view's server chart starts with the server's last minute.
    open_busy(page, server)
    page.wait(lambda s: s["rateHistory"], "the rate history")
    assert page.js("return document.getElementById('server-chart').getAttribute('aria-label')").endswith("last minute")
    # The overview: the busy row is as tall as any, with the count, a few names and "+17" for the rest.
    page.open(http_url(server))
    s = page.wait(lambda s: s["status"] == "live" and "harbour" in s.get("seeded", []), "the overview with the session's last minute")
    label = page.js("return document.querySelector(\"tr[data-session='harbour'] canvas.spark\").getAttribute('aria-label')")
    seconds = int(label.split("last ")[1].split(" s")[0])
    assert seconds >= 3, label
    row = "tr[data-session='harbour']"
    height = page.js(f"return document.querySelector(\"{row}\").getBoundingClientRect().height")
    rem = page.js("return parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert height <= 3 * rem, (height, rem)
    names = page.js(f"return document.querySelector(\"{row} td.names\").textContent")
    assert names.startswith("20") and "+17" in names, names
    # (in one step: the rows are drawn anew every second)
    page.js(f"document.querySelector(\"{row} td.names summary\").click()")
    listed = page.wait_js(f"const d = document.querySelector(\"{row} td.names details\"); return d && d.open &&"
                          " [...d.querySelectorAll('li')].map((li) => li.textContent)", "the +17 list")
    assert listed == NAMES, listed
    assert page.js(f"return document.querySelector(\"{row}\").getBoundingClientRect().height") == height
    summary = page.js("return document.getElementById('overview-summary').textContent")
    assert "this one" in summary, summary
    page.screenshot("overview")
    assert page.console_errors() == []


def test_an_unknown_session_has_nothing_active(busy, page):
    server, _ = busy
    page.open(http_url(server, "?session=nobody-here"))
    page.wait_js("return document.body.dataset.status === 'no-session' && !document.getElementById('no-session').hidden", "the notice")
    status = page.wait_js("const t = document.getElementById('replay-status').textContent; return !t.includes('Loading') && t",
                          "the history's status")
    assert "No session" in status, status
    for control in ("replay-play", "replay-time", "fit", "follow-all", "follow-shared"):
        assert page.js(f"return document.getElementById('{control}').disabled") is True, control
    assert page.console_errors(allowed=("/rates",)) == []
