"""Attacks on a running Meridian server, for test_abuse.py.

Each attack runs in its own process (`python3 abuse_attacks.py NAME JSON-ARGS`) so that
it does not share an event loop, or a core's worth of Python, with the well-behaved
clients being measured. It prints one JSON object on its last stdout line: what it
observed (statuses, close codes, answers). The test makes the assertions.
"""

import asyncio
import base64
import json
import os
import selectors
import socket
import sys
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

SUBPROTOCOL = "meridian.v1"
DEADLINE = 30.0


def now():
    return time.monotonic()


async def open_ws(a, source, **kwargs):
    kwargs.setdefault("max_size", 64 * 1024 * 1024)
    kwargs.setdefault("ping_interval", None)
    kwargs.setdefault("compression", None)
    return await connect(f"ws://{a['host']}:{a['port']}/", subprotocols=[SUBPROTOCOL], proxy=None,
                         local_addr=(source, 0), open_timeout=20, **kwargs)


def close_code(ws):
    rcvd = ws.protocol.close_rcvd
    return rcvd.code if rcvd is not None else 1006


async def read_until_closed(ws, timeout=DEADLINE):
    """Reads every message until the connection ends; returns (close code, messages)."""
    seen = []
    try:
        async with asyncio.timeout(timeout):
            async for raw in ws:
                seen.append(json.loads(raw))
    except ConnectionClosed:
        pass
    except TimeoutError:
        return None, seen
    return close_code(ws), seen


