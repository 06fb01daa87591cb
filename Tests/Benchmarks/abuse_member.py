#!/usr/bin/env python3
"""The well-behaved members of bench.py's abuse scenario: one process, two plain-socket
WebSocket connections in one session, measured phase by phase.

- the **pinger** (a viewer) sends a `ping` every PING_INTERVAL and waits for its `ack`;
- the **editor** retitles an annotation every EDIT_INTERVAL and waits for its `ack`; the
  pinger, a member of the same session, times the `annotation.updated` event too, and
  checks that discrete events arrive with contiguous `seq`.

It reads commands on stdin, one a line: `measure LABEL SECONDS` runs a phase and prints
one JSON line (latencies in ms: count, p50, p90, p99, max; answers that never came;
seq gaps), `quit` ends. Between phases it keeps reading its sockets and sends nothing.
It asks for real-time scheduling (SCHED_FIFO) when allowed, so that an attacker
sharing its core delays neither its sends nor its reads: what it measures is the
server. Usage: abuse_member.py HOST PORT SESSION
"""
import base64
import json
import os
import resource
import select
import socket
import sys
import time

PING_INTERVAL = 0.02
EDIT_INTERVAL = 0.05
ANSWER_TIMEOUT = 10.0
MASK = b"\x3c\x91\x07\xe2"


def masked(payload, opcode=0x1):
    n = len(payload)
    head = bytes([0x80 | opcode, 0x80 | n]) if n < 126 else bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
    return head + MASK + bytes(b ^ MASK[i & 3] for i, b in enumerate(payload))


