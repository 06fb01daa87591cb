"""A busy session, as an operations room has one open: 300 annotations around a harbour
(titled points, routes and areas, one area outlined in white), 20 participants whose
cameras keep moving, two drags in progress, a refused drag, eight selections, the shared
callout and the shared camera, six locations (two of them coarse).

The dashboard tests build it with `BusySession` (its clients run on a thread of their own,
so a test waits on the browser while the cameras move). Alone, against a running server
it builds the session and keeps it moving
until interrupted:

    python3 Tests/python/busy_session.py ws://127.0.0.1:8080/ harbour
"""

import asyncio
import collections
import math
import random
import sys
import threading

from meridian_client import Client

HARBOUR = (53.5415, 9.9700)
TINT = "#007aff"
NAMES = ["Jonas Weber", "Anna Schmidt", "Lukas Becker", "Mia Hoffmann", "Felix Wagner", "Lea Schulz", "Paul Koch", "Emma Richter",
         "Noah Klein", "Hannah Wolf", "Elias Neumann", "Sofia Schwarz", "Ben Zimmermann", "Lina Braun", "Finn Krüger", "Marie Hartmann",
         "Leon Lange", "Clara Werner", "Tom Krause", "Ida Meier"]
# Participants' own colours, several of them close (as people pick them): the dashboard tells them apart.
COLORS = ["#0f16bd", "#380c97", "#000075", "#620971", "#9f6b2f", "#808000", "#69f368", "#39ef3e", "#e6194b", "#3cb44b",
          "#ffe119", "#4363d8", "#f58231", "#911eb4", "#46f0f0", "#f032e6", "#bcf60c", "#fabebe", "#008080", "#e6beff"]
POINTS, ROUTES, AREAS = 270, 20, 10
# The pin every viewport covers (the middle of the harbour): the tests read its colour.
UNDER = "pin-under"
DRAGGED = ("crane-7", "crane-12")
SELECTED = [f"berth-{i}" for i in range(1, 9)]
CALLOUT_ON = "berth-1"
MOVE_EVERY = 0.4  # seconds between camera frames of each participant


def annotations():
    """The 300 annotations, the same every time."""
    rnd = random.Random(27)
    lat0, lon0 = HARBOUR
    out = [{"type": "point", "id": UNDER, "title": "Pier head", "zIndex": 3, "coordinate": {"latitude": lat0, "longitude": lon0}}]
    kinds = ["Berth", "Crane", "Bollard", "Gate", "Buoy", "Depot"]
    counters = {k: 0 for k in kinds}
    while len(out) < POINTS:
        kind = kinds[len(out) % len(kinds)]
        counters[kind] += 1
        ident = f"{kind.lower()}-{counters[kind]}"
        out.append({"type": "point", "id": ident, "title": f"{kind} {counters[kind]}", "zIndex": rnd.randrange(4),
                    "draggable": ident in DRAGGED, "canShowCallout": ident == CALLOUT_ON,
                    "coordinate": {"latitude": lat0 + rnd.uniform(-0.02, 0.02), "longitude": lon0 + rnd.uniform(-0.045, 0.045)}})
    for i in range(ROUTES):
        start = (lat0 + rnd.uniform(-0.018, 0.018), lon0 + rnd.uniform(-0.04, 0.04))
        out.append({"type": "polyline", "id": f"route-{i}", "title": f"Route {i}", "strokeColor": "#f59f00", "lineWidth": 3,
                    "coordinates": [{"latitude": start[0] + k * 0.002, "longitude": start[1] + k * 0.004 * (1 if i % 2 else -1)} for k in range(4)]})
    for i in range(AREAS):
        c = (lat0 + rnd.uniform(-0.016, 0.016), lon0 + rnd.uniform(-0.035, 0.035))
        white = i == 0
        out.append({"type": "polygon", "id": f"area-{i}", "title": f"Area {i}", "alpha": 0.35 if not white else 1,
                    "fillColor": "#2f9e44" if not white else "#ffffff00", "strokeColor": "#ffffff" if white else "#2b8a3e",
                    "coordinates": [{"latitude": c[0] + dy, "longitude": c[1] + dx}
                                    for dx, dy in ((-0.004, -0.002), (0.004, -0.002), (0.004, 0.002), (-0.004, 0.002))]})
    return out


def camera_of(i, t):
    """Participant i's camera at time t (seconds): a small circle around its spot near the pier head."""
    lat0, lon0 = HARBOUR
    angle = 2 * math.pi * i / len(NAMES)
    spot = (lat0 + 0.0035 * math.sin(angle), lon0 + 0.007 * math.cos(angle))
    phase = t / 6 + i
    return {"center": {"latitude": spot[0] + 0.0006 * math.sin(phase), "longitude": spot[1] + 0.0012 * math.cos(phase)},
            "zoom": 14 + (i % 3) * 0.5}


def viewport_of(i):
    return {"width": 390, "height": 844} if i % 2 == 0 else {"width": 1024, "height": 768}


