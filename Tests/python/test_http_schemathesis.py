"""Schemathesis against Protocol/openapi.yaml and a real server with tokens checked (--auth jwt,
an HS256 owner token for every session): every phase (examples, coverage, fuzzing, stateful:
create, then read, configure, page the log and delete what was created, by the document's
links), every check (server errors, status codes, response schemas and headers, valid data
refused, invalid data accepted, undeclared methods without 405 and Allow, ignored tokens, a
deleted session still readable). Bounded and deterministic (Hypothesis derandomized), so a run
is repeatable; `make fuzz-http` runs the same for longer with a new seed each time
(MERIDIAN_SCHEMATHESIS_EXAMPLES, _SEED, _MAX_TIME).

Found this way, and fixed: GET /api/sessions/ID/events?= killed the server; the document and
the server disagreed on tint, null settings, /api/sessions/%0D, methods such as TRACE and
bounds whose corners share a latitude; a NUL (%00) in the URL got no answer
(test_http_defects.py holds one test of each)."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import REPO, Server
from http_raw import request
from test_auth import SECRET, claims, hs256

HERE = Path(__file__).resolve().parent
EXAMPLES = int(os.environ.get("MERIDIAN_SCHEMATHESIS_EXAMPLES", "25"))
# Without a seed, Hypothesis runs derandomized (schemathesis' deterministic mode): the same
# cases every run, simplest first, which is how it finds an empty query key at once.
SEED = os.environ.get("MERIDIAN_SCHEMATHESIS_SEED")
MAX_TIME = os.environ.get("MERIDIAN_SCHEMATHESIS_MAX_TIME")


@pytest.fixture
def jwt_server(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text(SECRET + "\n")
    s = Server("--auth", "jwt", "--jwt-secret-file", str(secret), "--data-dir", str(tmp_path / "data"))
    yield s
    s.stop()


def schemathesis(server, token, workdir, *extra, config=None, examples=EXAMPLES):
    """`st run` (as `python -m schemathesis.cli`, so no PATH entry is needed); its exit code and output.
    `config` is the text of a schemathesis.toml for the run."""
    options = []
    if config:
        (Path(workdir) / "schemathesis.toml").write_text(config)
        options = ["--config-file", str(Path(workdir) / "schemathesis.toml")]
    args = [
        sys.executable, "-m", "schemathesis.cli", *options, "run", str(REPO / "Protocol" / "openapi.yaml"),
        "--url", f"http://{server.host}:{server.port}",
        "--header", f"Authorization: Bearer {token}",
        "--checks", "all",
        "--max-examples", str(examples),
        *(["--seed", SEED, "--generation-database", "none"] if SEED else ["--generation-deterministic"]),
        # NUL and the other control bytes in every part of the URL (the server answers a NUL
        # itself: libwebsockets dropped such a request without an answer).
        "--generation-allow-x00", "true",
        "--workers", "1",
        "--continue-on-failure",
        "--request-timeout", "10",
        # Hypothesis' speed checks say nothing about the API, and a shared CI machine is slow.
        "--suppress-health-check", "too_slow,data_too_large",
        "--no-color",
        *extra,
    ]
    if MAX_TIME:
        args += ["--max-time", MAX_TIME]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    timeout = 120 + (int(float(MAX_TIME)) if MAX_TIME else 0) * 2
    result = subprocess.run(args, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    return result.returncode, result.stdout + result.stderr


def test_schemathesis_finds_nothing_with_tokens_checked(jwt_server):
    token = hs256(claims("root", "owner", session="*", ttl=3600))
    with tempfile.TemporaryDirectory(prefix="meridian-schemathesis-") as workdir:
        code, output = schemathesis(jwt_server, token, workdir, "--phases", "examples,coverage,fuzzing,stateful")
    alive = jwt_server.alive()
    summary = output[-12000:]
    assert alive, f"the server died during the run; its log:\n{jwt_server.log_text()[-4000:]}\n\nschemathesis:\n{summary}"
    assert code == 0, f"schemathesis ({f'seed {SEED}' if SEED else 'deterministic'}, {EXAMPLES} examples) found failures:\n{summary}"
    # Every phase ran, the stateful one included.
    for phase in ("Coverage", "Fuzzing", "Stateful"):
        assert phase in output, output[-3000:]
    assert "No tests were run" not in output, summary
    assert request(jwt_server, "GET", "/healthz").status == 200


def test_schemathesis_on_the_event_log_query_of_an_existing_session(jwt_server):
    # The whole-document run mostly draws ids of no session, refused before the query is read.
    # Here the id is one that exists and only invalid queries are made: against the build that
    # indexed an empty array on `?=`, this run kills the server within seconds.
    token = hs256(claims("root", "owner", session="*", ttl=3600))
    assert request(jwt_server, "POST", "/api/sessions", {"id": "harbour"}, token=token).status == 201
    with tempfile.TemporaryDirectory(prefix="meridian-schemathesis-") as workdir:
        code, output = schemathesis(jwt_server, token, workdir, "--phases", "coverage,fuzzing", "--mode", "negative",
                                    "--include-operation-id", "readEventLog", config='[parameters]\n"path.id" = "harbour"\n',
                                    examples=max(EXAMPLES, 200))
    summary = output[-12000:]
    assert jwt_server.alive(), f"the server died during the run; its log:\n{jwt_server.log_text()[-4000:]}\n\nschemathesis:\n{summary}"
    assert code == 0, f"schemathesis found failures:\n{summary}"
