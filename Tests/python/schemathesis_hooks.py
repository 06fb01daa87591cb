"""Schemathesis hooks for the HTTP API run (test_http_schemathesis.py, `make fuzz-http`).

Protocol/openapi.yaml's `Constraints` states two rules JSON Schema cannot: the bounds'
south-west latitude below the north-east one, and minZoom not above maxZoom. Generated
bodies that break them are valid to the schema yet refused (400) by the server, as
documented; these hooks put such values in order so every other check stays strict.

The document also says libwebsockets closes the connection, without an answer, on a request
of more than about 90 query parameters: a generated query repeating a parameter is cut to
MAX_REPEATS values."""

import schemathesis

MAX_REPEATS = 16


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _order(constraints):
    if not isinstance(constraints, dict):
        return
    lo, hi = constraints.get("minZoom"), constraints.get("maxZoom")
    if _number(lo) and _number(hi) and lo > hi:
        constraints["minZoom"], constraints["maxZoom"] = hi, lo
    bounds = constraints.get("bounds")
    if not isinstance(bounds, dict):
        return
    sw, ne = bounds.get("southWest"), bounds.get("northEast")
    if not (isinstance(sw, dict) and isinstance(ne, dict)):
        return
    a, b = sw.get("latitude"), ne.get("latitude")
    if not (_number(a) and _number(b)) or a < b:
        return
    if a > b:
        sw["latitude"], ne["latitude"] = b, a
    elif a < 90:
        ne["latitude"] = 90
    else:
        sw["latitude"] = -90


@schemathesis.hook
def map_case(context, case):
    """Every phase's cases (the coverage phase applies case hooks, not body hooks)."""
    query = getattr(case, "query", None)
    if isinstance(query, dict):
        for name, value in query.items():
            if isinstance(value, list) and len(value) > MAX_REPEATS:
                query[name] = value[:MAX_REPEATS]
    body = getattr(case, "body", None)
    if isinstance(body, dict):
        _order(body.get("constraints"))
        settings = body.get("settings")
        if isinstance(settings, dict):
            _order(settings.get("constraints"))
    return case
