"""The dashboard's history in headless Chromium: the feed from the event log with
wall-clock times, filtered by participant and type; replay of a time range on the
map (scrub, play at 8x, back to live); and "who moved this pin, and when?"."""

import asyncio
import time

from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from dashboard_support import api, flag, http_url, page, to_screen  # noqa: F401
from meridian_client import Client, run, snapshot, members
from test_dashboard_features import click_at

A = {"latitude": 48.8584, "longitude": 2.2945}
B = {"latitude": 48.862, "longitude": 2.31}


def log_of(server, session):
    status, body = api(server, f"/api/sessions/{session}/events?limit=1000")
    assert status == 200, body
    return body["entries"]


async def next_millisecond(after_ms):
    """Waits until the wall clock has passed `after_ms`, so the next event gets a later time."""
    while time.time() * 1000 <= after_ms + 1:
        await asyncio.sleep(0.002)


async def inspect_flag_at(page, coordinate, what):
    """Clicks the flag's pin at `coordinate` on the settled map; the page's state once the
    inspector shows the flag with its history."""
    await asyncio.to_thread(page.wait, lambda s: s["settled"], "the map settled")
    s = page.state()
    x, y = to_screen(s["view"], (s["mapSize"]["width"], s["mapSize"]["height"]), coordinate["latitude"], coordinate["longitude"])
    await asyncio.to_thread(click_at, page, x, y - 15)
    return await asyncio.to_thread(page.wait, lambda s: s["inspector"] and s["inspector"]["id"] == "flag" and s["inspector"]["history"],
                                   what)


def logged(server, session, predicate, what, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in log_of(server, session) if "event" in e and predicate(e["event"])]
        if found:
            return found[-1]
        time.sleep(0.05)
    raise AssertionError(f"the log never had {what}")


def scrub(page, ms):
    """Moves the replay slider to `ms` as a pointer drag would (input event)."""
    page.js("const s = document.getElementById('replay-time'); s.value = String(arguments[0]); s.dispatchEvent(new Event('input'))", ms)


