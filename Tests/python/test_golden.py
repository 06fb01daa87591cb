"""Replays every golden transcript in Protocol/golden against a real server."""

import json
import uuid

import pytest

from meridian_client import PROTOCOL, Client, Closed, Mismatch, check_client_message, check_seq_order, match, run, substitute

GOLDEN = sorted((PROTOCOL / "golden").glob("*.json"))


def load(path):
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_sends_match_schema(path):
    """Every message a transcript sends is a valid request (variables aside)."""
    for step in load(path)["steps"]:
        if "send" in step:
            message = substitute(step["send"], _Placeholders())
            check_client_message(message)


class _Placeholders(dict):
    """Stands in for any variable with a schema-valid value of a plausible type."""

    def __contains__(self, key):
        return True

    def __getitem__(self, key):
        return {"SESSION": "golden-session", "lastSeq": 1}.get(key, "p1")


async def replay(url, transcript):
    bindings = {"SESSION": "g-" + uuid.uuid4().hex[:12]}
    clients = {}
    received = {}
    try:
        for i, step in enumerate(transcript["steps"]):
            name = step["client"]
            where = f"{transcript['name']} step {i} ({name})"
            if step.get("connect"):
                assert name not in clients, f"{where}: already connected"
                clients[name] = await Client.open(url, name)
                received[name] = []
            elif step.get("disconnect"):
                await clients.pop(name).close()
            elif "send" in step:
                message = substitute(step["send"], bindings)
                check_client_message(message)
                await clients[name].send(message)
            elif "closed" in step:
                try:
                    got = await clients[name].recv()
                except Closed as closed:
                    assert closed.code == step["closed"], f"{where}: closed with {closed.code}, expected {step['closed']}"
                    await clients.pop(name).close()
                else:
                    raise AssertionError(f"{where}: expected the server to close with {step['closed']}, got {got}")
            elif "expect" in step:
                try:
                    got = await clients[name].recv()
                except Exception as e:
                    raise AssertionError(f"{where}: expected {step['expect']}, got {e!r}") from e
                received[name].append(got)
                try:
                    match(step["expect"], got, bindings)
                except Mismatch as e:
                    raise AssertionError(f"{where}: {e}\n  expected {step['expect']}\n  got      {got}") from None
            else:
                raise AssertionError(f"{where}: unknown step {step}")
        # Nothing unlisted may be left unread, and seq must be contiguous.
        for name, c in clients.items():
            ack, extra = await c.ping()
            assert not extra, f"{transcript['name']}: {name} received unlisted messages {extra}"
        for name, messages in received.items():
            welcomes = [m for m in messages if m["type"] == "welcome"]
            if welcomes:
                first = messages.index(welcomes[0])
                check_seq_order(_until_next_welcome(messages[first + 1:]), welcomes[0]["seq"] if not welcomes[0]["resumed"] else welcomes[0]["resumedFrom"], name,
                                viewport="interest" in welcomes[0])
    finally:
        for c in clients.values():
            await c.close()


def _until_next_welcome(messages):
    out = []
    for m in messages:
        if m["type"] == "welcome":
            break
        out.append(m)
    return out


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_replay(server, start_server, path):
    transcript = load(path)
    # A transcript that needs other server options gets a server of its own.
    args = [a.replace("$GOLDEN", str(path.parent)) for a in transcript.get("serverArgs", [])]
    url = start_server(*args).url if args else server.url
    run(replay(url, transcript), timeout=60)
