"""A Meridian cluster on test hosts of its own: network namespaces on one machine, so that
links between a node and Redis, PostgreSQL or everything can be cut, delayed, made lossy and
healed while the processes run on.

Layout (as root; one run's names carry a short random suffix SFX):

    root namespace: bridge mrdSFX, 10.213.N.1/24 (the tests' clients reach every node through it)
    mrdSFX-svc:     eth0 with 10.213.N.2 (redis-server, port 6379) and 10.213.N.3 (PostgreSQL, 5432)
    mrdSFX-n1..n3:  eth0 with 10.213.N.11..13, one `meridian serve` each on port 8080

Each namespace is joined to the bridge by a veth pair (its root end named mrdSFX-svc / -n1 …
likewise) and has its loopback up. N is picked per run among /24s of 10.213.0.0/16 that no
interface of the machine uses. Nothing leaves these hosts: no namespace has a default route.

Faults (each healed by `heal`, and all by `heal_all` and at teardown):

- `cut(node, redis=True, postgres=False)`: packets between the node and Redis's and/or
  PostgreSQL's address are dropped silently at both ends (iptables INPUT in the node's
  namespace and in the services' namespace), as a link cut between them: connections stay
  open, retransmissions go unanswered.
- `isolate(node)`: the node's link down (its veth's root end), nothing passes either way.
- `degrade(node, delay_ms, loss)`: every packet the node sends is delayed and a share of
  them dropped. This kernel has no sch_netem (nor sch_fq or act_gact), so `tc netem` cannot
  be used: an iptables NFQUEUE rule in the node's namespace hands its outgoing packets to
  nfqueue_delay.py, which sends each on after the delay (in order) or drops it.
- `flap(node, ...)`: the node's link cut and healed in turn, a bounded number of times.

Needs root, `ip netns` (iproute2), iptables (installed with apt-get when missing, as
`make test-deps` does), redis-server, PostgreSQL's binaries and the meridian binary
($MERIDIAN_BIN). Skips when not root or when `ip netns` does not work. Everything it made is
removed at teardown, even after a failure; resources left by a run that was killed (its pid
gone) are removed by the next run, from the marker file each run keeps in the temp directory.
"""

import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import binary, end_process
from pg_fixture import PostgresServer

HERE = Path(__file__).resolve().parent
MARKERS = Path(tempfile.gettempdir())
NODE_PORT = 8080
REDIS_PORT = 6379
POSTGRES_PORT = 5432
LISTENING = re.compile(r"^meridian listening on (https?)://([^:/\s]+):(\d+)")


def sh(*args, check=True, timeout=20):
    """Runs a command (no shell); returns its stdout. Raises with its output when it fails."""
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({result.returncode}): {result.stdout}{result.stderr}")
    return result.stdout


def in_ns(namespace, *args, check=True, timeout=20):
    return sh("ip", "netns", "exec", namespace, *args, check=check, timeout=timeout)


