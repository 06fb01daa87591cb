"""A Meridian cluster of the tests' own: a `redis-server` on a free loopback port
and nodes (`meridian serve --cluster redis://… --store postgres://…`), each a
real process that a test can SIGKILL, SIGSTOP or restart."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from conftest import Server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """`redis-server` without persistence, in a temporary directory; ready once it says so."""

    def __init__(self):
        self.directory = Path(tempfile.mkdtemp(prefix="meridian-redis-"))
        self.port = free_port()
        self.process = None
        self.start()

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def start(self, timeout=20):
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory), "--daemonize", "no"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + timeout
        for line in self.process.stdout:
            if "Ready to accept connections" in line:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server not ready")
        else:
            raise RuntimeError(f"redis-server on port {self.port} exited at start")
        # Drain the rest of its output so that it never blocks on a full pipe.
        import threading
        threading.Thread(target=lambda out=self.process.stdout: [None for _ in out], daemon=True).start()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def command(self, *args):
        """One command through redis-cli; its output, stripped."""
        cli = shutil.which("redis-cli") or "/usr/bin/redis-cli"
        return subprocess.run([cli, "-p", str(self.port), *map(str, args)], capture_output=True, text=True, timeout=10).stdout.strip()

    def close(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class Cluster:
    """Nodes sharing one Redis and one PostgreSQL database; `nodes[i]` is a conftest `Server`."""

    def __init__(self, redis, store_url, count=3, lease_ttl=2, threads=1):
        self.redis, self.store_url, self.lease_ttl, self.threads = redis, store_url, lease_ttl, threads
        self.nodes = [self.start_node() for _ in range(count)]

    def start_node(self):
        port = free_port()
        return Server("--cluster", self.redis.url, "--store", self.store_url, "--cluster-lease-ttl", str(self.lease_ttl),
                      "--threads", str(self.threads), "--port", str(port), "--advertise", f"127.0.0.1:{port}",
                      "--idle-unload", "600")

    def owner(self, session):
        """The node (a `Server`) whose lease the session has, or None."""
        value = self.redis.command("GET", f"meridian:{{{session}}}:lease")
        if not value:
            return None
        address = self.redis.command("GET", f"meridian:node:{value.split()[0]}")
        return next((n for n in self.nodes if f"127.0.0.1:{n.port}" == address and n.alive()), None)

    def describe(self, session):
        lease = self.redis.command("GET", f"meridian:{{{session}}}:lease")
        nodes = {n: self.redis.command("GET", f"meridian:node:{n}") for n in range(1, int(self.redis.command("GET", "meridian:nodes") or 0) + 1)}
        return f"lease {lease!r}, nodes {nodes}, running {[n.port for n in self.nodes if n.alive()]}"

    def fence(self, session):
        value = self.redis.command("GET", f"meridian:{{{session}}}:lease")
        return int(value.split()[1]) if value else None

    def kill(self, node):
        """SIGKILL: no lease given up, nothing flushed."""
        node.process.send_signal(signal.SIGKILL)
        node.process.wait(10)
        self.nodes.remove(node)

    def replace(self, node):
        """Kills `node` and starts a new one in its place."""
        self.kill(node)
        self.nodes.append(self.start_node())

    def ready(self, node):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/readyz", timeout=2) as r:
                return r.status == 200
        except urllib.error.HTTPError as e:
            return e.code == 200
        except OSError:
            return False

    def close(self):
        for node in self.nodes:
            node.stop()
