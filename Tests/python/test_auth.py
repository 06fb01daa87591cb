"""Bearer tokens with clients and token issuers we did not write: Python
`websockets` joins with tokens minted by `meridian token` and by hand (HMAC in
Python), in the join, the Authorization header or ?access_token=; the HTTP API
with urllib; and the start-up rules of --auth."""

import base64
import hashlib
import hmac
import json
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import InvalidStatus

from conftest import Server, binary
from meridian_client import Client, run

SECRET = "python-test-secret-0123456789abcdef-xyz"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256(claims, secret=SECRET):
    """A token signed here, not by Meridian: the server must accept any correct issuer."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    signature = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(signature)}"


def claims(sub, role, session="py-*", ttl=600, **extra):
    return {"sub": sub, "role": role, "session": session, "exp": int(time.time()) + ttl, **extra}


def mint(*args):
    result = subprocess.run([str(binary()), "token", *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("auth") / "secret"
    path.write_text(SECRET + "\n")
    return path


@pytest.fixture(scope="module")
def auth_server(secret_file):
    # conftest adds --auth none; a later --auth wins.
    s = Server("--auth", "jwt", "--jwt-secret-file", str(secret_file), "--jwt-audience", "meridian")
    yield s
    s.stop()


def answer_of(client, message):
    async def go():
        answer, _ = await client.request(message)
        return answer
    return go()


def test_tokens_from_meridian_token_and_from_python_join_the_right_participant(auth_server, secret_file):
    minted = mint("--secret-file", str(secret_file), "--sub", "ann", "--name", "Ann", "--session", "py-*",
                  "--role", "editor", "--audience", "meridian")

    async def scenario():
        ann = await Client.open(auth_server.url, "ann")
        bob = await Client.open(auth_server.url, "bob")
        try:
            welcome, _ = await ann.request({"type": "join", "session": "py-1", "token": minted})
            assert welcome["type"] == "welcome" and welcome["participant"] == "ann"
            assert [p["name"] for p in welcome["snapshot"]["participants"]] == ["Ann"]
            token = hs256(claims("bob", "viewer", aud="meridian", name="Bob"))
            welcome, _ = await bob.request({"type": "join", "session": "py-1", "token": token})
            assert welcome["type"] == "welcome" and welcome["participant"] == "bob"
            joined, _ = await ann.until(lambda m: m["type"] == "participant.joined")
            assert joined["participant"]["id"] == "bob" and joined["participant"]["role"] == "viewer"
            refused, _ = await bob.request({"type": "annotation.add", "annotation": {
                "type": "point", "id": "x", "coordinate": {"latitude": 1, "longitude": 2}}})
            assert refused["code"] == "forbidden"
        finally:
            await ann.close()
            await bob.close()

    run(scenario())


def test_a_token_joiner_naming_another_participant_gets_none_of_its_undo_history(auth_server):
    """With tokens the participant is the token's subject on every connection: a joiner naming
    another (absent) participant as `previousParticipant` does not take over its undo steps."""
    async def scenario():
        ann = await Client.open(auth_server.url, "ann")
        mallory = await Client.open(auth_server.url, "mallory")
        bob = await Client.open(auth_server.url, "bob")
        try:
            welcome, _ = await bob.request({"type": "join", "session": "py-undo", "token": hs256(claims("bob", "viewer", aud="meridian"))})
            assert welcome["type"] == "welcome"
            welcome, _ = await ann.request({"type": "join", "session": "py-undo", "token": hs256(claims("ann", "editor", aud="meridian"))})
            assert welcome["type"] == "welcome"
            added, _ = await ann.request({"type": "annotation.add", "annotation": {
                "type": "point", "id": "ann-pin", "coordinate": {"latitude": 1, "longitude": 2}}})
            assert added["type"] == "ack", added
            await ann.close()
            # Ann is gone (the case where a history passes on), then Mallory names her.
            await bob.until(lambda m: m["type"] == "participant.left" and m["participant"] == "ann")
            welcome, _ = await mallory.request({"type": "join", "session": "py-undo", "previousParticipant": "ann",
                                                "token": hs256(claims("mallory", "editor", aud="meridian"))})
            assert welcome["type"] == "welcome" and welcome["participant"] == "mallory"
            assert [a["id"] for a in welcome["snapshot"]["annotations"]] == ["ann-pin"]
            refused, _ = await mallory.request({"type": "undo"})
            assert refused["type"] == "error" and refused["code"] == "not_found", refused
        finally:
            await mallory.close()
            await bob.close()

    run(scenario())


@pytest.mark.parametrize("token,code", [
    (hs256(claims("c", "editor", aud="meridian"), secret="another-secret-0123456789abcdef-xyz"), "unauthorized"),
    (hs256(claims("c", "editor", ttl=-120, aud="meridian")), "token_expired"),
    (hs256(claims("c", "editor", aud="elsewhere")), "unauthorized"),
    (hs256(claims("c", "editor", session="other-*", aud="meridian")), "forbidden"),
    (hs256({"sub": "c", "role": "editor", "exp": int(time.time()) + 60, "aud": "meridian"}), "unauthorized"),
    (b64url(b'{"alg":"none"}') + "." + b64url(json.dumps(claims("c", "owner", aud="meridian")).encode()) + ".", "unauthorized"),
], ids=["other-secret", "expired", "other-audience", "other-session", "no-session-claim", "alg-none"])
def test_bad_tokens_are_refused_with_their_code_and_the_connection_survives(auth_server, token, code):
    async def scenario():
        c = await Client.open(auth_server.url, "c")
        try:
            answer, _ = await c.request({"type": "join", "session": "py-2", "token": token})
            assert answer["type"] == "error" and answer["code"] == code, answer
            good = hs256(claims("c", "editor", aud="meridian"))
            welcome, _ = await c.request({"type": "join", "session": "py-2", "token": good})
            assert welcome["type"] == "welcome"
        finally:
            await c.close()

    run(scenario())


def test_the_handshake_carries_the_token_or_is_refused_401(auth_server):
    token = hs256(claims("hank", "editor", aud="meridian"))

    async def scenario():
        header = await Client.open(auth_server.url, "h", additional_headers={"Authorization": f"Bearer {token}"})
        query = await Client.open(f"{auth_server.url}?access_token={hs256(claims('quinn', 'viewer', aud='meridian'))}", "q")
        try:
            welcome, _ = await header.request({"type": "join", "session": "py-3"})
            assert welcome["participant"] == "hank"
            welcome, _ = await query.request({"type": "join", "session": "py-3"})
            assert welcome["participant"] == "quinn"
        finally:
            await header.close()
            await query.close()
        for bad in ({"additional_headers": {"Authorization": "Bearer nonsense"}},
                    {"additional_headers": {"Authorization": f"Bearer {hs256(claims('x', 'editor', ttl=-60, aud='meridian'))}"}}):
            with pytest.raises(InvalidStatus) as refused:
                await Client.open(auth_server.url, "bad", **bad)
            assert refused.value.response.status_code == 401

    run(scenario())


def api(server, method, path, token=None, body=None):
    request = urllib.request.Request(f"http://{server.host}:{server.port}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode())
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_the_http_api_needs_a_token_with_the_right_role(auth_server):
    owner_all = hs256(claims("root", "owner", session="*", aud="meridian"))
    owner_py = hs256(claims("olive", "owner", aud="meridian"))
    viewer = hs256(claims("vera", "viewer", aud="meridian"))
    assert api(auth_server, "GET", "/api/sessions")[0] == 401
    assert api(auth_server, "GET", "/api/sessions", hs256(claims("x", "owner", session="*", ttl=-60, aud="meridian")))[1]["error"] == "token_expired"
    assert api(auth_server, "GET", "/api/sessions", viewer)[0] == 403
    assert api(auth_server, "GET", "/api/sessions", owner_py)[0] == 403, "listing needs a token for every session"
    assert api(auth_server, "GET", "/api/sessions", owner_all)[0] == 200
    assert api(auth_server, "POST", "/api/sessions", viewer, {"id": "py-api"})[0] == 403
    assert api(auth_server, "POST", "/api/sessions", owner_py, {"id": "elsewhere"})[0] == 403
    status, created = api(auth_server, "POST", "/api/sessions", owner_py, {"id": "py-api"})
    assert status == 201, created
    assert api(auth_server, "GET", "/api/sessions/py-api", viewer)[0] == 200
    assert api(auth_server, "DELETE", "/api/sessions/py-api", viewer)[0] == 403
    assert api(auth_server, "DELETE", "/api/sessions/py-api", owner_py)[0] in (200, 204)
    # Health and metrics stay open for probes and scrapers.
    with urllib.request.urlopen(f"http://{auth_server.host}:{auth_server.port}/healthz", timeout=10) as response:
        assert response.status == 200


def test_es256_public_keys(tmp_path):
    key, pub = tmp_path / "key.pem", tmp_path / "pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key)], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True, capture_output=True)
    server = Server("--auth", "jwt", "--jwt-public-key-file", str(pub))
    try:
        token = mint("--private-key-file", str(key), "--sub", "eve", "--session", "py-es", "--role", "owner")

        async def scenario():
            c = await Client.open(server.url, "eve")
            try:
                refused, _ = await c.request({"type": "join", "session": "py-es", "token": hs256(claims("eve", "owner", session="py-es"))})
                assert refused["code"] == "unauthorized", "HS256 is not accepted where only an ES256 key is configured"
                welcome, _ = await c.request({"type": "join", "session": "py-es", "token": token})
                assert welcome["type"] == "welcome" and welcome["participant"] == "eve"
            finally:
                await c.close()

        run(scenario())
    finally:
        server.stop()


def ec_key_pair(directory, name):
    key, pub = directory / f"{name}.pem", directory / f"{name}.pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key)], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True, capture_output=True)
    return key, pub.read_text()


def ec_thumbprint(public_pem):
    """RFC 7638, computed here with the `cryptography` package rather than by Meridian."""
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    numbers = load_pem_public_key(public_pem.encode()).public_numbers()
    jwk = {"crv": "P-256", "kty": "EC", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}
    return b64url(hashlib.sha256(json.dumps(jwk, separators=(",", ":"), sort_keys=True).encode()).digest())


def test_public_keys_are_picked_by_kid_and_an_unknown_kid_is_refused(tmp_path):
    labelled_key, labelled_pub = ec_key_pair(tmp_path, "labelled")
    plain_key, plain_pub = ec_key_pair(tmp_path, "plain")
    keys = tmp_path / "keys.pem"
    keys.write_text(f"Identity service keys\nkid: idp-2026-11\n{labelled_pub}{plain_pub}")
    server = Server("--auth", "jwt", "--jwt-public-key-file", str(keys))
    try:
        def token(key, kid=None):
            return mint("--private-key-file", str(key), "--sub", "kim", "--session", "py-kid", "--role", "editor",
                        *(["--kid", kid] if kid else []))

        async def scenario():
            c = await Client.open(server.url, "kim")
            try:
                for key, kid, accepted in [(labelled_key, "idp-2026-11", True), (plain_key, ec_thumbprint(plain_pub), True),
                                           (plain_key, None, True), (labelled_key, None, True),
                                           (plain_key, "no-such-key", False), (plain_key, "idp-2026-11", False)]:
                    answer, _ = await c.request({"type": "join", "session": "py-kid", "token": token(key, kid)})
                    if accepted:
                        assert answer["type"] == "welcome", (kid, answer)
                        await c.ok({"type": "leave"})
                    else:
                        assert (answer["type"], answer["code"]) == ("error", "unauthorized"), (kid, answer)
            finally:
                await c.close()

        run(scenario())
    finally:
        server.stop()


def serve(*args):
    return subprocess.run([str(binary()), "serve", "--port", "0", *args], capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


def test_start_up_rules(tmp_path):
    no_key = serve()
    assert no_key.returncode != 0 and "auth jwt needs jwtSecretFile or jwtPublicKeyFile" in no_key.stderr
    open_to_all = serve("--auth", "none", "--host", "0.0.0.0")
    assert open_to_all.returncode != 0 and "loopback" in open_to_all.stderr
    short = tmp_path / "short"
    short.write_text("too-short")
    weak = serve("--jwt-secret-file", str(short))
    assert weak.returncode != 0 and "at least 32 bytes" in weak.stderr
    assert serve("--auth", "maybe").returncode != 0