def test_feed_replay_and_who_moved_the_pin(server, session_id, page):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner"), ("bob", "editor")) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            added = await asyncio.to_thread(logged, server, session_id, lambda m: m["type"] == "annotation.added", "the add")
            await next_millisecond(added["time"])
            await bob.ok({"type": "drag", "id": "flag", "state": "starting"})
            await bob.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": {"latitude": 48.86, "longitude": 2.30}})
            await bob.ok({"type": "drag", "id": "flag", "state": "ending", "coordinate": B})
            moved = await asyncio.to_thread(logged, server, session_id, lambda m: m["type"] == "drag" and m["state"] == "none", "the drag's end")
            await next_millisecond(moved["time"])
            await alice.ok({"type": "annotation.add", "annotation": flag("late", 48.85, 2.35)})
            late = await asyncio.to_thread(logged, server, session_id, lambda m: m["type"] == "annotation.added" and m["annotation"]["id"] == "late",
                                           "the late add")

            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["history"]["loaded"]
                                        and any(f["type"] == "annotation.added" and f["seq"] == late["seq"] for f in s["feed"]), "the feed from the log")
            # The feed's times are the log's wall-clock times.
            feed = {f["seq"]: f for f in s["feed"]}
            assert feed[moved["seq"]]["time"] == moved["time"] and feed[moved["seq"]]["text"] == "Bob drag “Flag”: none"
            shown_time = page.js(f"return [...document.querySelectorAll('#feed li')].find((li) => li.textContent.includes('drag “Flag”: none'))"
                                 ".querySelector('time').getAttribute('datetime')")
            assert shown_time == time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moved["time"] / 1000)) + f".{moved['time'] % 1000:03d}Z"
            assert s["history"]["checkpoints"] >= 1

            # Filters: Bob's events only; then annotation events only.
            Select(page.driver.find_element("id", "feed-participant")).select_by_value(bob.participant)
            s = await asyncio.to_thread(page.wait, lambda s: s["feed"] and all("Bob" in f["text"] for f in s["feed"]), "Bob's events")
            assert {f["type"] for f in s["feed"]} == {"participant.joined", "drag"}
            Select(page.driver.find_element("id", "feed-participant")).select_by_value("")
            Select(page.driver.find_element("id", "feed-type")).select_by_value("annotation")
            s = await asyncio.to_thread(page.wait, lambda s: [f["type"] for f in s["feed"]] == ["annotation.added", "annotation.added"],
                                        "annotation events only")
            await asyncio.to_thread(page.screenshot, "feed-filtered")

            # Replay: before Bob's drag the flag was at A and "late" did not exist.
            scrub(page, added["time"])
            s = await asyncio.to_thread(page.wait, lambda s: s["replay"]["active"] and "flag" in s["replay"]["annotations"], "the replay")
            assert s["replay"]["annotations"] == {"flag": A}, s["replay"]
            assert sorted(s["replay"]["participants"]) == ["Alice", "Bob"]
            assert not page.js("return document.getElementById('replaying').hidden")
            await asyncio.to_thread(page.screenshot, "replay-before-drag")
            # Forward to after the drag: the flag at B, "late" still to come.
            scrub(page, moved["time"])
            s = await asyncio.to_thread(page.wait, lambda s: s["replay"]["annotations"].get("flag") == B, "the replay after the drag")
            assert "late" not in s["replay"]["annotations"] and s["replay"]["seq"] == moved["seq"]
            # Back again: recomputed from the checkpoint.
            scrub(page, added["time"])
            await asyncio.to_thread(page.wait, lambda s: s["replay"]["annotations"] == {"flag": A}, "the replay scrubbed back")
            # Keyboard: Home on the slider goes to the start of the log.
            slider = page.driver.find_element("id", "replay-time")
            slider.send_keys(Keys.HOME)
            s = await asyncio.to_thread(page.wait, lambda s: s["replay"]["active"] and s["replay"]["time"] == s["history"]["range"]["min"],
                                        "the replay at the log's start")
            # Play at 8x runs to the present and returns to live.
            Select(page.driver.find_element("id", "replay-speed")).select_by_value("8")
            page.driver.find_element("id", "replay-play").click()
            s = await asyncio.to_thread(page.wait, lambda s: s["replay"].get("playing") and s["replay"]["speed"] == 8, "playing at 8x")
            s = await asyncio.to_thread(page.wait, lambda s: not s["replay"]["active"], "the replay caught up with live", 60)
            # Live returns at once.
            scrub(page, added["time"])
            await asyncio.to_thread(page.wait, lambda s: s["replay"]["active"], "replaying again")
            page.driver.find_element("id", "replay-live").click()
            s = await asyncio.to_thread(page.wait, lambda s: not s["replay"]["active"], "back to live")
            assert page.js("return document.getElementById('replaying').hidden") is True

            # Who moved this pin, and when? Click it.
            s = await inspect_flag_at(page, B, "the pin's history")
            assert s["inspector"]["history"][0] == "Bob moved it to 48.86200, 2.31000", s["inspector"]["history"]
            assert "Bob started dragging it" in s["inspector"]["history"]
            assert s["inspector"]["history"][-1] == "added at 48.85840, 2.29450"
            item = page.js("return [...document.querySelectorAll('#inspector li')].find((li) => li.textContent.includes('Bob moved it'))"
                           ".querySelector('time').getAttribute('datetime')")
            assert item.startswith(time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moved["time"] / 1000)))
            await asyncio.to_thread(page.screenshot, "who-moved-the-pin")

    run(scenario())
    assert page.console_errors() == []