def unavailable_reason():
    """Why this machine cannot run the fixture (None when it can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not shutil.which("ip"):
        return "iproute2's `ip` is not installed"
    probe = f"mrdprobe{os.getpid()}"
    try:
        sh("ip", "netns", "add", probe)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        return f"`ip netns` is not available here: {e}"
    sh("ip", "netns", "delete", probe, check=False)
    return None


def ensure_iptables():
    if shutil.which("iptables"):
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "iptables"]):
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            pytest.fail(f"iptables is missing and `{' '.join(command)}` failed: {result.stderr[-2000:]}")
    if not shutil.which("iptables"):
        pytest.fail("iptables is still missing after apt-get install iptables")


def remove_stale_runs():
    """Removes the namespaces and bridges of earlier runs whose process is gone."""
    for marker in MARKERS.glob("meridian-netns-*.json"):
        try:
            made = json.loads(marker.read_text())
        except (OSError, ValueError):
            continue
        try:
            os.kill(made["pid"], 0)
            continue  # that run is still going
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        for namespace in made.get("namespaces", []):
            kill_namespace_processes(namespace)
            sh("ip", "link", "delete", namespace, check=False)  # the veth's root end (so both ends)
            sh("ip", "netns", "delete", namespace, check=False)
        if made.get("bridge"):
            sh("ip", "link", "delete", made["bridge"], check=False)
        for directory in made.get("directories", []):
            shutil.rmtree(directory, ignore_errors=True)
        marker.unlink(missing_ok=True)


def kill_namespace_processes(namespace):
    """SIGKILLs the processes still running in a namespace this fixture made, by their pids."""
    for _ in range(3):
        pids = [int(p) for p in sh("ip", "netns", "pids", namespace, check=False).split() if p.isdigit()]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)  # let the kernel reap them before looking again


def free_subnet():
    """A /24 of 10.213.0.0/16 that no address of this machine (any namespace we can see) is in."""
    used = sh("ip", "-4", "-o", "addr", "show", check=False) + sh("ip", "-4", "route", "show", "table", "all", check=False)
    rng = random.Random(secrets.randbits(32))
    for _ in range(200):
        third = rng.randint(1, 254)
        if f"10.213.{third}." not in used:
            return f"10.213.{third}"
    raise RuntimeError("no free /24 in 10.213.0.0/16")


class Process:
    """A child process started in a namespace; stdout/stderr to a log file unless `pipe`."""

    def __init__(self, namespace, args, log_path, pipe=False, user=None):
        self.log_path = Path(log_path)
        self.log = open(self.log_path, "ab")
        prefix = ["ip", "netns", "exec", namespace]
        if user:
            prefix += ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups"]
        self.process = subprocess.Popen([*prefix, *map(str, args)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE if pipe else self.log, stderr=self.log,
                                        text=True if pipe else None)

    def first_line(self, timeout, want=None):
        """The first stdout line (or the first containing `want`), read within `timeout`."""
        found = []

        def read():
            for line in self.process.stdout:
                if want is None or want in line:
                    found.append(line.strip())
                    break
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if found:
            # Drain the rest so that the child never blocks on a full pipe.
            threading.Thread(target=lambda out=self.process.stdout: [None for _ in out], daemon=True).start()
        return found[0] if found else None

    def alive(self):
        return self.process.poll() is None

    def log_text(self):
        try:
            self.log.flush()
            return self.log_path.read_text(errors="replace")
        except (OSError, ValueError):
            return ""

    def stop(self, sig=signal.SIGTERM, timeout=10):
        end_process(self.process, self.log, sig, timeout)


class NamespacedPostgres(PostgresServer):
    """pg_fixture's PostgreSQL, run in the services' namespace on `address`, trusting `allowed` (a CIDR)."""

    def __init__(self, namespace, address, allowed):
        self.namespace, self.address, self.allowed = namespace, address, allowed
        super().__init__()

    def url(self, database="postgres"):
        return f"postgres://meridian@{self.address}:{self.port}/{database}"

    def start(self, timeout=60):
        self.port = POSTGRES_PORT
        hba = self.data / "pg_hba.conf"
        line = f"host all all {self.allowed} trust\n"
        if line not in hba.read_text():
            with open(hba, "a") as f:
                f.write(line)
        self.server = Process(self.namespace, [self._tool("postgres"), "-D", self.data, "-p", self.port, "-k", self.directory,
                                               "-c", f"listen_addresses={self.address}", "-c", "fsync=off",
                                               "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                                               "-c", "max_connections=200"],
                              self.log_path, user="postgres")
        self.process = self.server.process
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited at start: {self.log_tail()}")
            ready = subprocess.run([self._tool("pg_isready"), "-h", self.address, "-p", str(self.port), "-U", "meridian", "-t", "2"],
                                   capture_output=True)
            if ready.returncode == 0:
                return
            time.sleep(0.05)  # a bounded poll: PostgreSQL says it is ready only through its socket
        raise RuntimeError(f"postgres not ready within {timeout} s: {self.log_tail()}")

    def create_database(self):
        name = "t_" + secrets.token_hex(8)
        self._run("createdb", "-h", self.address, "-p", str(self.port), "-U", "meridian", name)
        return self.url(name)

    def psql(self, url, sql):
        database = url.rsplit("/", 1)[1]
        return self._run("psql", "-h", self.address, "-p", str(self.port), "-U", "meridian", "-d", database,
                         "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql).strip()


class Node:
    """One `meridian serve` in its namespace."""

    def __init__(self, net, index, args):
        self.net, self.index = net, index
        self.name = f"n{index}"
        self.namespace = f"{net.prefix_name}-n{index}"
        self.veth = f"{net.prefix_name}-n{index}"  # the root end
        self.ip = f"{net.subnet}.{10 + index}"
        self.port = NODE_PORT
        self.url = f"ws://{self.ip}:{self.port}/"
        self.args = args
        self.process = None

    def __repr__(self):
        return f"<node {self.name} {self.ip}>"

    def start(self):
        self.process = Process(self.namespace, [binary(), "serve", "--host", self.ip, "--port", self.port,
                                                "--advertise", f"{self.ip}:{self.port}", *self.args],
                               self.net.directory / f"{self.name}.log", pipe=True)
        line = self.process.first_line(timeout=30)
        if not LISTENING.match(line or ""):
            text = self.process.log_text()[-3000:]
            self.process.stop(signal.SIGKILL)
            raise RuntimeError(f"{self.name} did not start: first stdout line {line!r}; log: {text}")

    def alive(self):
        return self.process is not None and self.process.alive()

    def log_text(self):
        return self.process.log_text() if self.process else ""

    def ready(self, timeout=2):
        try:
            with self.net.http.open(f"http://{self.ip}:{self.port}/readyz", timeout=timeout) as r:
                return r.status == 200
        except urllib.error.HTTPError as e:
            return e.code == 200
        except OSError:
            return False


class Redis:
    """A minimal RESP client for the test's own looks at the cluster's Redis (leases, nodes)."""

    def __init__(self, host, port):
        self.host, self.port = host, port

    def command(self, *args, timeout=2):
        payload = f"*{len(args)}\r\n".encode() + b"".join(
            f"${len(str(a).encode())}\r\n".encode() + str(a).encode() + b"\r\n" for a in args)
        with socket.create_connection((self.host, self.port), timeout=timeout) as s:
            s.sendall(payload)
            reader = s.makefile("rb")
            return self._read(reader)

    def _read(self, reader):
        line = reader.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b"-"):
            return rest.decode()
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else reader.read(n + 2)[:-2].decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read(reader) for _ in range(n)]
        raise RuntimeError(f"unexpected Redis reply {line!r}")


class NetnsCluster:
    """Three (`count`) nodes, Redis and PostgreSQL on hosts of their own, and the faults between them."""

    def __init__(self, count=3, lease_ttl=2, node_args=()):
        self.suffix = secrets.token_hex(2)
        self.prefix_name = f"mrd{self.suffix}"
        self.bridge = self.prefix_name
        self.subnet = free_subnet()
        self.lease_ttl = lease_ttl
        self.directory = Path(tempfile.mkdtemp(prefix=f"meridian-netns-{self.suffix}-"))
        self.marker = MARKERS / f"meridian-netns-{self.suffix}.json"
        self.namespaces = []
        self.services = f"{self.prefix_name}-svc"
        self.redis_ip, self.postgres_ip = f"{self.subnet}.2", f"{self.subnet}.3"
        self.http = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.redis_process = None
        self.postgres = None
        self.nodes = []
        self.faults = {}  # key -> heal function
        self.delayers = {}
        self.log = []  # (monotonic time, text) of every fault injected and healed
        self._record()
        try:
            self._network(count)
            self._services()
            self.store_url = self.postgres.create_database()
            self.secret = self.directory / "jwt-secret"
            self.secret.write_text(secrets.token_hex(32))
            args = ["--cluster", f"redis://{self.redis_ip}:{REDIS_PORT}", "--store", self.store_url,
                    "--cluster-lease-ttl", str(lease_ttl), "--threads", "1", "--idle-unload", "600",
                    "--jwt-secret-file", self.secret, "--log-level", os.environ.get("MERIDIAN_NETNS_LOG_LEVEL", "info"), *node_args]
            self.nodes = [Node(self, i + 1, args) for i in range(count)]
            for node in self.nodes:
                node.start()
            deadline = time.monotonic() + 30
            while not all(n.ready() for n in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError("nodes not ready within 30 s: " + "; ".join(
                        f"{n.name}: {n.log_text()[-800:]}" for n in self.nodes if not n.ready()))
                time.sleep(0.1)  # a bounded poll of /readyz
            self.redis = Redis(self.redis_ip, REDIS_PORT)
        except BaseException:
            self.close()
            raise

    # ---- set-up

    def _record(self):
        self.marker.write_text(json.dumps({"pid": os.getpid(), "bridge": self.bridge, "namespaces": self.namespaces,
                                           "directories": [str(self.directory)]}))

    def _namespace(self, name, addresses):
        sh("ip", "netns", "add", name)
        self.namespaces.append(name)
        self._record()
        sh("ip", "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", name)
        sh("ip", "link", "set", name, "master", self.bridge)
        sh("ip", "link", "set", name, "up")
        in_ns(name, "ip", "link", "set", "lo", "up")
        for address in addresses:
            in_ns(name, "ip", "addr", "add", f"{address}/24", "dev", "eth0")
        in_ns(name, "ip", "link", "set", "eth0", "up")

    def _network(self, count):
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        self._record()
        sh("ip", "addr", "add", f"{self.subnet}.1/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        self._namespace(self.services, [self.redis_ip, self.postgres_ip])
        for i in range(count):
            self._namespace(f"{self.prefix_name}-n{i + 1}", [f"{self.subnet}.{11 + i}"])
        # Links are up once the bridge forwards (no STP here): wait until every host answers ARP.
        deadline = time.monotonic() + 10
        for i in range(count):
            while True:
                try:
                    with socket.create_connection((f"{self.subnet}.{11 + i}", 9), timeout=1):
                        break
                except ConnectionRefusedError:
                    break  # the host is reachable (nothing listens on port 9)
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"host {self.subnet}.{11 + i} unreachable over the bridge")
                    time.sleep(0.1)  # a bounded poll while the bridge ports come up

    def _services(self):
        redis_dir = self.directory / "redis"
        redis_dir.mkdir()
        self.redis_process = Process(self.services, [shutil.which("redis-server") or "/usr/bin/redis-server",
                                                     "--bind", self.redis_ip, "--port", REDIS_PORT, "--save", "",
                                                     "--appendonly", "no", "--protected-mode", "no",
                                                     "--dir", redis_dir, "--daemonize", "no"],
                                     self.directory / "redis.log", pipe=True)
        if not self.redis_process.first_line(timeout=20, want="Ready to accept connections"):
            raise RuntimeError(f"redis-server not ready: {self.redis_process.log_text()[-2000:]}")
        self.postgres = NamespacedPostgres(self.services, self.postgres_ip, f"{self.subnet}.0/24")

    # ---- looking at the cluster

    def node_at(self, address):
        return next((n for n in self.nodes if f"{n.ip}:{n.port}" == address), None)

    def lease(self, session):
        """(owner node or None, fence or None) from the session's lease in Redis."""
        try:
            value = self.redis.command("GET", f"meridian:{{{session}}}:lease")
            if not value:
                return None, None
            number, fence = value.split()[:2]
            return self.node_at(self.redis.command("GET", f"meridian:node:{number}")), int(fence)
        except (OSError, ValueError, RuntimeError):
            return None, None

    def owner(self, session):
        return self.lease(session)[0]

    def token(self, sub, role="editor", session="*", ttl=3600):
        return sh(binary(), "token", "--secret-file", self.secret, "--sub", sub, "--name", sub, "--session", session,
                  "--role", role, "--ttl", ttl).strip()

    # ---- faults

    def _note(self, text):
        self.log.append((time.monotonic(), text))

    def _iptables(self, namespace, action, rule):
        in_ns(namespace, "iptables", "-w", "5", action, *rule)

    def cut(self, node, redis=True, postgres=False):
        """Drops the packets between `node` and Redis and/or PostgreSQL, both ways; returns the fault's key."""
        targets = [ip for ip, on in ((self.redis_ip, redis), (self.postgres_ip, postgres)) if on]
        rules = []
        for ip in targets:
            rules.append((node.namespace, ["INPUT", "-s", ip, "-j", "DROP"]))
            rules.append((self.services, ["INPUT", "-s", node.ip, "-d", ip, "-j", "DROP"]))
        for namespace, rule in rules:
            self._iptables(namespace, "-I", rule)
        key = ("cut", node.name, tuple(targets))

        def heal():
            for namespace, rule in rules:
                self._iptables(namespace, "-D", rule)
        self.faults[key] = heal
        self._note(f"cut {node.name} from {'+'.join('redis' if ip == self.redis_ip else 'postgres' for ip in targets)}")
        return key

    def isolate(self, node):
        """The node's link down: nothing passes to or from it."""
        sh("ip", "link", "set", node.veth, "down")
        key = ("isolate", node.name)

        def heal():
            sh("ip", "link", "set", node.veth, "up")
        self.faults[key] = heal
        self._note(f"isolate {node.name}")
        return key

    def degrade(self, node, delay_ms=200, loss=0.2, max_seconds=120, to=None):
        """Every packet `node` sends (to the address `to` only, when given) is delayed by `delay_ms`
        and dropped with probability `loss`."""
        delayer = Process(node.namespace, [sys.executable, HERE / "nfqueue_delay.py", "--queue", "0", "--delay-ms", delay_ms,
                                           "--loss", loss, "--max-seconds", max_seconds],
                          self.directory / f"delay-{node.name}.log", pipe=True)
        if delayer.first_line(timeout=10) != "ready":
            delayer.stop(signal.SIGKILL)
            raise RuntimeError(f"nfqueue_delay did not start: {delayer.log_text()[-1000:]}")
        rule = ["OUTPUT", "!", "-o", "lo", *(["-d", to] if to else []), "-j", "NFQUEUE", "--queue-num", "0", "--queue-bypass"]
        self._iptables(node.namespace, "-I", rule)
        key = ("degrade", node.name)

        def heal():
            try:
                self._iptables(node.namespace, "-D", rule)
            finally:
                delayer.stop()  # it sends on every packet it still holds first
        self.faults[key] = heal
        self._note(f"degrade {node.name}{f' to {to}' if to else ''}: delay {delay_ms} ms, loss {loss:.0%}")
        return key

    def heal(self, key):
        heal = self.faults.pop(key, None)
        if heal:
            heal()
            self._note(f"heal {key}")

    def heal_all(self):
        errors = []
        for key in list(self.faults):
            try:
                self.heal(key)
            except Exception as e:  # heal the rest, then report
                errors.append(f"{key}: {e}")
        if errors:
            raise RuntimeError("healing failed: " + "; ".join(errors))

    def flap(self, node, flips=4, low=0.5, high=1.0, rng=random):
        """Cuts the node's link and heals it `flips` times, each state lasting low…high seconds (blocking)."""
        for _ in range(flips):
            key = self.isolate(node)
            time.sleep(rng.uniform(low, high))  # the link stays down this long
            self.heal(key)
            time.sleep(rng.uniform(low, high))  # and up this long

    # ---- teardown

    def close(self):
        try:
            self.heal_all()
        except Exception:
            pass  # the namespaces go away below, and their rules with them
        for node in self.nodes:
            if node.process:
                node.process.stop()
        if self.postgres is not None:
            try:
                self.postgres.close()
            except Exception:
                pass
        if self.redis_process is not None:
            self.redis_process.stop(signal.SIGKILL)
        for namespace in self.namespaces:
            kill_namespace_processes(namespace)
            # The veth's root end, and with it the other: a namespace whose last process is gone may live
            # on a while (sockets still closing), and its veth with it.
            sh("ip", "link", "delete", namespace, check=False)
            sh("ip", "netns", "delete", namespace, check=False)
        sh("ip", "link", "delete", self.bridge, check=False)
        # The nodes' logs outlive the run, for reading what a failed one did.
        kept = HERE.parent.parent / "artifacts" / "netns-logs"
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True, exist_ok=True)
        for log in self.directory.glob("*.log"):
            shutil.copy(log, kept / log.name)
        shutil.rmtree(self.directory, ignore_errors=True)
        self.marker.unlink(missing_ok=True)

    def leftovers(self):
        """What of this run still exists (for a teardown check): namespaces, veths and the bridge."""
        names = sh("ip", "netns", "list", check=False)
        left = [n for n in self.namespaces if re.search(rf"^{re.escape(n)}\b", names, re.M)]
        links = sh("ip", "-o", "link", "show", check=False)
        left += [name for name in [self.bridge, *self.namespaces] if re.search(rf"^\d+: {re.escape(name)}[@:]", links, re.M)]
        return left


@pytest.fixture
def netns_cluster():
    """A NetnsCluster of three nodes (lease time 2 s), torn down after the test whatever happened."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    ensure_iptables()
    remove_stale_runs()
    cluster = NetnsCluster(count=3, lease_ttl=2)
    try:
        yield cluster
    finally:
        crashed = [n for n in cluster.nodes if not n.alive()]
        logs = {n.name: n.log_text()[-3000:] for n in crashed}
        cluster.close()
        left = cluster.leftovers()
    assert not left, f"left behind after teardown: {left}"
    assert not crashed, f"a node exited during the test: {logs}"
