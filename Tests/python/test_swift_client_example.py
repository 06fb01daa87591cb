"""A Swift program built from the package as an app depends on it (meridian-follow-example:
MeridianClient and MeridianMapBinding over the portable transport) against a TLS server that
checks tokens: it joins with its token, follows a drag by a Python client as the drag happens,
then drags the annotation itself, which the Python client sees."""

import asyncio
import json
import os
import ssl
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import REPO, Server
from meridian_client import Client, run
from test_auth import hs256, claims

SECRET = "python-test-secret-0123456789abcdef-xyz"


def example_binary():
    path = Path(os.environ.get("MERIDIAN_EXAMPLE_BIN", REPO / ".build" / "debug" / "meridian-follow-example"))
    if not path.exists():
        subprocess.run(["swift", "build", "--product", "meridian-follow-example"], cwd=REPO, check=True)
    return path


@pytest.fixture(scope="module")
def pki():
    """A CA of the test's own and a server certificate it signed for localhost."""
    d = Path(tempfile.mkdtemp(prefix="meridian-example-tls-"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subprocess.run(["openssl", "req", "-x509", *ec, "-keyout", d / "ca.key", "-out", d / "ca.pem", "-days", "1",
                    "-subj", "/CN=Example CA"], check=True, capture_output=True)
    subprocess.run(["openssl", "req", *ec, "-keyout", d / "server.key", "-out", d / "server.csr", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    (d / "ext").write_text("subjectAltName=DNS:localhost\n")
    subprocess.run(["openssl", "x509", "-req", "-in", d / "server.csr", "-CA", d / "ca.pem", "-CAkey", d / "ca.key",
                    "-CAcreateserial", "-out", d / "server.pem", "-days", "1", "-extfile", d / "ext"], check=True, capture_output=True)
    (d / "secret").write_text(SECRET + "\n")
    return d


def test_the_swift_example_follows_a_drag_and_drags_over_tls_with_a_token(pki, session_id):
    server = Server("--auth", "jwt", "--jwt-secret-file", str(pki / "secret"),
                    "--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key"))
    try:
        url = f"wss://localhost:{server.port}/"
        context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        alice_token = hs256(claims("alice", "editor", session=session_id), secret=SECRET)
        follower_token = hs256(claims("follower", "editor", session=session_id), secret=SECRET)
        path = [{"latitude": 10 + i, "longitude": 20 + 2 * i} for i in range(1, 6)]
        target = (48.85, 2.35)

        async def scenario():
            alice = await Client.open(url, "alice", ssl=context)
            await alice.join(session_id, "Alice", token=alice_token)
            await alice.ok({"type": "annotation.add", "annotation": {
                "type": "point", "id": "flag", "title": "Flag", "draggable": True, "coordinate": {"latitude": 10, "longitude": 20}}})
            example = await asyncio.create_subprocess_exec(
                str(example_binary()), "--url", url, "--token", follower_token, "--session", session_id, "--annotation", "flag",
                "--ca-file", str(pki / "ca.pem"), "--to", f"{target[0]},{target[1]}", "--timeout", "30",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            lines = []

            async def line():
                try:
                    raw = await asyncio.wait_for(example.stdout.readline(), 30)
                except asyncio.TimeoutError:
                    example.kill()
                    raise AssertionError(f"no line from the example in 30 s after {lines}; its stderr: "
                                         f"{(await example.stderr.read()).decode()[-2000:]}; the server's log: "
                                         f"{server.log_text()[-2000:]}") from None
                assert raw, f"the example ended: {(await example.stderr.read()).decode()}"
                lines.append(json.loads(raw))
                return lines[-1]

            async def until(predicate):
                while not predicate(await line()):
                    pass
                return lines[-1]

            joined = await until(lambda m: "joined" in m)
            assert joined["joined"] == "follower", joined  # the token's subject, not the name it asked for
            await until(lambda m: m.get("shown") == "flag")  # it has the annotation before the drag starts

            # Alice drags; the example shows each position as it arrives, with who drags it.
            await alice.ok({"type": "drag", "id": "flag", "state": "starting"})
            for c in path:
                await alice.ok({"type": "drag", "id": "flag", "state": "dragging", "coordinate": c})
                seen = await until(lambda m: m.get("shown") == "flag" and (m["latitude"], m["longitude"]) == (c["latitude"], c["longitude"]))
                assert seen["draggedBy"] == ["alice"], seen
            await alice.ok({"type": "drag", "id": "flag", "state": "ending"})
            followed = await until(lambda m: "followed" in m)
            assert (followed["latitude"], followed["longitude"]) == (path[-1]["latitude"], path[-1]["longitude"])

            # Then the example drags it; Alice sees its drag from starting to ending, ending at the target.
            states, last = [], None
            while True:
                m, _ = await alice.until(lambda m: m["type"] == "drag" and m["participant"] == "follower")
                states.append(m["state"])
                last = m.get("coordinate", last)
                if m["state"] in ("ending", "canceling"):
                    break
            assert states[0] == "starting" and states[-1] == "ending", states
            assert "dragging" in states, states
            assert (last["latitude"], last["longitude"]) == target, last
            done = await until(lambda m: "dragged" in m)
            assert (done["latitude"], done["longitude"]) == target
            assert await asyncio.wait_for(example.wait(), 30) == 0, (await example.stderr.read()).decode()
            await alice.close()

        run(scenario())
    finally:
        server.stop()


def test_the_example_without_a_trusted_ca_is_refused_and_says_why(pki, session_id):
    server = Server("--auth", "jwt", "--jwt-secret-file", str(pki / "secret"),
                    "--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key"))
    try:
        token = hs256(claims("follower", "editor", session=session_id), secret=SECRET)
        result = subprocess.run([str(example_binary()), "--url", f"wss://localhost:{server.port}/", "--token", token,
                                 "--session", session_id, "--annotation", "flag", "--to", "1,1", "--timeout", "5"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 1
        assert "the connection failed" in result.stderr, result.stderr
        assert result.stdout == ""
    finally:
        server.stop()