async def answer(ws, ref, timeout=DEADLINE):
    """Reads until the answer for `ref`; returns it (None if the connection closed first)."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                m = json.loads(await ws.recv())
                if m.get("type") in ("ack", "error", "welcome") and m.get("ref") == ref:
                    return m
    except ConnectionClosed:
        return None


async def next_answer(ws, timeout=DEADLINE):
    """The next ack or error, skipping session events."""
    async with asyncio.timeout(timeout):
        while True:
            m = json.loads(await ws.recv())
            if m.get("type") in ("ack", "error"):
                return m


async def request(ws, message, timeout=DEADLINE):
    await ws.send(json.dumps(message))
    return await answer(ws, message["ref"], timeout)


# ---- 1. connection flood

async def connection_flood(a):
    """Phases of WebSocket upgrades, each phase all at once, from given source addresses,
    while raw TCP connections that never send a byte sit open beside them. Accepted
    WebSockets idle until the end, then half close cleanly and half are dropped."""
    result = {"accepted": {}, "refused": {}, "errors": [], "raw": {"dropped": 0, "answered": 0, "open": 0, "failed": 0},
              "raw_elapsed": []}
    accepted = []

    async def upgrade(source):
        try:
            ws = await open_ws(a, source)
        except InvalidStatus as refused:
            status = str(refused.response.status_code)
            counts = result["refused"].setdefault(source, {})
            counts[status] = counts.get(status, 0) + 1
            return
        except Exception as e:  # noqa: BLE001 - reported to the test
            result["errors"].append(f"{source}: {type(e).__name__}: {e}")
            return
        accepted.append(ws)
        result["accepted"][source] = result["accepted"].get(source, 0) + 1

    async def raw(source):
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(a["host"], a["port"], local_addr=(source, 0)), 20)
        except Exception:  # noqa: BLE001
            result["raw"]["failed"] += 1
            return
        started = now()
        try:
            data = await asyncio.wait_for(reader.read(1024), a["handshake_timeout"] + 15)
            key = "answered" if data else "dropped"
        except (ConnectionResetError, BrokenPipeError):
            key = "dropped"
        except TimeoutError:
            key = "open"
        result["raw"][key] += 1
        if key == "dropped":
            result["raw_elapsed"].append(now() - started)
        writer.transport.abort()

    raw_tasks = [asyncio.create_task(raw(a["raw_source"])) for _ in range(a["raw"])]
    for phase in a["phases"]:
        await asyncio.gather(*(upgrade(source) for source, count in phase for _ in range(count)))
    result["raw_in_flight_at_flood_end"] = sum(1 for t in raw_tasks if not t.done())
    # The accepted ones are still open: each answers a ping.
    alive = 0
    for ws in accepted[:50]:
        reply = await request(ws, {"type": "ping", "ref": "idle"})
        alive += reply is not None and reply.get("type") == "ack"
    result["idle_sampled"], result["idle_alive"] = min(50, len(accepted)), alive
    await asyncio.gather(*raw_tasks)
    for i, ws in enumerate(accepted):
        if i % 2:
            ws.transport.abort()
    await asyncio.gather(*(ws.close() for i, ws in enumerate(accepted) if not i % 2), return_exceptions=True)
    return result


# ---- 2. message flood from one joined client

def flood_message(i, session_pin):
    kind = i % 3
    if kind == 0:
        return {"type": "ping", "ref": f"b{i}"}
    if kind == 1:
        return {"type": "annotation.update", "ref": f"b{i}", "id": session_pin, "changes": {"title": f"flood {i}"}}
    return {"type": "camera.changing", "ref": f"b{i}", "camera": {"center": {"latitude": i % 80, "longitude": 0}, "zoom": 3}}


async def message_flood(a):
    result = {"phase_a": {}, "phase_b": {}}
    ws = await open_ws(a, a["source"])
    welcome = await request(ws, {"type": "join", "ref": "j", "session": a["session"], "name": "Flooder", "role": "editor"})
    assert welcome["type"] == "welcome", welcome
    pin = "flood-pin"
    added = await request(ws, {"type": "annotation.add", "ref": "add", "annotation": {
        "type": "point", "id": pin, "coordinate": {"latitude": 1, "longitude": 1}}})
    assert added["type"] == "ack", added

    answers = {}
    duplicates = []
    refused = asyncio.Event()
    answered = asyncio.Event()

    def note(m):
        if m.get("type") in ("ack", "error") and isinstance(m.get("ref"), str) and m["ref"][:1] in "pcu":
            if m["ref"] in answers:
                duplicates.append(m)
            answers[m["ref"]] = m
            answered.set()
            if m.get("code") == "rate_limited":
                refused.set()

    async def reader():
        async for raw in ws:
            note(json.loads(raw))

    read_task = asyncio.create_task(reader())
    # Phase A: pings as fast as answers allow (50 in flight) until the first refusal,
    # then a burst of camera.changing (transient: waits, older ones conflated) and
    # annotation.update (refused while transient requests wait). Under 100 refusals.
    sent = []
    i = 0
    async with asyncio.timeout(DEADLINE):
        while not refused.is_set():
            while len(sent) - len(answers) < 50 and not refused.is_set():
                sent.append(f"p{i}")
                await ws.send(json.dumps({"type": "ping", "ref": f"p{i}"}))
                i += 1
            await asyncio.sleep(0)
            if len(sent) - len(answers) >= 50:
                answered.clear()
                await answered.wait()
    cameras = [f"c{k}" for k in range(20)]
    updates = [f"u{k}" for k in range(10)]
    for k, ref in enumerate(cameras):
        await ws.send(json.dumps({"type": "camera.changing", "ref": ref,
                                  "camera": {"center": {"latitude": k, "longitude": k}, "zoom": 4}}))
    for ref in updates:
        await ws.send(json.dumps({"type": "annotation.update", "ref": ref, "id": pin, "changes": {"title": ref}}))
    sent += cameras + updates
    async with asyncio.timeout(DEADLINE):
        while not all(ref in answers for ref in sent):
            answered.clear()
            await answered.wait()
    result["phase_a"] = {
        "sent": len(sent), "answered": len(answers), "duplicates": len(duplicates),
        "rate_limited": [answers[r] for r in sent if answers[r].get("code") == "rate_limited"][:5],
        "rate_limited_count": sum(1 for r in sent if answers[r].get("code") == "rate_limited"),
        "other_errors": [answers[r] for r in sent if answers[r]["type"] == "error" and answers[r].get("code") != "rate_limited"][:5],
        "camera_answers": [answers[r] for r in cameras],
        "connected_after": read_task.done() is False,
    }
    # Phase B: thousands of mixed requests, ignoring every refusal.
    sent_b = 0
    try:
        for k in range(a["flood"]):
            await ws.send(json.dumps(flood_message(k, pin)))
            sent_b += 1
    except ConnectionClosed:
        pass
    try:
        await asyncio.wait_for(read_task, 15)
        code = close_code(ws)
    except ConnectionClosed:
        code = close_code(ws)
    except TimeoutError:
        code = None  # still open 15 s after thousands of refusals
        read_task.cancel()
    result["phase_b"] = {"sent": sent_b, "close_code": code}
    return result


# ---- 3. slowloris

async def slowloris(a):
    """Connections sending part of an HTTP request, and connections dribbling an
    endless header a byte at a time. Each must be closed with no HTTP answer."""
    result = {"dropped": 0, "answered": [], "open": 0, "elapsed": []}
    partials = [b"", b"GET / HTTP/1.1\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nUpgr",
                b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                b"Sec-WebSocket-Protocol: meridian.v1\r\n"]

    async def one(opening, drip):
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(a["host"], a["port"], local_addr=(a["source"], 0)), 20)
        started = now()
        writer.write(opening)

        async def dribble():
            try:
                while True:
                    await asyncio.sleep(a["drip_interval"])
                    writer.write(b"a")
                    await writer.drain()
            except (ConnectionError, RuntimeError):
                pass

        dribbler = asyncio.create_task(dribble()) if drip else None
        try:
            data = await asyncio.wait_for(reader.read(1024), a["handshake_timeout"] + 15)
            if data:
                result["answered"].append(data[:80].decode(errors="replace"))
            else:
                result["dropped"] += 1
                result["elapsed"].append(now() - started)
        except (ConnectionResetError, BrokenPipeError):
            result["dropped"] += 1
            result["elapsed"].append(now() - started)
        except TimeoutError:
            result["open"] += 1
        if dribbler:
            dribbler.cancel()
        writer.transport.abort()

    tasks = [one(partials[i % len(partials)], False) for i in range(a["partial"])]
    tasks += [one(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", True) for _ in range(a["drip"])]
    await asyncio.gather(*tasks)
    return result


# ---- 4. oversized and fragmented frames

def padded_ping(ref, size):
    """A valid `ping` of exactly `size` bytes: JSON whitespace before the closing brace."""
    head = json.dumps({"type": "ping", "ref": ref})[:-1]
    return head + " " * (size - len(head) - 1) + "}"


async def frames(a):
    limit = a["limit"]
    result = {}

    async def outcome(send, closes=True):
        """Runs `send` on a new connection; returns how the server closed it (None: left open)."""
        ws = await open_ws(a, a["source"])
        try:
            await send(ws)
        except ConnectionClosed:
            pass
        if not closes:
            code = None if ws.protocol.close_rcvd is None else close_code(ws)
            await ws.close()
            return code, []
        return await read_until_closed(ws, timeout=10)

    async def single(ws):
        await ws.send(padded_ping("big", 2 * limit))

    async def at_limit(ws):
        await ws.send(padded_ping("exact", limit))
        reply = await answer(ws, "exact")
        result["at_limit_answer"] = reply
        await ws.send(padded_ping("over", limit + 1))

    async def fragmented_ok(ws):
        text = padded_ping("frag", limit - 1000)
        pieces = [text[i:i + 64] for i in range(0, len(text), 64)]
        await ws.send(iter(pieces))
        result["fragmented_ok_pieces"] = len(pieces)
        result["fragmented_ok_answer"] = await answer(ws, "frag")
        result["fragmented_ok_ping"] = await request(ws, {"type": "ping", "ref": "after"})
        await ws.send(iter(['{"type":"pi', 'ng","ref":"tiny"}']))
        result["fragmented_tiny_answer"] = await answer(ws, "tiny")

    async def fragmented_over(ws):
        text = padded_ping("fragbig", 2 * limit)
        await ws.send(iter(text[i:i + 128] for i in range(0, len(text), 128)))

    result["single_over"], _ = await outcome(single)
    result["one_over_limit"], _ = await outcome(at_limit)
    result["fragmented_ok_close"], _ = await outcome(fragmented_ok, closes=False)
    result["fragmented_over"], _ = await outcome(fragmented_over)
    return result


# ---- 5. deeply nested JSON

async def nesting(a):
    payloads = {
        "arrays_100k": "[" * 100_000,
        "objects_10k": '{"a":' * 10_000 + "1" + "}" * 10_000,
        "balanced_arrays_50k": "[" * 50_000 + "]" * 50_000,
        "ping_with_deep_field": '{"type":"ping","ref":"deep","x":' + "[" * 40_000 + "]" * 40_000 + "}",
        "deep_metadata": json.dumps({"type": "annotation.add", "ref": "meta", "annotation": {
            "type": "point", "id": "deep", "coordinate": {"latitude": 0, "longitude": 0}}})[:-2]
            + ',"metadata":' + '{"a":' * 5_000 + "1" + "}" * 5_000 + "}}",
    }
    ws = await open_ws(a, a["source"])
    welcome = await request(ws, {"type": "join", "ref": "j", "session": a["session"], "name": "Nester", "role": "editor"})
    assert welcome is not None and welcome["type"] == "welcome", (welcome, close_code(ws))
    result = {"answers": {}, "pings": [], "sizes": {k: len(v) for k, v in payloads.items()}}
    for round_ in range(a["rounds"]):
        for name, text in payloads.items():
            assert len(text) <= a["limit"], (name, len(text))
            started = now()
            try:
                await ws.send(text)
                reply = await next_answer(ws)
            except ConnectionClosed:
                result["closed"] = close_code(ws)
                return result
            if round_ == 0:
                result["answers"][name] = {k: reply.get(k) for k in ("type", "ref", "code", "field")}
                result["answers"][name]["seconds"] = round(now() - started, 3)
            result["pings"].append(await request(ws, {"type": "ping", "ref": f"alive-{round_}-{name}"}))
    await ws.close()
    return result


# ---- 6. invalid UTF-8

async def utf8(a):
    bad = {
        "lone_ff": b'{"type":"ping","ref":"\xff\xfe"}',
        "overlong_slash": b'{"type":"ping","ref":"\xc0\xaf"}',
        "surrogate": b'{"type":"ping","ref":"\xed\xa0\x80"}',
        "truncated_euro": b'{"type":"ping","ref":"x"}\xe2\x82',
        "above_u10ffff": b'{"type":"ping","ref":"\xf4\x90\x80\x80"}',
    }
    result = {"closes": {}}
    for name, payload in bad.items():
        ws = await open_ws(a, a["source"])
        ws.protocol.send_text(payload)
        ws.send_data()
        code, _ = await read_until_closed(ws, timeout=10)
        result["closes"][name] = code
    # A fragmented text message whose invalid byte is in a later fragment.
    ws = await open_ws(a, a["source"])
    ws.protocol.send_text(b'{"type":"ping",', fin=False)
    ws.protocol.send_continuation(b'"ref":"\xc3\x28"}', fin=True)
    ws.send_data()
    result["closes"]["fragmented"], _ = await read_until_closed(ws, timeout=10)
    # Valid multi-byte UTF-8 is fine, and echoed as sent.
    ws = await open_ws(a, a["source"])
    result["valid_answer"] = await request(ws, {"type": "ping", "ref": "é😀ß"})
    await ws.close()
    return result


# ---- 7. a client that never reads, while the session is busy

async def slow_consumer(a):
    result = {}

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((a["source"], 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (a["host"], a["port"]))
    slow = await connect(f"ws://{a['host']}:{a['port']}/", sock=sock, subprotocols=[SUBPROTOCOL], proxy=None,
                         max_queue=1, compression=None, max_size=64 * 1024 * 1024, ping_interval=None)
    welcome = await request(slow, {"type": "join", "ref": "j", "session": a["session"], "name": "Slow", "role": "viewer"})
    slow_pid = welcome["participant"]

    # A busy editor: updates with a large metadata blob, paced under the rate limit.
    busy = await open_ws(a, a["source"])
    welcome = await request(busy, {"type": "join", "ref": "j", "session": a["session"], "name": "Busy", "role": "editor"})
    assert welcome["type"] == "welcome", welcome
    added = await request(busy, {"type": "annotation.add", "ref": "add", "annotation": {
        "type": "point", "id": "busy-pin", "coordinate": {"latitude": 2, "longitude": 2}}})
    assert added["type"] == "ack", added
    blob = "x" * a["blob"]
    in_flight = set()
    counts = {"sent": 0, "acked": 0}
    left = asyncio.get_running_loop().create_future()

    async def send_updates():
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not left.done() and counts["sent"] < a["max_updates"]:
            ref = f"busy-{counts['sent']}"
            in_flight.add(ref)
            await busy.send(json.dumps({"type": "annotation.update", "ref": ref, "id": "busy-pin",
                                        "changes": {"metadata": {"blob": blob, "i": counts["sent"]}}}))
            counts["sent"] += 1
            next_at += 1 / a["rate"]
            await asyncio.sleep(max(0, next_at - loop.time()))  # pacing under the server's rate limit

    async def read_answers():
        while not (sender.done() and not in_flight):
            m = json.loads(await busy.recv())
            if m.get("type") == "participant.left" and m.get("participant") == slow_pid and not left.done():
                left.set_result((m, now()))
            elif m.get("ref") in in_flight:
                in_flight.discard(m["ref"])
                if m["type"] == "ack":
                    counts["acked"] += 1
                else:
                    result.setdefault("busy_errors", []).append(m)

    started = now()
    sender = asyncio.create_task(send_updates())
    async with asyncio.timeout(60):
        await read_answers()
    message, at = left.result() if left.done() else (None, now())
    result.update(updates_sent=counts["sent"], updates_acked=counts["acked"], left=message,
                  seconds_to_close=round(at - started, 2), bytes_offered=counts["sent"] * a["blob"])
    # Now the slow client reads again: its connection ends with 4008.
    if message is None:
        slow.transport.abort()
    code, seen = await read_until_closed(slow, timeout=40)
    result["slow_close"], result["slow_read"] = code, len(seen)
    await busy.close()
    return result


# ---- 8. a crowd flooding one session

CROWD_MASK = b"\x5a\x17\xc3\x8e"
CROWD_CLOSES = {b"too many invalid requests": "4009", b"slow consumer": "4008"}


def masked_text(payload):
    """One masked text frame (what a client must send), with a fixed key: the crowd sends
    the same bytes again and again, so they are built once."""
    n = len(payload)
    if n < 126:
        head = bytes([0x81, 0x80 | n])
    elif n < 1 << 16:
        head = bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x81, 0x80 | 127]) + n.to_bytes(8, "big")
    return head + CROWD_MASK + bytes(b ^ CROWD_MASK[i & 3] for i, b in enumerate(payload))


def crowd_request(i):
    """The crowd's requests are answered to their sender only (a `ping`'s ack; an
    `annotation.update` of an annotation that does not exist, refused with not_found):
    what the session's other members then see is how the server shares its time
    between connections, not a queue of events of their own."""
    if i % 2 == 0:
        return {"type": "ping", "ref": f"f{i}"}
    return {"type": "annotation.update", "ref": f"f{i}", "id": "no-such-pin", "changes": {"title": f"flood {i}"}}


class _Flooder:
    __slots__ = ("sock", "index", "state", "inbox", "outbox", "tail", "writing")

    def __init__(self, sock, index):
        self.sock, self.index = sock, index
        self.state, self.inbox, self.outbox, self.tail = "upgrade", b"", b"", b""
        self.writing = True


def _crowd_flood(a):
    """`clients` raw WebSocket connections (spread over the `sources` addresses) join
    `session` as editors, then each sends `rate` requests a second for `seconds`, in a
    burst every `tick` seconds, reading and dropping what comes back. A connection the
    server closes (4009 for ignoring rate_limited refusals, 4008) is replaced by a new
    one until the end. Prints `ready` once every client has joined (or after `ramp`
    seconds), and goes on for `seconds` from then. Bounded: at most `clients`
    connections at once, only to `host`:`port`."""
    host, port, sources = a["host"], a["port"], a["sources"]
    clients, rate, tick = a["clients"], a["rate"], a.get("tick", 0.05)
    started = now()
    ramp_deadline = started + a.get("ramp", 30)
    deadline = ramp_deadline + a["seconds"]  # moved to `seconds` after ready
    selector = selectors.DefaultSelector()
    result = {"clients": clients, "rate": rate, "joined": 0, "requests": 0, "bytes_in": 0, "closes": {},
              "replaced": 0, "refused_upgrades": {}, "errors": [], "ready_seconds": None}
    frames = [masked_text(json.dumps(crowd_request(i)).encode()) for i in range(64)]
    reopen = []  # (when, index)
    flooding = set()
    in_handshake = 0
    max_in_handshake = a.get("max_in_handshake", 200)
    waiting = list(range(clients))

    def open_one(index):
        nonlocal in_handshake
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.bind((sources[index % len(sources)], 0))
        try:
            sock.connect((host, port))
        except BlockingIOError:
            pass
        f = _Flooder(sock, index)
        key = base64.b64encode(os.urandom(16)).decode()
        f.outbox = (f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                    f"Sec-WebSocket-Protocol: {SUBPROTOCOL}\r\n\r\n").encode()
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, f)
        in_handshake += 1

    def drop(f, why):
        nonlocal in_handshake
        if f.state == "closed":
            return
        if f.state in ("upgrade", "join"):
            in_handshake -= 1
        f.state = "closed"
        flooding.discard(f)
        result["closes"][why] = result["closes"].get(why, 0) + 1
        try:
            selector.unregister(f.sock)
        except (KeyError, ValueError):
            pass
        f.sock.close()
        if now() < deadline:
            result["replaced"] += 1
            reopen.append((now() + 0.2, f.index))

    def send(f, data):
        f.outbox += data
        try:
            sent = f.sock.send(f.outbox)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            drop(f, "send failed")
            return
        f.outbox = f.outbox[sent:]
        if f.writing != bool(f.outbox):
            f.writing = bool(f.outbox)
            selector.modify(f.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if f.writing else 0), f)

    def readable(f):
        nonlocal in_handshake
        try:
            data = f.sock.recv(262144)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            drop(f, "dropped")
            return
        result["bytes_in"] += len(data)
        if f.state == "flood":
            seen = f.tail + data
            for reason, code in CROWD_CLOSES.items():
                if reason in seen:
                    drop(f, code)
                    return
            f.tail = data[-32:]
            return
        f.inbox += data
        if f.state == "upgrade":
            if b"\r\n\r\n" not in f.inbox:
                return
            head, f.inbox = f.inbox.split(b"\r\n\r\n", 1)
            status = head.split(b" ", 2)[1].decode()
            if status != "101":
                result["refused_upgrades"][status] = result["refused_upgrades"].get(status, 0) + 1
                drop(f, f"upgrade {status}")
                return
            f.state = "join"
            send(f, masked_text(json.dumps({"type": "join", "ref": "j", "session": a["session"],
                                            "name": f"Flooder {f.index}", "role": "editor"}).encode()))
        if f.state == "join":
            if b'"type":"welcome"' in f.inbox:
                f.state, f.inbox = "flood", b""
                in_handshake -= 1
                flooding.add(f)
                result["joined"] += 1
            elif b'"type":"error"' in f.inbox:
                drop(f, "join refused")

    next_tick = now()
    carry = 0.0
    k = 0
    ready = False
    while True:
        t = now()
        if t >= deadline:
            break
        while waiting and in_handshake < max_in_handshake:
            open_one(waiting.pop())
        while reopen and reopen[0][0] <= t and in_handshake < max_in_handshake:
            open_one(reopen.pop(0)[1])
        if not ready and (len(flooding) >= clients or t >= ramp_deadline):
            ready = True
            deadline = t + a["seconds"]
            result["ready_seconds"] = round(t - started, 2)
            result["flooding_at_ready"] = len(flooding)
            print("ready", flush=True)
        if t >= next_tick:
            next_tick += tick
            if next_tick < t:
                next_tick = t + tick  # behind: skip the missed bursts rather than catch up
            carry += rate * tick
            count, carry = int(carry), carry - int(carry)
            for f in list(flooding):
                if f.outbox:
                    continue  # its socket is full: the server is not reading it
                batch = b"".join(frames[(k + j) % len(frames)] for j in range(count))
                k += count
                result["requests"] += count
                send(f, batch)
        for key, events in selector.select(timeout=max(0.0, min(next_tick, deadline) - now())):
            f = key.data
            if f.state == "closed":
                continue
            if events & selectors.EVENT_WRITE:
                if f.state == "upgrade" and f.outbox and f.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    drop(f, "connect failed")
                    continue
                send(f, b"")
            if f.state != "closed" and events & selectors.EVENT_READ:
                readable(f)
    result["flooding_at_end"] = len(flooding)
    for key in list(selector.get_map().values()):
        key.fileobj.close()
    return result


async def crowd_flood(a):
    return _crowd_flood(a)


# ---- 9. oversized and fragmented frames, kept up for a while (for the benchmark)

async def oversize(a):
    """`concurrency` connections at a time, each sending one message of twice the size limit
    in a single frame (closed with 1009), then replaced, for `seconds`."""
    result = {"closes": {}, "messages": 0}
    deadline = now() + a["seconds"]
    text = padded_ping("big", 2 * a["limit"])

    async def worker():
        while now() < deadline:
            ws = await open_ws(a, a["source"])
            try:
                await ws.send(text)
            except ConnectionClosed:
                pass
            result["messages"] += 1
            code, _ = await read_until_closed(ws, timeout=10)
            result["closes"][str(code)] = result["closes"].get(str(code), 0) + 1

    await asyncio.gather(*(worker() for _ in range(a["concurrency"])))
    return result


async def fragmented(a):
    """`concurrency` connections at a time, each sending messages just under the size limit
    in 64-byte fragments (each answered), and every `over_every`th one twice the limit in
    128-byte fragments (closed with 1009, then replaced), for `seconds`."""
    result = {"closes": {}, "answered": 0, "messages": 0}
    deadline = now() + a["seconds"]
    text = padded_ping("frag", a["limit"] - 1000)
    pieces = [text[i:i + 64] for i in range(0, len(text), 64)]
    over = padded_ping("fragbig", 2 * a["limit"])
    over_pieces = [over[i:i + 128] for i in range(0, len(over), 128)]

    async def worker():
        while now() < deadline:
            ws = await open_ws(a, a["source"])
            try:
                for _ in range(a["over_every"] - 1):
                    await ws.send(iter(pieces))
                    result["messages"] += 1
                    if (await answer(ws, "frag")) is not None:
                        result["answered"] += 1
                await ws.send(iter(over_pieces))
                result["messages"] += 1
            except ConnectionClosed:
                pass
            code, _ = await read_until_closed(ws, timeout=10)
            result["closes"][str(code)] = result["closes"].get(str(code), 0) + 1

    await asyncio.gather(*(worker() for _ in range(a["concurrency"])))
    return result


async def repeated(a):
    """Runs the attack `attack` with `args` again and again for `seconds` (for the
    benchmark: a one-shot attack kept up through a measurement window)."""
    deadline = now() + a["seconds"]
    rounds, last = 0, None
    while now() < deadline:
        last = await ATTACKS[a["attack"]](a["args"])
        rounds += 1
    return {"rounds": rounds, "last": last}


ATTACKS = {f.__name__: f for f in (connection_flood, message_flood, slowloris, frames, nesting, utf8, slow_consumer, crowd_flood,
                                   oversize, fragmented, repeated)}


def main():
    name, args = sys.argv[1], json.loads(sys.argv[2])
    if name != "crowd_flood":
        print("ready", flush=True)  # the crowd says so once it has joined
    started = now()
    result = asyncio.run(ATTACKS[name](args))
    result["attack_seconds"] = round(now() - started, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
