"""Starts the real Meridian server binary for the tests.

The binary is `$MERIDIAN_BIN`, default `.build/debug/meridian` in the repository
root. Each server runs as `meridian serve --port 0 ...`; its port is read from
the first stdout line `meridian listening on http://127.0.0.1:PORT ...` (https:// with TLS).
"""

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_fixture import PostgresServer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"^meridian listening on (https?)://([^:/\s]+):(\d+)")
# The servers' logs, in one directory that goes with the test run (a failing test quotes the
# log's tail in its message).
LOGS = Path(tempfile.mkdtemp(prefix="meridian-test-logs-"))
atexit.register(shutil.rmtree, LOGS, True)
# Every other temporary file and directory of the run (data directories, configurations,
# certificates) goes under one directory, removed at exit too. Others may pass through it: the
# PostgreSQL server runs as its own user in a directory given to it (pg_fixture.py).
tempfile.tempdir = tempfile.mkdtemp(prefix="meridian-test-files-")
os.chmod(tempfile.tempdir, 0o711)
atexit.register(shutil.rmtree, tempfile.tempdir, True)


def binary():
    path = Path(os.environ.get("MERIDIAN_BIN", REPO / ".build" / "debug" / "meridian"))
    if not path.is_absolute():
        path = REPO / path
    return path


def end_process(process, log, sig=signal.SIGTERM, timeout=10):
    """Ends a child process: `sig`, then SIGKILL when it has not exited within `timeout` seconds;
    closes its stdout pipe (if any) and its log file."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    if process.stdout:
        process.stdout.close()
    log.close()


class Server:
    def __init__(self, *args, env=None, preexec_fn=None):
        """`env` replaces the environment; `preexec_fn` runs in the child before the binary."""
        path = binary()
        if not path.exists():
            pytest.fail(f"server binary not found at {path}: run `swift build` or set MERIDIAN_BIN")
        self.args = ["serve", "--port", "0", "--auth", "none", *args]
        self.log = tempfile.NamedTemporaryFile(prefix="meridian-", suffix=".log", dir=LOGS, delete=False)
        self.process = subprocess.Popen([str(path), *self.args], stdout=subprocess.PIPE, stderr=self.log,
                                        stdin=subprocess.DEVNULL, text=True, env=env, preexec_fn=preexec_fn)
        line = self._first_line(timeout=20)
        m = LISTENING.match(line or "")
        if not m:
            self.stop()
            pytest.fail(f"server did not start: first stdout line {line!r}; log: {self.log_text()[-2000:]}")
        self.tls = m.group(1) == "https"
        self.host, self.port = m.group(2), int(m.group(3))
        self.url = f"{'wss' if self.tls else 'ws'}://{self.host}:{self.port}/"

    def _first_line(self, timeout):
        result = []
        reader = threading.Thread(target=lambda: result.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        return result[0].strip() if result else None

    def log_text(self):
        try:
            return Path(self.log.name).read_text(errors="replace")
        except OSError:
            return ""

    def alive(self):
        return self.process.poll() is None

    def pause(self, timeout=10):
        """SIGSTOP, then waits until every thread of the process is stopped: the kernel stops a
        process's threads one after another, and one not yet stopped may still serve what a
        client sends right after the signal."""
        self.process.send_signal(signal.SIGSTOP)
        deadline = time.monotonic() + timeout
        while not self.paused():
            assert time.monotonic() < deadline, f"the server's threads were not all stopped within {timeout} s"
            time.sleep(0.001)

    def paused(self):
        """Whether every thread of the process is stopped (state T in /proc)."""
        tasks = Path(f"/proc/{self.process.pid}/task")
        states = []
        for task in tasks.iterdir():
            try:
                # The state follows the command name, which is in parentheses and may hold spaces.
                states.append(task.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0])
            except (FileNotFoundError, ProcessLookupError):
                continue  # a thread that ended meanwhile
        return bool(states) and all(state == "T" for state in states)

    def resume(self):
        self.process.send_signal(signal.SIGCONT)

    def stop(self):
        end_process(self.process, self.log)


@pytest.fixture(scope="session")
def server():
    """A server with default options, shared by the whole run."""
    s = Server()
    yield s
    crashed = not s.alive()
    s.stop()
    assert not crashed, f"the server exited during the tests; log tail:\n{s.log_text()[-4000:]}"


@pytest.fixture
def start_server():
    """Starts a dedicated server with extra arguments, stopped after the test."""
    started = []

    def start(*args):
        s = Server(*args)
        started.append(s)
        return s

    yield start
    for s in started:
        crashed = not s.alive()
        s.stop()
        assert not crashed, f"the server exited during the test; log tail:\n{s.log_text()[-4000:]}"


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL of the run's own (pg_fixture.py), started when a test first asks for it."""
    server = PostgresServer()
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres_server):
    """A new empty database on the run's PostgreSQL, as a postgres:// URL for `--store`."""
    return postgres_server.create_database()


