"""A small Protocol v1 client for tests: schema-checked messages, a background
reader per connection, answer matching by ref, and the golden pattern matcher."""

import asyncio
import contextlib
import itertools
import json
import socket
import time
from pathlib import Path

import jsonschema
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "Protocol"
SCHEMA = json.loads((PROTOCOL / "schema" / "meridian.v1.schema.json").read_text())
SUBPROTOCOL = "meridian.v1"
TIMEOUT = 10.0


def _validator(definition):
    schema = {k: v for k, v in SCHEMA.items() if k != "oneOf"}
    schema["$ref"] = f"#/$defs/{definition}"
    return jsonschema.Draft202012Validator(schema)


def _by_type(definition):
    """A validator for each `type` of the `oneOf` of `definition`: the alternatives are told apart
    by their `type` constant, so a message matches the `oneOf` exactly when it matches the
    alternative of its own type, which is all a check needs to look at (the whole `oneOf` tries
    all 31 server messages on every message, and the floods of the slow-consumer and load tests
    spent most of their time there). A type no alternative names, or two name, is left to the
    whole definition."""
    named = {}
    for alternative in SCHEMA["$defs"][definition]["oneOf"]:
        name = alternative["$ref"].rsplit("/", 1)[-1]
        const = SCHEMA["$defs"][name].get("properties", {}).get("type", {}).get("const")
        named.setdefault(const, []).append(name)
    return {const: _validator(names[0]) for const, names in named.items() if const is not None and len(names) == 1}


CLIENT_VALIDATOR = _validator("clientMessage")
SERVER_VALIDATOR = _validator("serverMessage")
CLIENT_VALIDATORS = _by_type("clientMessage")
SERVER_VALIDATORS = _by_type("serverMessage")


def _validator_of(message, by_type, whole):
    kind = message.get("type") if isinstance(message, dict) else None
    return by_type.get(kind, whole) if isinstance(kind, str) else whole


def check_client_message(message):
    validator = _validator_of(message, CLIENT_VALIDATORS, CLIENT_VALIDATOR)
    errors = sorted(validator.iter_errors(message), key=lambda e: list(e.path))
    assert not errors, f"client message does not match the schema: {message}\n" + "\n".join(e.message for e in errors[:5])


def check_server_message(message):
    validator = _validator_of(message, SERVER_VALIDATORS, SERVER_VALIDATOR)
    errors = sorted(validator.iter_errors(message), key=lambda e: list(e.path))
    assert not errors, f"server message does not match the schema: {message}\n" + "\n".join(e.message for e in errors[:5])


def run(coro, timeout=120):
    """Runs one test coroutine with an overall deadline. Tasks it leaves behind are cancelled and
    given 10 s to end: one that ignores its cancellation (Python 3.11's wait_for can swallow one)
    fails the test in bounded time rather than hanging the run."""
    async def guarded():
        return await asyncio.wait_for(coro, timeout)
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(guarded())
    finally:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.wait(left, timeout=10))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


class Closed(Exception):
    """The connection closed while a message was expected."""

    def __init__(self, code, reason):
        super().__init__(f"connection closed with code {code} ({reason!r})")
        self.code = code
        self.reason = reason


