"""Shared pieces of the dashboard's browser tests: a Chromium page per test, URLs,
a free port for servers that are restarted on the same address, geometry, and a
session filled with many points."""

import asyncio
import math
import random
import socket
import urllib.request

import pytest

from browser import Page, chromium
from meridian_client import Client


@pytest.fixture
def page(request):
    driver = chromium()
    p = Page(driver, request.node.name)
    yield p
    driver.quit()


def http_url(server, query=""):
    return f"http://{server.host}:{server.port}/dashboard/{query}"


def api(server, path, token=None):
    """GET on the HTTP API: (status, parsed JSON body)."""
    req = urllib.request.Request(f"http://{server.host}:{server.port}{path}")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req) as r:
            import json
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        import json
        return e.code, json.loads(e.read() or b"null")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def flag(id="flag", lat=48.8584, lon=2.2945, **extra):
    return {"type": "point", "id": id, "coordinate": {"latitude": lat, "longitude": lon},
            "draggable": True, "canShowCallout": True, "title": "Flag", **extra}


def select_or_deselect(i):
    """The i-th request of a member that selects the flag and lets it go in turn."""
    return {"type": "select", "id": "flag"} if i % 2 == 0 else {"type": "deselect"}


async def while_active(page, member, request, condition, what):
    """Has `member` make `request(i)` for i = 0, 1, ... (a paced member: 50 requests a second,
    under the rate limit) until the page's state satisfies `condition`; returns that state."""
    done = asyncio.Event()

    async def activity():
        i = 0
        while not done.is_set():
            await member.ok(request(i))
            i += 1
            await asyncio.sleep(0.02)

    task = asyncio.create_task(activity())
    try:
        return await asyncio.to_thread(page.wait, condition, what)
    finally:
        done.set()
        await task


def world(lat, lon):
    """Web Mercator world coordinates (0...1) of a coordinate."""
    y = (1 - math.log(math.tan(math.radians(lat)) + 1 / math.cos(math.radians(lat))) / math.pi) / 2
    return (lon + 180) / 360, y


def to_screen(view, size, lat, lon):
    """Where the dashboard's map (view {x, y, zoom}, size (w, h) in CSS pixels) draws a coordinate."""
    x, y = world(lat, lon)
    scale = 256 * 2 ** view["zoom"]
    return (x - view["x"]) * scale + size[0] / 2, (y - view["y"]) * scale + size[1] / 2


def relative_luminance(hex_color):
    c = hex_color.lstrip("#")[:6]
    channels = [int(c[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b):
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def overlaps(a, b):
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def world_points(count, seed=20261123):
    """`count` points `(id, latitude, longitude)` spread evenly at random over the world between
    60° south and 60° north (all of it in view of a map at zoom 2), the same for the same seed."""
    rnd = random.Random(seed)
    return [(f"p{i}", rnd.uniform(-60, 60), rnd.uniform(-180, 180)) for i in range(count)]


async def add_points(url, session, points, window=400):
    """Adds point annotations, `(id, latitude, longitude)` each, to `session` over one owner
    connection with `window` requests in flight. The owner's viewport interest has no view,
    so the server does not send the adds back to it. The server's rate limit must allow
    the burst (`--rate-limit`, `--rate-burst`)."""
    owner = await Client.open(url, "builder", validate=False)
    try:
        await owner.join(session, "Builder", "owner", interest={"mode": "viewport"})
        slots = asyncio.Semaphore(window)
        unanswered = len(points)

        async def send():
            for ident, lat, lon in points:
                await slots.acquire()
                await owner.send({"type": "annotation.add", "ref": f"add-{ident}", "annotation": {
                    "type": "point", "id": ident, "coordinate": {"latitude": lat, "longitude": lon}}}, check=False)

        async def answers():
            nonlocal unanswered
            while unanswered:
                m = await owner.recv(timeout=60)
                if m["type"] == "error":
                    raise AssertionError(f"annotation.add refused: {m}")
                if m["type"] == "ack":
                    unanswered -= 1
                    slots.release()

        async with asyncio.TaskGroup() as group:
            group.create_task(send())
            group.create_task(answers())
    finally:
        await owner.close()


def solid_png(rgb, size=256):
    """A size x size PNG of one colour, written by hand (no imaging library needed)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class MapFiles:
    """A small HTTP server of map files on a free loopback port: `/tiles/{z}/{x}/{y}.png`, one
    colour whatever the tile, and `/style.json`, a MapLibre style of one background colour. It
    records the paths asked for. A context manager."""

    def __init__(self, tile_rgb=(0xC4, 0x5A, 0x1E), style_color="#2e8b57"):
        import http.server
        import json
        import threading
        self.paths = []
        png = solid_png(tile_rgb)
        style = json.dumps({"version": 8, "sources": {},
                            "layers": [{"id": "streets", "type": "background", "paint": {"background-color": style_color}}]}).encode()
        files = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                files.paths.append(self.path)
                body, kind = (style, "application/json") if self.path == "/style.json" else (png, "image/png")
                if self.path != "/style.json" and not self.path.startswith("/tiles/"):
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def pixel(page, x, y):
    """The colour shown at (x, y) CSS pixels of the map, as #rrggbb: the canvas over the basemap
    MapLibre draws under it, as the page shows them (a one-pixel screenshot)."""
    return pixels(page, x, y, 1, 1)[0][0]


def pixels(page, x, y, width, height):
    """The colours shown in the box of the map at (x, y), width x height CSS pixels: rows of #rrggbb."""
    import base64
    left, top = page.js("const r = document.getElementById('map').getBoundingClientRect(); return [r.left, r.top]")
    shot = page.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": {
        "x": left + round(x), "y": top + round(y), "width": width, "height": height, "scale": 1}})
    return decode_png(base64.b64decode(shot["data"]))


def decode_png(data):
    """Rows of #rrggbb of an 8-bit RGB or RGBA PNG (what Chromium's screenshots are)."""
    import struct
    import zlib
    width, height, depth, kind = struct.unpack(">IIBB", data[16:26])
    assert depth == 8 and kind in (2, 6), (depth, kind)
    channels = 3 if kind == 2 else 4
    idat, at = b"", 8
    while at < len(data):
        length, chunk = struct.unpack(">I4s", data[at:at + 8])
        if chunk == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for r in range(height):
        kind, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(["#" + line[i:i + 3].hex() for i in range(0, stride, channels)])
        previous = line
    return rows


def close(a, b, tolerance=40):
    pa, pb = [int(a[i:i + 2], 16) for i in (1, 3, 5)], [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return math.dist(pa, pb) <= tolerance
