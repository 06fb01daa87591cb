"""Schemathesis hooks for the HTTP API run (test_http_schemathesis.py, `make fuzz-http`).

Protocol/openapi.yaml's `Constraints` states two rules JSON Schema cannot: the bounds'
south-west latitude not above the north-east one, and minZoom not above maxZoom. Generated
bodies that break them are valid to the schema yet refused (400) by the server, as
documented; these hooks put such values in order so every other check stays strict.

The document also says libwebsockets closes the connection, without an answer, on a request
of more than about 90 query parameters: a generated query is cut to MAX_REPEATS parameters,
each to MAX_REPEATS values (a list or an object's members, at any depth)."""

import schemathesis

MAX_REPEATS = 8
MAX_PARAMETERS = 64


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
    if _number(a) and _number(b) and a > b:
        sw["latitude"], ne["latitude"] = b, a


def _trimmed(value):
    """At most MAX_REPEATS items in a list or object, at any depth: a query parameter's value
    may be either, and each item becomes a parameter of its own."""
    if isinstance(value, (list, tuple)):
        return [_trimmed(v) for v in list(value)[:MAX_REPEATS]]
    if isinstance(value, dict):
        return {k: _trimmed(v) for k, v in list(value.items())[:MAX_REPEATS]}
    return value


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return sum(_leaves(v) for v in value) or 1
    if isinstance(value, dict):
        return sum(_leaves(v) for v in value.values()) or 1
    return 1


@schemathesis.hook
def map_case(context, case):
    """Every phase's cases (the coverage phase applies case hooks, not body hooks)."""
    query = getattr(case, "query", None)
    if isinstance(query, dict):
        for name in list(query)[MAX_REPEATS:]:
            del query[name]
        for name, value in query.items():
            query[name] = _trimmed(value)
        while len(query) > 1 and sum(_leaves(v) for v in query.values()) > MAX_PARAMETERS:
            del query[list(query)[-1]]
    body = getattr(case, "body", None)
    if isinstance(body, dict):
        _order(body.get("constraints"))
        settings = body.get("settings")
        if isinstance(settings, dict):
            _order(settings.get("constraints"))
    return case