class BusySession:
    """The busy session on `url`, built and kept moving on a thread of its own."""

    def __init__(self, url, session):
        self.url = url
        self.session = session
        self.clients = []
        self.owner = None
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.error = None
        self.moves = 0
        self._stop = None
        self.thread = threading.Thread(target=self._main, daemon=True)

    def start(self, timeout=120):
        self.thread.start()
        if not self.ready.wait(timeout):
            raise AssertionError("the busy session was not built in time")
        if self.error:
            raise self.error
        return self

    def run(self, coro, timeout=30):
        """Runs `coro` on the session's loop (with its clients) and returns its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self):
        if self._stop:
            self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)

    def by_name(self, name):
        return self.clients[NAMES.index(name)]

    def _main(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._life())

    async def _life(self):
        self._stop = asyncio.Event()
        try:
            await self.build()
        except BaseException as e:  # noqa: BLE001 (reported to the test)
            self.error = e
            self.ready.set()
            return
        self.ready.set()
        mover = asyncio.create_task(self.move())
        await self._stop.wait()
        mover.cancel()
        for c in self.clients:
            await c.close()

    async def build(self):
        # The participants join (the first is the owner), each with a camera and viewport.
        for i, name in enumerate(NAMES):
            c = await Client.open(self.url, f"busy{i}", validate=False)
            await c.join(self.session, name, "owner" if i == 0 else "editor" if i < 12 else "viewer", color=COLORS[i])
            self.clients.append(c)
        self.owner = self.clients[0]
        # Drained as they come: nobody reads these clients' queues but their own requests.
        for c in self.clients:
            c.queue = _Drain(c.queue)
            c.log = collections.deque(maxlen=100)
        await self.owner.ok({"type": "session.configure", "settings": {"tint": TINT, "leaseTimeoutMs": 600000}})
        refs = [await self.owner.send({"type": "annotation.add", "annotation": a}, check=False) for a in annotations()]
        answer, _ = await self.owner.answer(refs[-1], timeout=60)
        assert answer["type"] == "ack", answer
        for i, c in enumerate(self.clients):
            await c.ok({"type": "camera.end", "camera": camera_of(i, 0), "viewport": viewport_of(i)})
        # Two drags in progress, and a third editor refused on the first.
        for c, ident in zip(self.clients[1:3], DRAGGED):
            await c.ok({"type": "drag", "id": ident, "state": "starting"})
            await c.ok({"type": "drag", "id": ident, "state": "dragging", "coordinate": self.dragged_to(ident, 0)})
        answer, _ = await self.clients[3].request({"type": "drag", "id": DRAGGED[0], "state": "starting"})
        assert answer["type"] == "error" and answer["code"] == "drag_conflict", answer
        # Eight selections.
        for c, ident in zip(self.clients[4:12], SELECTED):
            await c.ok({"type": "select", "id": ident})
        # The shared callout and the shared camera.
        await self.owner.ok({"type": "callout.show", "callout": {"title": "Pilot boarding", "detail": "at berth 1, 14:30",
                                                                  "anchor": {"annotation": CALLOUT_ON}}})
        await self.owner.ok({"type": "camera.lease.acquire"})
        await self.owner.ok({"type": "camera.end", "target": "shared", "camera": {"center": {"latitude": HARBOUR[0], "longitude": HARBOUR[1]}, "zoom": 14}})
        # Six locations, two of them coarse.
        for k, c in enumerate(self.clients[12:18]):
            coarse = k >= 4
            lat, lon = HARBOUR[0] + 0.004 * (k - 3), HARBOUR[1] - 0.01 + 0.006 * k
            await c.ok({"type": "location", "location": {"coordinate": {"latitude": lat, "longitude": lon},
                                                         "accuracy": 5000 if coarse else 25,
                                                         "authorization": "reduced" if coarse else "full"}})

    def dragged_to(self, ident, t):
        lat0, lon0 = HARBOUR
        k = DRAGGED.index(ident)
        return {"latitude": lat0 - 0.008 + 0.016 * k + 0.0008 * math.sin(t / 3), "longitude": lon0 + 0.02 * (1 - 2 * k) + 0.0008 * math.cos(t / 3)}

    async def move(self):
        """Cameras keep moving (changing frames), and the drags with them."""
        t = 0.0
        while True:
            await asyncio.sleep(MOVE_EVERY)
            t += MOVE_EVERY
            for i, c in enumerate(self.clients):
                await c.send({"type": "camera.changing", "camera": camera_of(i, t), "viewport": viewport_of(i)}, check=False)
            for c, ident in zip(self.clients[1:3], DRAGGED):
                await c.send({"type": "drag", "id": ident, "state": "dragging", "coordinate": self.dragged_to(ident, t)}, check=False)
            self.moves += 1


class _Drain(asyncio.Queue):
    """A client's queue that keeps only answers (acks, errors, welcomes): the rest of the
    busy session's traffic is dropped as it arrives."""

    def __init__(self, previous):
        super().__init__()
        while not previous.empty():
            self.put_nowait(previous.get_nowait())

    def put_nowait(self, item):
        if isinstance(item, dict) and item.get("type") not in ("ack", "error", "welcome"):
            return
        super().put_nowait(item)


if __name__ == "__main__":
    url, session = (sys.argv[1:3] + ["ws://127.0.0.1:8080/", "harbour"][len(sys.argv[1:3]):])[:2]
    busy = BusySession(url, session).start()
    print(f"session {session} on {url}: 300 annotations, 20 participants moving; Ctrl-C to stop")
    try:
        busy.thread.join()
    except KeyboardInterrupt:
        busy.stop()