class Client:
    """One connection. Every received message is schema-checked, appended to
    `log`, and queued for `recv` in arrival order."""

    _refs = itertools.count(1)

    def __init__(self, ws, name, reader=True, validate=True):
        self.validate = validate
        self.ws = ws
        self.name = name
        self.log = []
        self.queue = asyncio.Queue()
        self.participant = None
        self.welcome = None
        self.close_code = None
        self.reader = asyncio.create_task(self._read()) if reader else None

    @classmethod
    async def open(cls, url, name="client", reader=True, validate=True, **kwargs):
        kwargs.setdefault("subprotocols", [SUBPROTOCOL])
        kwargs.setdefault("max_size", 64 * 1024 * 1024)
        kwargs.setdefault("proxy", None)
        ws = await asyncio.wait_for(connect(url, **kwargs), TIMEOUT)
        assert ws.subprotocol == SUBPROTOCOL
        return cls(ws, name, reader, validate)

    @classmethod
    async def open_slow(cls, host, port, name="slow", rcvbuf=4096):
        """A connection that stops reading as soon as its tiny buffers fill:
        no background reader, a 1-frame websockets queue and a small SO_RCVBUF."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (host, port)), TIMEOUT)
        ws = await asyncio.wait_for(connect(f"ws://{host}:{port}/", sock=sock, subprotocols=[SUBPROTOCOL], proxy=None,
                                            max_queue=1, compression=None, max_size=64 * 1024 * 1024,
                                            # Its own keepalive would give up on the stalled stream first.
                                            ping_interval=None), TIMEOUT)
        return cls(ws, name, reader=False)

    async def _read(self):
        try:
            async for raw in self.ws:
                try:
                    self.queue.put_nowait(self._accept(raw))
                except AssertionError as e:
                    self.queue.put_nowait(e)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self._code()
            await self.queue.put(None)

    def _code(self):
        rcvd = self.ws.protocol.close_rcvd
        return rcvd.code if rcvd is not None else 1006

    def _reason(self):
        rcvd = self.ws.protocol.close_rcvd
        return rcvd.reason if rcvd is not None else ""

    def _accept(self, raw):
        assert isinstance(raw, str), f"{self.name}: server sent a binary frame"
        message = json.loads(raw)
        if self.validate:
            check_server_message(message)
        self.log.append(message)
        return message

    async def recv(self, timeout=TIMEOUT):
        """The next message; raises Closed when the connection ended."""
        if self.reader is None:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), timeout)
            except ConnectionClosed:
                self.close_code = self._code()
                raise Closed(self.close_code, self._reason())
            return self._accept(raw)
        message = await asyncio.wait_for(self.queue.get(), timeout)
        if isinstance(message, AssertionError):
            raise message
        if message is None:
            await self.queue.put(None)
            raise Closed(self.close_code, self._reason())
        return message

    async def wait_closed(self, timeout=TIMEOUT):
        """Reads until the connection ends; returns (close code, messages read)."""
        seen = []
        while True:
            try:
                seen.append(await self.recv(timeout))
            except Closed as closed:
                return closed.code, seen

    async def send(self, message, check=True):
        """Sends a request, giving it a fresh ref unless it has one; returns the ref."""
        if "ref" not in message:
            message = {**message, "ref": f"{self.name}-{next(self._refs)}"}
        if check:
            check_client_message(message)
        await self.ws.send(json.dumps(message))
        return message["ref"]

    async def send_raw(self, text):
        await self.ws.send(text)

    async def answer(self, ref, timeout=TIMEOUT):
        """Reads until the ack/error/welcome for `ref`; returns (answer, events before it)."""
        events = []
        while True:
            m = await self.recv(timeout)
            if m["type"] in ("ack", "error", "welcome") and m.get("ref") == ref:
                return m, events
            events.append(m)

    async def request(self, message, timeout=TIMEOUT):
        ref = await self.send(message)
        return await self.answer(ref, timeout)

    async def ok(self, message, timeout=TIMEOUT):
        """A request that must be accepted; returns (ack, events)."""
        answer, events = await self.request(message, timeout)
        assert answer["type"] == "ack", f"{self.name}: {message['type']} refused: {answer}"
        return answer, events

    async def join(self, session, name=None, role="editor", **kw):
        msg = {"type": "join", "session": session, "name": name or self.name, "role": role, **kw}
        answer, events = await self.request(msg)
        assert answer["type"] == "welcome", f"{self.name}: join refused: {answer}"
        self.participant = answer["participant"]
        self.welcome = answer
        return answer

    async def until(self, predicate, timeout=TIMEOUT):
        """Reads until a message satisfies `predicate`; returns (message, skipped)."""
        skipped = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            m = await self.recv(max(0.01, deadline - loop.time()))
            if predicate(m):
                return m, skipped
            skipped.append(m)

    async def ping(self, timeout=TIMEOUT):
        """A round trip: returns (ack, messages before it)."""
        answer, events = await self.request({"type": "ping"}, timeout)
        assert answer["type"] == "ack", answer
        return answer, events

    async def close(self):
        try:
            await asyncio.wait_for(self.ws.close(), TIMEOUT)
        except (asyncio.TimeoutError, ConnectionClosed):
            pass
        if self.reader is not None:
            try:
                await asyncio.wait_for(self.reader, TIMEOUT)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self.reader.cancel()

    def abort(self):
        """Drops the TCP connection without a close handshake."""
        self.ws.transport.abort()


async def snapshot(url, session):
    """The session's current snapshot, taken by a hidden viewer (which emits no
    event and changes no seq)."""
    c = await Client.open(url, "observer")
    try:
        welcome = await c.join(session, "Observer", "viewer", hidden=True)
        return welcome["snapshot"]
    finally:
        await c.close()


def pin(id="pin", lat=10.0, lon=20.0, **fields):
    """A draggable point annotation."""
    return {"type": "point", "id": id, "coordinate": {"latitude": lat, "longitude": lon}, "draggable": True, **fields}


async def pair(url, session):
    """Alice (owner) and Bob (editor) in `session`; Alice has read Bob's participant.joined."""
    alice = await Client.open(url, "alice")
    await alice.join(session, "Alice", "owner")
    bob = await Client.open(url, "bob")
    await bob.join(session, "Bob", "editor")
    await alice.until(lambda m: m["type"] == "participant.joined")
    return alice, bob


