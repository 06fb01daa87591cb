"""HTTP/1.1 over a plain socket, byte for byte as written: for requests that http.client
or urllib would normalise (an empty query key, %0D in the path, methods like TRACE)."""

import json
import socket
import time

import jsonschema
import yaml

from conftest import REPO

OPENAPI = yaml.safe_load((REPO / "Protocol" / "openapi.yaml").read_text())


def schema_validator(name):
    """A validator of one of openapi.yaml's component schemas."""
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": OPENAPI["components"]})


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.raw = status, headers, body

    @property
    def json(self):
        return json.loads(self.raw) if self.raw else None

    def __repr__(self):
        return f"Response({self.status}, {self.headers}, {self.raw[:300]!r})"


def request(server, method, target, body=None, token=None, headers=(), timeout=10):
    """Sends one request (the target exactly as given) and reads its whole response."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {server.host}:{server.port}", "Connection: close"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    payload = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else b"")
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    lines += list(headers)
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
    with socket.create_connection((server.host, server.port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head, sep, rest = received.partition(b"\r\n\r\n")
            if sep:
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                               if line.lower().startswith(b"content-length:")), None)
                if length is not None and len(rest) >= length:
                    break
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    assert status_line.startswith("HTTP/1."), f"no HTTP answer to {method} {target}: {received[:200]!r}"
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return Response(int(status_line.split()[1]), fields, rest)
