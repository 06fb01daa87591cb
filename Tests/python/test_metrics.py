"""GET /metrics: Prometheus text with fixed label sets, fed by a real session."""

import re
import tempfile
import urllib.request

import pytest
from websockets.exceptions import InvalidStatus

from meridian_client import SCHEMA, Client, members, run

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def scrape(server):
    with urllib.request.urlopen(f"http://{server.host}:{server.port}/metrics", timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a Prometheus sample line: {line!r}"
        labels = tuple(sorted(LABEL.findall(m.group(2) or "")))
        samples[(m.group(1), labels)] = float(m.group(3))
    return text, samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))))


def test_metrics_count_a_real_session(start_server, session_id):
    server = start_server("--data-dir", tempfile.mkdtemp(prefix="meridian-metrics-"))

    async def scenario():
        # An upgrade without the subprotocol is refused before it opens (SPEC §1.1).
        with pytest.raises(InvalidStatus):
            await Client.open(server.url, "nobody", subprotocols=None)
        async with members(server.url, session_id, ("alice", "owner"), ("bob", "editor")) as (alice, bob):
            await alice.ok({"type": "annotation.add", "annotation": {
                "type": "point", "id": "pin", "coordinate": {"latitude": 1, "longitude": 2}, "draggable": True}})
            await alice.ok({"type": "drag", "id": "pin", "state": "starting"})
            refused, _ = await bob.request({"type": "drag", "id": "pin", "state": "starting"})
            assert refused["code"] == "drag_conflict"
            missing, _ = await bob.request({"type": "annotation.remove", "id": "nope"})
            assert missing["code"] == "not_found"
            await alice.ping()
            return scrape(server)

    text, samples = run(scenario())
    assert session_id not in text, "a session id appears in the metrics"
    assert value(samples, "meridian_connections") == 2
    assert value(samples, "meridian_sessions_loaded") == 1
    assert value(samples, "meridian_connection_events_total", event="opened") == 2
    assert value(samples, "meridian_handshakes_refused_total") == 1
    assert value(samples, "meridian_messages_in_total", type="join") == 2
    assert value(samples, "meridian_messages_in_total", type="annotation.add") == 1
    assert value(samples, "meridian_messages_in_total", type="drag") == 2
    assert value(samples, "meridian_messages_out_total", type="error") == 2
    # Every message sent is counted by its type, once per recipient: both welcomes, the add and the
    # drag to both members, alice's three acks (the add, the drag, the ping).
    assert value(samples, "meridian_messages_out_total", type="welcome") == 2
    assert value(samples, "meridian_messages_out_total", type="annotation.added") == 2
    assert value(samples, "meridian_messages_out_total", type="drag") == 2
    assert value(samples, "meridian_messages_out_total", type="ack") == 3
    sent = sum(v for (name, _), v in samples.items() if name == "meridian_messages_out_total")
    assert sent == value(samples, "meridian_deliveries_total"), "a frame of a small session is one whole message"
    assert value(samples, "meridian_errors_total", code="drag_conflict") == 1
    assert value(samples, "meridian_errors_total", code="not_found") == 1
    assert value(samples, "meridian_drag_starts_total", policy="exclusive", outcome="granted") == 1
    assert value(samples, "meridian_drag_starts_total", policy="exclusive", outcome="refused") == 1
    assert value(samples, "meridian_deliveries_total") >= 8
    assert value(samples, "meridian_bytes_out_total") > 0 and value(samples, "meridian_bytes_in_total") > 0
    assert value(samples, "meridian_queue_bytes") is not None
    assert value(samples, "meridian_conflated_frames_total") is None or value(samples, "meridian_conflated_frames_total") >= 0
    # The annotation.add was committed before its ack: at least one batch, timed.
    assert value(samples, "meridian_storage_commit_seconds_count") >= 1
    assert value(samples, "meridian_storage_batch_size_count") >= 1
    assert value(samples, "meridian_storage_batch_size_bucket", le="+Inf") >= 1


def test_every_series_is_described_and_there_at_zero_before_it_counts(start_server):
    """A fresh server: each metric has a `# HELP` line, and each series of a fixed label set (every
    request type and error code of the schema, every drag policy and outcome) is there at 0."""
    text, samples = scrape(start_server())
    typed = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)
    described = dict(re.findall(r"^# HELP (\S+) (.+)$", text, re.M))
    assert typed, "no # TYPE lines"
    assert [name for name, _ in typed if not described.get(name, "").strip()] == []

    definitions = SCHEMA["$defs"]
    request_types = [d["properties"]["type"]["const"] for k, d in definitions.items() if k.startswith("request.")]
    assert len(request_types) > 20
    for kind in request_types + ["invalid"]:
        assert value(samples, "meridian_messages_in_total", type=kind) == 0, kind
    server_types = [definitions[d["$ref"].split("/")[-1]]["properties"]["type"]["const"] for d in definitions["serverMessage"]["oneOf"]]
    assert len(server_types) > 20
    for kind in server_types:
        assert value(samples, "meridian_messages_out_total", type=kind) == 0, kind
    for code in definitions["errorCode"]["enum"]:
        assert value(samples, "meridian_errors_total", code=code) == 0, code
    for policy in definitions["dragPolicy"]["enum"]:
        for outcome in ("granted", "preempted", "refused"):
            assert value(samples, "meridian_drag_starts_total", policy=policy, outcome=outcome) == 0
    for event in ("opened", "closed"):
        assert value(samples, "meridian_connection_events_total", event=event) == 0
    for outcome in ("conflated", "refused"):
        assert value(samples, "meridian_rate_limited_total", outcome=outcome) == 0
    for name in ("meridian_deliveries_total", "meridian_slow_consumer_closes_total", "meridian_idle_closes_total",
                 "meridian_log_lines_dropped_total", "meridian_storage_commit_failures_total", "meridian_connections"):
        assert value(samples, name) == 0, name
    assert value(samples, "meridian_storage_commit_seconds_count") == 0
    # A single server: no cluster series.
    assert not any(name.startswith("meridian_cluster_") for name, _ in typed)