def test_the_feed_and_the_inspector_show_undos_as_such(server, session_id, page):
    async def scenario():
        async with members(server.url, session_id, ("alice", "owner"), ("bob", "editor")) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": flag()})
            await bob.ok({"type": "drag", "id": "flag", "state": "starting"})
            await bob.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": B})
            await bob.ok({"type": "drag", "id": "flag", "state": "ending"})
            _, undone = await bob.ok({"type": "undo"})
            _, redone = await bob.ok({"type": "redo"})
            await bob.ok({"type": "undo"})
            await asyncio.to_thread(logged, server, session_id, lambda m: m["type"] == "change.undone" and m["seq"] > redone[-1]["seq"], "the last undo")

            await asyncio.to_thread(page.open, http_url(server, f"?session={session_id}"))
            s = await asyncio.to_thread(page.wait, lambda s: s["status"] == "live" and s["history"]["loaded"]
                                        and sum(f["type"] == "change.undone" for f in s["feed"]) == 2, "the undos in the feed")
            feed = {f["seq"]: f for f in s["feed"]}
            assert feed[undone[0]["seq"]]["text"] == "Bob undid the drag of “Flag”", feed[undone[0]["seq"]]
            assert feed[redone[0]["seq"]]["text"] == "Bob redid the drag of “Flag”", feed[redone[0]["seq"]]
            # Undos are annotation changes for the feed's type filter.
            Select(page.driver.find_element("id", "feed-type")).select_by_value("annotation")
            s = await asyncio.to_thread(page.wait, lambda s: "change.redone" in {f["type"] for f in s["feed"]}, "undos among annotation events")
            assert {f["type"] for f in s["feed"]} == {"annotation.added", "annotation.updated", "change.undone", "change.redone"}, s["feed"]

            # The flag is back at A; its history says who undid what.
            s = await inspect_flag_at(page, A, "the flag's history")
            history = s["inspector"]["history"]
            assert history[0] == "updated (now at 48.85840, 2.29450)" and history[1] == "Bob undid the drag of it", history
            assert "Bob redid the drag of it" in history, history
            await asyncio.to_thread(page.screenshot, "feed-undo")

    run(scenario())


UNDO_IN_THE_BROWSER = """
const [url, session, annotation] = arguments;
const done = arguments[arguments.length - 1];
(async () => {
  const { MeridianClient } = await import("/dashboard/meridian.js");
  const client = new MeridianClient(url, { session, name: "Web", role: "editor" }).connect();
  const until = (holds, what) => new Promise((resolve, reject) => {
    const check = () => { if (holds()) { client.removeEventListener("status", check); client.removeEventListener("state", check); resolve(); } };
    client.addEventListener("status", check);
    client.addEventListener("state", check);
    check();
    setTimeout(() => reject(new Error(`never ${what}: ${client.status}`)), 10000);
  });
  await until(() => client.status === "live", "live");
  await client.request("annotation.add", { annotation });
  await client.request("annotation.update", { id: annotation.id, changes: { title: "Renamed" } });
  const first = client.state.participant;
  client._restart(); // the connection drops; the client reconnects and resumes
  await until(() => client.status === "live" && client.state.participant !== first, "back");
  const undone = await client.undo();
  const afterUndo = client.state.annotations.get(annotation.id).title;
  await client.redo();
  const afterRedo = client.state.annotations.get(annotation.id).title;
  let refused = null;
  try { await client.redo(); } catch (e) { refused = e.code; }
  client.close();
  return { first, second: client.state.participant, undone: undone.seq, afterUndo, afterRedo, refused };
})().then(done, (e) => done({ error: String(e) }));
"""


def test_meridian_js_undoes_and_redoes_after_reconnecting(server, session_id, page):
    page.open(http_url(server, f"?session={session_id}"))
    ws = f"ws://{server.host}:{server.port}/"
    result = page.driver.execute_async_script(UNDO_IN_THE_BROWSER, ws, session_id, flag("web", title="Original"))
    assert "error" not in result, result
    assert result["second"] != result["first"], result
    assert result["afterUndo"] == "Original" and result["afterRedo"] == "Renamed", result
    assert result["refused"] == "not_found", result
    snap = run(snapshot(server.url, session_id))
    assert [a["title"] for a in snap["annotations"]] == ["Renamed"], snap