@contextlib.asynccontextmanager
async def paired(url, session):
    """``pair``'s Alice and Bob, closed when the block ends, however it ends."""
    alice, bob = await pair(url, session)
    try:
        yield alice, bob
    finally:
        await alice.close()
        await bob.close()


@contextlib.asynccontextmanager
async def members(url, session, *who):
    """Clients joined to `session` in order, one for each (id, role) of `who` (named as the id,
    capitalised; an (id, role, fields) joins with those fields too, e.g. a colour), closed when
    the block ends, however it ends."""
    clients = []
    try:
        for id, role, *fields in who:
            client = await Client.open(url, id)
            clients.append(client)
            await client.join(session, id.capitalize(), role, **(fields[0] if fields else {}))
        yield tuple(clients)
    finally:
        for client in clients:
            await client.close()


async def owner_makes(url, session, *requests):
    """Alice joins `session` as its owner, makes `requests` in order (each must be accepted) and
    leaves."""
    async with members(url, session, ("alice", "owner")) as (alice,):
        for request in requests:
            await alice.ok(request)


def check_seq_order(messages, start_seq, who="client", viewport=False):
    """Discrete events have contiguous seq after `start_seq` (with viewport interest, `skipped`
    markers and `interest` messages account for the seqs between); transient ones carry the last seq
    (a viewport member's may carry one its stream has not accounted for yet, never an older one)."""
    last = start_seq
    for m in messages:
        if m["type"] in ("ack", "error", "welcome", "live", "clusters"):
            continue
        if m["type"] in ("skipped", "interest"):
            # Viewport interest (SPEC §4.7): the stream accounts for every seq up to this one; a
            # skipped marker only ever covers seqs nothing accounted for yet.
            if m["type"] == "skipped":
                assert m["seq"] > last, f"{who}: skipped {m['seq']} after the stream accounted for {last}: {m}"
            assert m["seq"] >= last, f"{who}: {m['type']} at seq {m['seq']} behind {last}: {m}"
            last = m["seq"]
            continue
        if m.get("transient") and viewport:
            assert m["seq"] >= last, f"{who}: transient {m['type']} has seq {m['seq']}, behind {last}: {m}"
        elif m.get("transient"):
            assert m["seq"] == last, f"{who}: transient {m['type']} has seq {m['seq']}, expected {last}: {m}"
        else:
            assert m["seq"] == last + 1, f"{who}: {m['type']} has seq {m['seq']}, expected {last + 1}: {m}"
            last = m["seq"]
    return last


# ---- golden pattern matching

class Mismatch(AssertionError):
    pass


def substitute(value, bindings):
    if isinstance(value, str) and value.startswith("$") and not value.startswith("$capture:") and value != "$any":
        name = value[1:]
        if name not in bindings:
            raise Mismatch(f"variable {value} is not bound")
        return bindings[name]
    if isinstance(value, dict):
        return {k: substitute(v, bindings) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, bindings) for v in value]
    return value


def match(pattern, value, bindings, path="$"):
    if isinstance(pattern, str) and pattern == "$any":
        return
    if isinstance(pattern, str) and pattern.startswith("$capture:"):
        bindings[pattern[len("$capture:"):]] = value
        return
    if isinstance(pattern, str) and pattern.startswith("$"):
        pattern = substitute(pattern, bindings)
        if isinstance(pattern, (dict, list)):
            return match(pattern, value, bindings, path)
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            raise Mismatch(f"{path}: expected an object, got {value!r}")
        for k, p in pattern.items():
            if k not in value:
                raise Mismatch(f"{path}.{k}: missing")
            match(p, value[k], bindings, f"{path}.{k}")
        return
    if isinstance(pattern, list):
        if not isinstance(value, list) or len(value) != len(pattern):
            raise Mismatch(f"{path}: expected an array of {len(pattern)}, got {value!r}")
        for i, (p, v) in enumerate(zip(pattern, value)):
            match(p, v, bindings, f"{path}[{i}]")
        return
    if isinstance(pattern, bool) or isinstance(value, bool) or pattern is None or value is None:
        if type(pattern) is not type(value) or pattern != value:
            raise Mismatch(f"{path}: expected {pattern!r}, got {value!r}")
        return
    if isinstance(pattern, (int, float)):
        if not isinstance(value, (int, float)) or pattern != value:
            raise Mismatch(f"{path}: expected {pattern!r}, got {value!r}")
        return
    if pattern != value:
        raise Mismatch(f"{path}: expected {pattern!r}, got {value!r}")


async def open_when_accepted(url, timeout=15, **kwargs):
    """A new connection, retrying a 429 or 503 refusal until `timeout`: the server frees a
    place once it has processed an earlier close, which may come just after the client saw it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await Client.open(url, **kwargs)
        except InvalidStatus as refused:
            if time.monotonic() > deadline or refused.response.status_code not in (429, 503):
                raise
            await asyncio.sleep(0.1)  # backoff between retries, as SPEC §1.1 advises
