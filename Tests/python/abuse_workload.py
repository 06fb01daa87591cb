"""Well-behaved clients for test_abuse.py: an editor adding and retitling annotations one
at a time (each waiting for its ack), a watcher receiving the resulting events, and a
viewer doing ping round trips. Both actors are paced (50 edits/s, 20 pings/s), well under
the server's per-connection rate limit, and record their latencies per phase."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from meridian_client import Client, Closed

ATTACKS = Path(__file__).resolve().parent / "abuse_attacks.py"
EDIT_INTERVAL = 0.02
PING_INTERVAL = 0.05
ANSWER_TIMEOUT = 10.0


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


class Workload:
    def __init__(self, url, session):
        self.url, self.session = url, session
        self.expected = {}  # annotation id -> title of its last acknowledged change
        self.failures = []
        self.samples = {}  # phase -> {"ack": [...], "event": [...], "ping": [...]}
        self.pending_events = {}  # (id, title) -> future set when the watcher sees it
        self.seq_errors = []
        self.ops = 0

    async def start(self):
        self.editor = await Client.open(self.url, "editor", validate=False)
        await self.editor.join(self.session, "Editor", "owner")
        self.watcher = await Client.open(self.url, "watcher", validate=False)
        await self.watcher.join(self.session, "Watcher", "viewer")
        self.viewer = await Client.open(self.url, "viewer", validate=False)
        await self.viewer.join(self.session, "Viewer", "viewer")
        self.watch_task = asyncio.create_task(self._watch(self.watcher.welcome["seq"]))

    async def _watch(self, last):
        """Drains the watcher; checks discrete seq stays contiguous."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                m = await self.watcher.recv(timeout=None)
            except Closed as closed:
                self.failures.append(f"watcher disconnected: {closed}")
                return
            if m["type"] in ("annotation.added", "annotation.updated"):
                key = (m["annotation"]["id"], m["annotation"].get("title"))
                future = self.pending_events.get(key)
                if future is not None and not future.done():
                    future.set_result(loop.time())
            if "seq" in m and m["type"] not in ("ack", "error", "welcome", "live"):
                expected = last if m.get("transient") else last + 1
                if m["seq"] != expected and len(self.seq_errors) < 5:
                    self.seq_errors.append(f"{m['type']} seq {m['seq']}, expected {expected}")
                last = max(last, m["seq"])

    def _phase(self, phase):
        return self.samples.setdefault(phase, {"ack": [], "event": [], "ping": []})

    async def edit(self, phase):
        """One acknowledged change: add an annotation, or retitle the one just added."""
        loop = asyncio.get_running_loop()
        k = self.ops
        self.ops += 1
        aid, title = f"wb-{k // 2}", f"t{k}"
        if k % 2 == 0:
            message = {"type": "annotation.add", "annotation": {
                "type": "point", "id": aid, "title": title, "coordinate": {"latitude": (k % 170) - 85, "longitude": 10}}}
        else:
            message = {"type": "annotation.update", "id": aid, "changes": {"title": title}}
        seen = loop.create_future()
        self.pending_events[(aid, title)] = seen
        started = loop.time()
        ref = await self.editor.send(message, check=False)
        try:
            answer, _ = await self.editor.answer(ref, ANSWER_TIMEOUT)
        except (Closed, TimeoutError) as e:
            raise AssertionError(f"editor: {message['type']} {aid} got no answer: {e!r}")
        acked = loop.time()
        if answer["type"] != "ack":
            raise AssertionError(f"editor: {message['type']} {aid} refused: {answer}")
        self.expected[aid] = title
        try:
            received = await asyncio.wait_for(seen, ANSWER_TIMEOUT)
        except TimeoutError:
            raise AssertionError(f"watcher never received the event for {aid} {title}")
        del self.pending_events[(aid, title)]
        samples = self._phase(phase)
        samples["ack"].append(acked - started)
        samples["event"].append(received - started)

    async def ping(self, phase):
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            answer, _ = await self.viewer.request({"type": "ping"}, ANSWER_TIMEOUT)
        except (Closed, TimeoutError) as e:
            raise AssertionError(f"viewer: ping got no answer: {e!r}")
        if answer["type"] != "ack":
            raise AssertionError(f"viewer: ping refused: {answer}")
        self._phase(phase)["ping"].append(loop.time() - started)

    async def _paced(self, action, interval, phase, done):
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not done():
            await action(phase)
            next_at = max(next_at + interval, loop.time())
            await asyncio.sleep(next_at - loop.time())  # pacing, not synchronisation

    async def run(self, phase, done):
        """Edits and pings until `done()`; records a failure instead of raising."""
        try:
            await asyncio.gather(self._paced(self.edit, EDIT_INTERVAL, phase, done),
                                 self._paced(self.ping, PING_INTERVAL, phase, done))
        except AssertionError as e:
            self.failures.append(f"{phase}: {e}")

    async def baseline(self, edits=100):
        start = self.ops
        await self.run("baseline", lambda: self.ops - start >= edits)

    async def during(self, attacks, min_edits=50):
        """Runs the attacks (name -> args) in their own processes while the clients work;
        returns name -> the attack's JSON report."""
        procs = {name: await asyncio.create_subprocess_exec(
            sys.executable, str(ATTACKS), name, json.dumps(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for name, args in attacks.items()}
        waits = {name: asyncio.create_task(p.communicate()) for name, p in procs.items()}
        start = self.ops
        try:
            await self.run("attack", lambda: all(w.done() for w in waits.values()) and self.ops - start >= min_edits)
            outputs = await asyncio.wait_for(asyncio.gather(*waits.values()), 120)
        finally:
            for p in procs.values():
                if p.returncode is None:
                    p.kill()
        reports = {}
        for (name, p), (out, err) in zip(procs.items(), outputs):
            lines = out.decode().strip().splitlines()
            assert p.returncode == 0 and lines, f"attack {name} failed ({p.returncode}):\n{err.decode()[-3000:]}"
            reports[name] = json.loads(lines[-1])
        return reports

    async def still_connected(self):
        """The three clients were never disconnected and still get answers."""
        for c in (self.editor, self.watcher, self.viewer):
            assert c.close_code is None, f"{c.name} was disconnected with {c.close_code}"
        assert not self.watch_task.done(), "the watcher stopped reading"
        await self.viewer.ping()
        await self.edit("after")  # acknowledged, and its event reaches the watcher

    def figures(self, phase):
        s = self.samples.get(phase, {"ack": [], "event": [], "ping": []})
        ms = lambda v: None if v is None else round(v * 1000, 2)  # noqa: E731
        return {"edits": len(s["ack"]), "pings": len(s["ping"]),
                "ack_p99_ms": ms(percentile(s["ack"], 99)), "event_p99_ms": ms(percentile(s["event"], 99)),
                "ping_p99_ms": ms(percentile(s["ping"], 99)), "ack_p50_ms": ms(percentile(s["ack"], 50))}

    async def close(self):
        self.watch_task.cancel()
        for c in (self.editor, self.watcher, self.viewer):
            await c.close()
