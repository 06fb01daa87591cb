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


class RedisCertificates:
    """A CA of its own, and a server certificate (localhost and 127.0.0.1) and a client
    certificate it signed, made with the openssl command in a temporary directory."""

    def __init__(self):
        self.directory = Path(tempfile.mkdtemp(prefix="meridian-redis-tls-"))
        d = self.directory
        self.ca, ca_key = str(d / "ca.pem"), str(d / "ca.key")
        self.server_cert, self.server_key = str(d / "server.pem"), str(d / "server.key")
        self.client_cert, self.client_key = str(d / "client.pem"), str(d / "client.key")

        def openssl(*args):
            subprocess.run(["openssl", *args], check=True, capture_output=True)

        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", ca_key, "-out", self.ca, "-days", "1", "-subj", "/CN=meridian-test-ca")
        for name, cert, key, extensions in (
                ("localhost", self.server_cert, self.server_key, "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                ("meridian-node", self.client_cert, self.client_key, "extendedKeyUsage=clientAuth\n")):
            request, ext = str(d / f"{name}.csr"), d / f"{name}.ext"
            ext.write_text(extensions)
            openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", request, "-subj", f"/CN={name}")
            openssl("x509", "-req", "-in", request, "-CA", self.ca, "-CAkey", ca_key, "-CAcreateserial",
                    "-out", cert, "-days", "1", "-extfile", str(ext))

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)


class RedisServer:
    """`redis-server` without persistence, in a temporary directory; ready once it says so.
    With `tls` (a `RedisCertificates`) its port speaks TLS only, asking for a client certificate
    when `client_certificates`; `password` makes every connection log in first."""

    def __init__(self, tls=None, client_certificates=False, password=None):
        self.directory = Path(tempfile.mkdtemp(prefix="meridian-redis-"))
        self.port = free_port()
        self.process = None
        self.tls, self.client_certificates, self.password = tls, client_certificates, password
        self.start()

    @property
    def url(self):
        login = f":{self.password}@" if self.password else ""
        if self.tls is None:
            return f"redis://{login}127.0.0.1:{self.port}"
        query = f"?cacert={self.tls.ca}"
        if self.client_certificates:
            query += f"&cert={self.tls.client_cert}&key={self.tls.client_key}"
        return f"rediss://{login}127.0.0.1:{self.port}{query}"

    def _options(self):
        options = ["--port", str(self.port)]
        if self.tls is not None:
            options = ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", self.tls.server_cert,
                       "--tls-key-file", self.tls.server_key, "--tls-ca-cert-file", self.tls.ca,
                       "--tls-auth-clients", "yes" if self.client_certificates else "no"]
        if self.password:
            options += ["--requirepass", self.password]
        return options

    def start(self, timeout=20):
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(
            [binary, *self._options(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
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
        cli = [shutil.which("redis-cli") or "/usr/bin/redis-cli", "-p", str(self.port)]
        if self.tls is not None:
            cli += ["--tls", "--cacert", self.tls.ca]
            if self.client_certificates:
                cli += ["--cert", self.tls.client_cert, "--key", self.tls.client_key]
        if self.password:
            cli += ["--no-auth-warning", "-a", self.password]
        return subprocess.run([*cli, *map(str, args)], capture_output=True, text=True, timeout=10).stdout.strip()

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
