"""A WebSocket client over a plain socket, for tests that must send what no
library sends: unmasked frames, reserved bits, unknown opcodes, oversized or
fragmented control frames, forbidden close codes, invalid UTF-8.

Frames are built byte by byte (RFC 6455 §5.2). Reading is strict: the server's
frames are parsed the same way, and `closed()` reports the close code the
server sent, or None when the TCP connection ended without a close frame
(what a browser reports as 1006)."""

import base64
import os
import socket
import struct
import time

from meridian_client import SUBPROTOCOL

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def frame(opcode, payload=b"", fin=True, rsv=0, mask=True, key=None, length=None):
    """One frame. `rsv` is the three reserved bits (0-7); `mask=False` sends it
    unmasked; `length` overrides the encoded payload length."""
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | (rsv & 7) << 4 | opcode & 0xF])
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 1 << 16:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4) if key is None else key
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def close_payload(code, reason=b""):
    return struct.pack("!H", code) + reason


class RawWebSocket:
    def __init__(self, host, port, timeout=10):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buffer = b""
        self.timeout = timeout

    @classmethod
    def open(cls, server, subprotocols=(SUBPROTOCOL,)):
        """Connects and completes the upgrade; fails unless it is accepted."""
        ws = cls(server.host, server.port)
        status, headers, _ = ws.upgrade(subprotocols)
        assert status == 101, f"upgrade refused with {status}"
        assert headers.get("sec-websocket-protocol") == SUBPROTOCOL, headers
        return ws

    def upgrade(self, subprotocols=(SUBPROTOCOL,)):
        """Sends an upgrade request; returns (status, headers, body). The body
        is read to its Content-Length (or to the end of the connection)."""
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET / HTTP/1.1", "Host: localhost", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if subprotocols:
            lines.append("Sec-WebSocket-Protocol: " + ", ".join(subprotocols))
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError(f"connection closed during the upgrade; received {self.buffer!r}")
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split()[1])
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        if status != 101:
            length = int(headers.get("content-length", -1))
            while (length < 0 or len(self.buffer) < length) and self._fill():
                pass
            body = self.buffer if length < 0 else self.buffer[:length]
        return status, headers, body

    def _fill(self):
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        self.buffer += data
        return bool(data)

    def _take(self, n):
        while len(self.buffer) < n:
            if not self._fill():
                return None
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may close before it has read everything

    def send_frame(self, opcode, payload=b"", **kwargs):
        self.send(frame(opcode, payload, **kwargs))

    def read_frame(self):
        """(fin, opcode, payload) of the next server frame, or None at the end
        of the connection. Server frames must be unmasked."""
        head = self._take(2)
        if head is None:
            return None
        fin, opcode = bool(head[0] & 0x80), head[0] & 0xF
        assert head[0] & 0x70 == 0, f"server frame with reserved bits {head[0]:#x}"
        assert not head[1] & 0x80, "server frame is masked"
        n = head[1] & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._take(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._take(8))[0]
        payload = self._take(n) if n else b""
        return None if payload is None else (fin, opcode, payload)

    def closed(self, timeout=10, answer=True, until_end=True):
        """Reads until the server's close frame; answers it (unless `answer` is
        False: the client sent its own close first, RFC 6455 §5.5.1) and, when
        `until_end`, waits for the end of the TCP connection. Returns (code,
        reason, frames seen before), code None when the connection ended
        without a close frame."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                got = self.read_frame()
            except socket.timeout:
                raise AssertionError(f"no close within {timeout} s; frames seen: {seen}") from None
            if got is None:
                return None, "", seen
            _, opcode, payload = got
            if opcode != CLOSE:
                seen.append((opcode, payload))
                continue
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            if answer:
                self.send(frame(CLOSE, payload[:2]))
            if until_end:
                self.sock.settimeout(max(0.1, deadline - time.monotonic()))
                try:
                    while self.sock.recv(65536):
                        pass
                except ConnectionResetError:
                    pass
                except socket.timeout:
                    raise AssertionError(f"the TCP connection did not end within {timeout} s of the close") from None
            return code, payload[2:].decode("utf-8", "replace"), seen

    def close(self):
        self.sock.close()