@pytest.fixture
def redis():
    """A `redis-server` of the test's own (cluster_fixture.RedisServer), stopped after it."""
    from cluster_fixture import RedisServer
    server = RedisServer()
    yield server
    server.close()


@pytest.fixture
def cluster_pair(redis, postgres_url):
    """Two nodes on the test's Redis and a new database, lease time 2 s; none may have exited."""
    from cluster_fixture import Cluster
    c = Cluster(redis, postgres_url, count=2, lease_ttl=2)
    yield c
    crashed = [n for n in c.nodes if not n.alive()]
    c.close()
    assert not crashed, f"a node exited during the test: {crashed[0].log_text()[-3000:]}"


@pytest.fixture
def session_id():
    return "t-" + uuid.uuid4().hex[:12]


# The partition tests build network namespaces (root, iptables) and take minutes: `make
# test-partitions` runs them (MERIDIAN_PARTITION_TESTS=1); the rest of the suite does not.
if os.environ.get("MERIDIAN_PARTITION_TESTS") != "1":
    collect_ignore = ["test_cluster_partitions.py", "test_cluster_partition_defects.py"]


# `make test` runs the suite in two passes: the tests of these files one at a time (`-m serial`),
# then the rest on several workers at once (pytest-xdist, `-m "not serial"`). These measure time
# (failover within seconds, latency under attack, a slow reader's close), drive a browser (which
# takes a core), or take fixed ports (the local cluster script): beside other tests they would
# measure the machine, not the server.
SERIAL = {
    "test_abuse", "test_cluster", "test_cluster_clock", "test_cluster_pause", "test_cluster_redis_restart",
    "test_dashboard", "test_dashboard_access", "test_dashboard_busy", "test_dashboard_clusters",
    "test_dashboard_defects", "test_dashboard_features", "test_dashboard_history", "test_deploy_cluster",
    "test_keepalive", "test_meridian_js_close", "test_slow_consumer", "test_swift_client_example", "test_web_examples",
    # Schemathesis' runs take a core each, and found, beside other work, a next request that
    # reached the server with the end of a body (test_http_defects.py has the fix's test).
    "test_http_schemathesis",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "serial: run one at a time, with no other test beside it (see SERIAL)")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.module.__name__ in SERIAL:
            item.add_marker(pytest.mark.serial)


def pytest_terminal_summary(terminalreporter):
    """The abuse tests' latency table (test_abuse.py), when they ran."""
    abuse = sys.modules.get("test_abuse")
    if abuse is None or not abuse.RESULTS:
        return
    write = terminalreporter.write_line
    write("")
    write("well-behaved clients, p99 ms (unloaded -> under attack); all in artifacts/abuse.json")
    write(f"{'attack':<18} {'edit ack':>17} {'event at watcher':>17} {'ping':>17} {'edits':>11}")
    for label, r in abuse.RESULTS.items():
        u, a = r["unloaded"], r["attack"]
        pair = lambda k: f"{u[k]} -> {a[k]}"  # noqa: E731
        write(f"{label:<18} {pair('ack_p99_ms'):>17} {pair('event_p99_ms'):>17} {pair('ping_p99_ms'):>17} "
              f"{u['edits']:>4} / {a['edits']:<4}")
