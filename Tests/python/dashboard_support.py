"""Shared pieces of the dashboard's browser tests: a Chromium page per test, URLs,
a free port for servers that are restarted on the same address, and geometry."""

import math
import socket
import urllib.request

import pytest

from browser import Page, chromium


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
