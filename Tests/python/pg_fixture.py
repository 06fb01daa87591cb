"""A PostgreSQL server of the tests' own, for `meridian serve --store postgres://...`.

`PostgresServer()` runs `initdb` into a fresh temporary directory (trust
authentication, user `meridian`, no fsync) and starts `postgres` on a free
loopback port, ready once `pg_isready` answers. It can be stopped and started
again on the same port and data (fault and cluster tests), and `close()`
removes it. initdb and postgres refuse to run as root: as root they run as the
`postgres` user (`runuser`), in a directory given to that user. No system
PostgreSQL service is used. The pytest fixtures are in conftest.py.
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path


def binaries():
    """PostgreSQL's binary directory: `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin."""
    if shutil.which("pg_config"):
        result = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        bindir = result.stdout.strip()
        if result.returncode == 0 and os.access(os.path.join(bindir, "initdb"), os.X_OK):
            return bindir
    found = [d for d in glob.glob("/usr/lib/postgresql/*/bin") if os.access(os.path.join(d, "initdb"), os.X_OK)]
    if not found:
        raise RuntimeError("PostgreSQL not found (no pg_config, nothing in /usr/lib/postgresql): make test-deps installs it")
    return max(found, key=lambda d: int(Path(d).parent.name) if Path(d).parent.name.isdigit() else 0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self, settings=()):
        """`settings`: more `name=value` server settings (`-c`), e.g. TLS's."""
        self.bindir = binaries()
        self.settings = list(settings)
        self.directory = Path(tempfile.mkdtemp(prefix="meridian-pg-"))
        self.data = self.directory / "data"
        self.log_path = self.directory / "postgres.log"
        self.process = None
        self.as_server = []
        try:
            if os.getuid() == 0:
                user = pwd.getpwnam("postgres")
                os.chown(self.directory, user.pw_uid, user.pw_gid)
                self.as_server = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", "postgres", "--"]
            self.port = free_port()
            self._run("initdb", "-D", str(self.data), "--auth=trust", "-U", "meridian", "--encoding=UTF8", "--no-sync",
                      as_server=True)
            self.start()
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def url(self, database="postgres"):
        return f"postgres://meridian@127.0.0.1:{self.port}/{database}"

    def create_database(self):
        """A new empty database, as a postgres:// URL."""
        name = "t_" + uuid.uuid4().hex
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "meridian", name)
        return self.url(name)

    def psql(self, url, sql):
        """Runs `sql` in the database of `url`; returns its rows, unaligned, without headers."""
        database = url.rsplit("/", 1)[1]
        return self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "meridian", "-d", database,
                         "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql).strip()

    def start(self, timeout=60):
        """Starts the server (again) on `port`; returns once it accepts connections."""
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [*self.as_server, self._tool("postgres"), "-D", str(self.data), "-p", str(self.port),
                 "-k", str(self.directory), "-c", "listen_addresses=127.0.0.1",
                 "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                 *[arg for setting in self.settings for arg in ("-c", setting)]],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        # A bounded poll: PostgreSQL says it is ready only through its socket.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited at start: {self.log_tail()}")
            ready = subprocess.run([self._tool("pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "meridian",
                                    "-t", "2"], capture_output=True)
            if ready.returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError(f"postgres not ready within {timeout} s: {self.log_tail()}")

    def stop(self):
        """Stops the server (fast shutdown: sessions end at once) and waits until it has exited."""
        if self.process is None or self.process.poll() is not None:
            return
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", as_server=True)
        self.process.wait(60)

    def close(self):
        """Stops the server and removes its directory."""
        try:
            self.stop()
        finally:
            if self.process is not None and self.process.poll() is None:
                self.process.kill()
                self.process.wait(10)
            shutil.rmtree(self.directory, ignore_errors=True)

    def log_tail(self):
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def _tool(self, name):
        return os.path.join(self.bindir, name)

    def _run(self, tool, *args, as_server=False):
        command = [*(self.as_server if as_server else []), self._tool(tool), *args]
        result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)} failed ({result.returncode}): {result.stdout}{result.stderr}")
        return result.stdout