class Connection:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=20)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           "Sec-WebSocket-Protocol: meridian.v1\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed during the upgrade")
            self.buffer += data
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0] + b" ":
            raise ConnectionError(f"upgrade refused: {head[:80]!r}")
        self.sock.setblocking(False)
        self.closed = None
        self.backlog = []  # messages read but not yet handed out (behind an answer wait_for found)

    def send(self, message):
        self.sock.setblocking(True)
        try:
            self.sock.sendall(message if isinstance(message, bytes) else masked(json.dumps(message).encode()))
        finally:
            self.sock.setblocking(False)

    def messages(self):
        """Reads what the socket holds; returns the whole text messages in it."""
        try:
            data = self.sock.recv(1 << 20)
            if not data:
                self.closed = self.closed or "1006 (end of stream)"
            self.buffer += data
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as error:
            self.closed = self.closed or f"1006 ({error.strerror})"
        out, self.backlog = self.backlog, []
        while len(self.buffer) >= 2:
            b0, b1 = self.buffer[0], self.buffer[1]
            n, at = b1 & 0x7F, 2
            if n == 126:
                if len(self.buffer) < 4:
                    break
                n, at = int.from_bytes(self.buffer[2:4], "big"), 4
            elif n == 127:
                if len(self.buffer) < 10:
                    break
                n, at = int.from_bytes(self.buffer[2:10], "big"), 10
            if len(self.buffer) < at + n:
                break
            payload, self.buffer = self.buffer[at:at + n], self.buffer[at + n:]
            opcode = b0 & 0x0F
            if opcode == 0x8:
                self.closed = str(int.from_bytes(payload[:2], "big")) if len(payload) >= 2 else "1005"
            elif opcode == 0x9:
                # The server's keepalive: only a PONG keeps the connection valid (--idle-timeout).
                self.send(masked(payload, opcode=0xA))
            elif opcode in (0x0, 0x1):
                # The server's big welcomes come in fragments; nothing else is measured in them.
                out.append(payload)
        return out

    def wait_for(self, predicate, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            select.select([self.sock], [], [], 0.1)
            got = self.messages()
            if self.closed:
                raise ConnectionError(f"closed with {self.closed}")
            for i, raw in enumerate(got):
                try:
                    m = json.loads(raw)
                except ValueError:
                    continue
                if predicate(m):
                    self.backlog = got[i + 1:]
                    return m
        raise TimeoutError("no answer")


def percentiles(values):
    if not values:
        return {"count": 0}
    ordered = sorted(values)

    def p(q):
        return round(1000 * ordered[min(len(ordered) - 1, max(0, int(round(q / 100 * len(ordered) + 0.5)) - 1))], 3)
    return {"count": len(ordered), "p50": p(50), "p90": p(90), "p99": p(99), "max": round(1000 * ordered[-1], 3)}


class Member:
    def __init__(self, host, port, session):
        self.pinger = Connection(host, port)
        self.pinger.send({"type": "join", "ref": "j", "session": session, "name": "Member", "role": "viewer"})
        welcome = self.pinger.wait_for(lambda m: m.get("ref") == "j")
        assert welcome["type"] == "welcome", welcome
        self.seq = welcome["seq"]
        self.editor = Connection(host, port)
        self.editor.send({"type": "join", "ref": "j", "session": session, "name": "Editor", "role": "editor"})
        assert self.editor.wait_for(lambda m: m.get("ref") == "j")["type"] == "welcome"
        self.pin = f"member-pin-{os.getpid()}"
        self.editor.send({"type": "annotation.add", "ref": "add", "annotation": {
            "type": "point", "id": self.pin, "coordinate": {"latitude": 10, "longitude": 10}}})
        assert self.editor.wait_for(lambda m: m.get("ref") == "add")["type"] == "ack"
        self.n = 0
        self.seq_errors = []

    def _pinger_read(self, phase=None):
        phase = phase if phase is not None else {"titles": {}}
        for raw in self.pinger.messages():
            m = json.loads(raw)
            kind = m.get("type")
            if kind == "ack" and m.get("ref") == phase.get("ping_ref"):
                phase["ping"].append(time.perf_counter() - phase.pop("ping_sent"))
                phase["ping_ref"] = None
            elif kind == "annotation.updated" and m["annotation"].get("id") == self.pin:
                sent = phase["titles"].pop(m["annotation"].get("title"), None)
                if sent is not None:
                    phase["event"].append(time.perf_counter() - sent)
            if "seq" in m and kind not in ("ack", "error", "welcome", "live"):
                expected = self.seq if m.get("transient") else self.seq + 1
                if m["seq"] != expected and len(self.seq_errors) < 5:
                    self.seq_errors.append(f"{kind} seq {m['seq']}, expected {expected}")
                self.seq = max(self.seq, m["seq"])

    def _editor_read(self, phase):
        for raw in self.editor.messages():
            if b'"type":"ack"' not in raw and b'"type":"error"' not in raw:
                continue
            m = json.loads(raw)
            if m.get("ref") == phase.get("edit_ref"):
                if m["type"] == "ack":
                    phase["ack"].append(time.perf_counter() - phase.pop("edit_sent"))
                else:
                    phase["refused"].append(m.get("code"))
                    phase.pop("edit_sent")
                phase["edit_ref"] = None

    def run(self, label, seconds):
        """One phase: pings and edits for `seconds`, then waits for the answers still due."""
        phase = {"ping": [], "ack": [], "event": [], "titles": {}, "refused": [], "timeouts": 0,
                 "ping_ref": None, "edit_ref": None}
        start = time.perf_counter()
        end = start + seconds
        next_ping, next_edit = start, start + EDIT_INTERVAL / 2
        errors_before = len(self.seq_errors)
        while True:
            t = time.perf_counter()
            if t >= end and phase["ping_ref"] is None and phase["edit_ref"] is None:
                break
            if t < end:
                if phase["ping_ref"] is None and t >= next_ping:
                    self.n += 1
                    phase["ping_ref"] = f"p{self.n}"
                    phase["ping_sent"] = time.perf_counter()
                    self.pinger.send({"type": "ping", "ref": phase["ping_ref"]})
                    next_ping = max(next_ping + PING_INTERVAL, t)
                if phase["edit_ref"] is None and t >= next_edit:
                    self.n += 1
                    title = f"t{self.n}"
                    phase["edit_ref"] = f"e{self.n}"
                    phase["edit_sent"] = phase["titles"][title] = time.perf_counter()
                    self.editor.send({"type": "annotation.update", "ref": phase["edit_ref"], "id": self.pin,
                                      "changes": {"title": title}})
                    next_edit = max(next_edit + EDIT_INTERVAL, t)
            for key in ("ping", "edit"):
                sent = phase.get(f"{key}_sent")
                if sent is not None and t - sent > ANSWER_TIMEOUT:
                    phase["timeouts"] += 1
                    phase.pop(f"{key}_sent")
                    phase[f"{key}_ref"] = None
            if self.pinger.closed or self.editor.closed:
                break
            wake = min([x for x in (next_ping, next_edit, end) if x > t] or [t + 0.01])
            ready, _, _ = select.select([self.pinger.sock, self.editor.sock], [], [], max(0.0, min(wake - t, 0.05)))
            if self.pinger.sock in ready:
                self._pinger_read(phase)
            if self.editor.sock in ready:
                self._editor_read(phase)
        return {"label": label, "seconds": round(time.perf_counter() - start, 2), "pingMs": percentiles(phase["ping"]),
                "ackMs": percentiles(phase["ack"]), "eventMs": percentiles(phase["event"]),
                "timeouts": phase["timeouts"], "refused": phase["refused"][:5],
                "seqErrors": self.seq_errors[errors_before:],
                "closed": {k: c.closed for k, c in (("pinger", self.pinger), ("editor", self.editor)) if c.closed}}


def realtime():
    """Real-time scheduling where allowed, with a limit on the CPU time it may take without
    blocking (RLIMIT_RTTIME: killed past it), so that a bug here can never hold the core."""
    try:
        resource.setrlimit(resource.RLIMIT_RTTIME, (200_000, 500_000))
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        return "SCHED_FIFO 10"
    except (PermissionError, AttributeError, OSError, ValueError):
        return "normal"


def main():
    host, port, session = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    scheduling = realtime()
    member = Member(host, port, session)
    print(json.dumps({"ready": True, "scheduling": scheduling}), flush=True)
    pending = b""
    while True:
        # Between phases: read the sockets (events keep coming) and wait for a command.
        ready, _, _ = select.select([0, member.pinger.sock, member.editor.sock], [], [], 1.0)
        if member.pinger.sock in ready:
            member._pinger_read()
        if member.editor.sock in ready:
            member.editor.messages()
        if member.pinger.closed or member.editor.closed:
            print(json.dumps({"closed": {"pinger": member.pinger.closed, "editor": member.editor.closed}}), flush=True)
            return
        if 0 not in ready:
            continue
        data = os.read(0, 4096)
        if not data:
            break
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            words = line.decode().split()
            if not words:
                continue
            if words[0] == "quit":
                return
            if words[0] == "measure":
                print(json.dumps(member.run(words[1], float(words[2]))), flush=True)


if __name__ == "__main__":
    main()