EDITS_OFFLINE = """
const [url, session, step] = arguments;
const done = arguments[arguments.length - 1];
(async () => {
  const { MeridianClient } = await import("/dashboard/meridian.js");
  const { EditQueue } = await import("/dashboard/edits.js");
  const client = new MeridianClient(url, { session, name: "Field", role: "editor" });
  const live = () => new Promise((resolve, reject) => {
    const check = () => { if (client.status === "live") { client.removeEventListener("status", check); resolve(); } };
    client.addEventListener("status", check);
    check();
    setTimeout(() => reject(new Error(`never live: ${client.status}`)), 10000);
  });
  if (step === "before") {
    client.connect();
    await live();
    const queue = new EditQueue(client);
    const settled = [];
    queue.addEventListener("edit", (e) => settled.push(e.detail.outcome));
    queue.submit("annotation.add", { annotation: { type: "point", id: "a", title: "A", coordinate: { latitude: 1, longitude: 2 } } });
    queue.submit("annotation.add", { annotation: { type: "point", id: "b", title: "B", coordinate: { latitude: 3, longitude: 4 } } });
    while (settled.length < 2) await new Promise((r) => queue.addEventListener("edit", r, { once: true }));
    await new Promise((r) => { const f = () => { if (client.revisionOf("b") !== undefined) { client.removeEventListener("state", f); r(); } }; client.addEventListener("state", f); f(); });
    // The connection goes; the edits made now wait in localStorage.
    client.close();
    queue.submit("annotation.update", { id: "a", changes: { title: "A (mine)" } });
    queue.submit("annotation.update", { id: "b", changes: { title: "B (mine)" } });
    queue.submit("annotation.remove", { id: "c" });
    return { settled, waiting: queue.edits, stored: JSON.parse(localStorage.getItem(queue.key)).edits.length };
  }
  // After a reload: a new client and queue find the edits and send them once live.
  const queue = new EditQueue(client);
  const found = queue.edits.length;
  const settled = [];
  queue.addEventListener("edit", (e) => settled.push({ id: e.detail.edit.id, outcome: e.detail.outcome, code: e.detail.error?.code ?? null, theirs: e.detail.annotation?.title ?? null }));
  client.connect();
  while (settled.length < found) await new Promise((r) => queue.addEventListener("edit", r, { once: true }));
  const left = localStorage.getItem(queue.key);
  client.close();
  return { found, settled, left };
})().then(done, (e) => done({ error: String(e) }));
"""


def test_edits_made_offline_in_the_browser_survive_a_reload_and_settle_when_back(server, session_id, page):
    ws = f"ws://{server.host}:{server.port}/"
    page.open(http_url(server))
    before = page.driver.execute_async_script(EDITS_OFFLINE, ws, session_id, "before")
    assert "error" not in before, before
    assert before["settled"] == ["applied", "applied"] and before["stored"] == 3, before
    seen_b = next(e for e in before["waiting"] if e["fields"]["id"] == "b")["fields"]["ifRevision"]

    async def colleague():
        bob = await Client.open(server.url, "bob")
        try:
            await bob.join(session_id, "Bob", "editor")
            await bob.ok({"type": "annotation.update", "id": "b", "changes": {"title": "B (theirs)"}})
        finally:
            await bob.close()
    run(colleague())

    page.open(http_url(server))  # a reload: the page and its clients are new, localStorage is not
    after = page.driver.execute_async_script(EDITS_OFFLINE, ws, session_id, "after")
    assert "error" not in after, after
    assert after["found"] == 3 and after["left"] is None, after
    assert after["settled"] == [
        {"id": 3, "outcome": "applied", "code": None, "theirs": None},
        {"id": 4, "outcome": "conflict", "code": "revision_conflict", "theirs": "B (theirs)"},
        {"id": 5, "outcome": "refused", "code": "not_found", "theirs": None},
    ], after
    snap = run(snapshot(server.url, session_id))
    assert {a["id"]: a["title"] for a in snap["annotations"]} == {"a": "A (mine)", "b": "B (theirs)"}, snap
    assert seen_b < max(a["revision"] for a in snap["annotations"] if a["id"] == "b")
