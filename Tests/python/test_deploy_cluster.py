"""The cluster's deployment files: the Kubernetes manifest (parsed and checked for
its parts, probes and configuration) and Deploy/cluster-local.sh, started for real:
three nodes on loopback with their own Redis and PostgreSQL, an annotation added
through node 1 reaching a member on node 3, and SIGTERM stopping every process the
script started and removing its directory."""

import glob
import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, binary
from meridian_client import Client, run

DEPLOY = REPO / "Deploy"
SCRIPT = DEPLOY / "cluster-local.sh"
# The nodes of a debug build on a busy machine take a while to answer /readyz.
READY_TIMEOUT = 120


def manifest():
    return [d for d in yaml.safe_load_all((DEPLOY / "kubernetes-cluster.yaml").read_text()) if d]


def one(docs, kind, name):
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def node_container(docs):
    containers = one(docs, "Deployment", "meridian")["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "meridian")


def test_the_cluster_manifest_has_every_part_and_no_namespace():
    docs = manifest()
    assert {d["kind"] for d in docs} == {"Secret", "StatefulSet", "Service", "Deployment", "PodDisruptionBudget"}
    for kind, name in [("Secret", "meridian-cluster"), ("StatefulSet", "meridian-postgres"), ("Service", "meridian-postgres"),
                       ("Deployment", "meridian-redis"), ("Service", "meridian-redis"), ("Deployment", "meridian"),
                       ("Service", "meridian"), ("PodDisruptionBudget", "meridian")]:
        one(docs, kind, name)
    assert all(d["kind"] != "Namespace" and "namespace" not in d["metadata"] for d in docs), "applied in the current namespace"
    # Every selector finds its pods.
    for d in docs:
        if d["kind"] in ("StatefulSet", "Deployment"):
            assert d["spec"]["selector"]["matchLabels"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
    assert one(docs, "StatefulSet", "meridian-postgres")["spec"]["serviceName"] == "meridian-postgres"


def test_the_nodes_have_probes_graceful_termination_and_requests():
    docs = manifest()
    deployment = one(docs, "Deployment", "meridian")
    assert deployment["spec"]["replicas"] == 3
    pod = deployment["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] >= 30
    container = node_container(docs)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    budget = one(docs, "PodDisruptionBudget", "meridian")
    assert budget["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert budget["spec"].get("maxUnavailable") == 1 or budget["spec"].get("minAvailable") == 2


def test_the_nodes_find_redis_postgres_and_their_own_address_in_the_environment():
    docs = manifest()
    env = node_container(docs)["env"]
    names = [e["name"] for e in env]
    by_name = {e["name"]: e for e in env}
    assert {"MERIDIAN_CLUSTER", "MERIDIAN_STORE", "MERIDIAN_ADVERTISE"} <= set(names)
    assert by_name["MERIDIAN_CLUSTER"]["value"].startswith("redis://meridian-redis:")
    assert by_name["MERIDIAN_STORE"]["value"].startswith("postgres://")
    assert "@meridian-postgres:5432/" in by_name["MERIDIAN_STORE"]["value"]
    # Variables referenced as $(NAME) must come earlier in the list, or Kubernetes leaves them as they are.
    for name, value in ((e["name"], e.get("value", "")) for e in env):
        for referenced in [n for n in names if f"$({n})" in value]:
            assert names.index(referenced) < names.index(name), f"{name} uses {referenced} before it is defined"
    advertise = by_name["MERIDIAN_ADVERTISE"]["value"]
    pod_ip = [n for n in names if f"$({n})" in advertise]
    assert pod_ip and by_name[pod_ip[0]]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    # The password and the JWT secret come from the Secret in the manifest.
    secret = one(docs, "Secret", "meridian-cluster")
    keys = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    password = [n for n in names if f"$({n})" in by_name["MERIDIAN_STORE"]["value"]]
    assert password and by_name[password[0]]["valueFrom"]["secretKeyRef"] == {"name": "meridian-cluster", "key": "postgres-password"}
    assert "postgres-password" in keys and "jwt-secret" in keys
    postgres = one(docs, "StatefulSet", "meridian-postgres")["spec"]["template"]["spec"]["containers"][0]
    assert {e["name"]: e.get("valueFrom") for e in postgres["env"]}["POSTGRES_PASSWORD"]["secretKeyRef"]["name"] == "meridian-cluster"
    container = node_container(docs)
    args = container["args"]
    secret_file = args[args.index("--jwt-secret-file") + 1]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = one(docs, "Deployment", "meridian")["spec"]["template"]["spec"]["volumes"]
    secrets = [v["name"] for v in volumes if v.get("secret", {}).get("secretName") == "meridian-cluster"]
    assert any(secret_file.startswith(mounts[name] + "/") for name in secrets), "the token secret comes from the Secret"


def test_the_service_has_no_session_affinity_and_postgres_alone_keeps_a_volume():
    docs = manifest()
    service = one(docs, "Service", "meridian")
    assert service["spec"].get("sessionAffinity", "None") != "ClientIP"
    assert service["spec"]["selector"] == one(docs, "Deployment", "meridian")["spec"]["selector"]["matchLabels"]
    assert one(docs, "StatefulSet", "meridian-postgres")["spec"]["volumeClaimTemplates"]
    redis = one(docs, "Deployment", "meridian-redis")["spec"]["template"]["spec"]
    assert "volumes" not in redis
    args = redis["containers"][0]["args"]
    assert args[args.index("--save") + 1] == "" and args[args.index("--appendonly") + 1] == "no"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (apt-get install shellcheck)")
def test_the_script_is_shellcheck_clean():
    result = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_script_names_what_is_missing_with_its_package():
    # A PATH holding only the basic tools the script uses, none of the servers.
    tools = Path(tempfile.mkdtemp(prefix="meridian-tools-"))
    try:
        for tool in ("bash", "dirname", "find", "sort", "tail", "id", "readlink", "sed"):
            (tools / tool).symlink_to(shutil.which(tool))
        env = {**os.environ, "PATH": str(tools), "PG_BIN": "/nonexistent", "MERIDIAN_BIN": "/nonexistent/meridian"}
        result = subprocess.run([str(tools / "bash"), str(SCRIPT)], capture_output=True, text=True, env=env, timeout=30)
    finally:
        shutil.rmtree(tools)
    assert result.returncode == 1, result.stderr
    for named in ("redis-server (apt-get install redis-server)", "apt-get install postgresql", "/nonexistent/meridian"):
        assert named in result.stderr
    assert not result.stdout


def missing_services():
    missing = []
    if shutil.which("redis-server") is None:
        missing.append("redis-server")
    if shutil.which("initdb") is None and not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        missing.append("PostgreSQL")
    return missing


def consecutive_free_ports(count):
    """A port such that it and the next count-1 are free on loopback (bound once to check)."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        held = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    pytest.fail(f"no {count} consecutive free ports")


def processes():
    """Every process as pid -> (parent pid, start time, state)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry.name)] = (int(fields[1]), fields[19], fields[0])
    return table


def descendants(root):
    """(pid, start time) of every process below `root`."""
    table = processes()
    children = {}
    for pid, (parent, start, _) in table.items():
        children.setdefault(parent, []).append((pid, start))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


def running(process):
    pid, start = process
    entry = processes().get(pid)
    return entry is not None and entry[1] == start and entry[2] != "Z"


def command_line(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


class Script:
    """Deploy/cluster-local.sh in the background in a process group of its own; its
    stdout is read line by line into a queue."""

    def __init__(self, *args):
        self.log = tempfile.NamedTemporaryFile(prefix="meridian-cluster-", suffix=".log", delete=False)
        env = {**os.environ, "MERIDIAN_BIN": str(binary())}
        self.process = subprocess.Popen([str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL,
                                        text=True, env=env, start_new_session=True)
        self.lines = queue.Queue()
        self.output = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def line_starting(self, prefix, timeout):
        """The first line starting with `prefix`, and the lines before it."""
        deadline = time.monotonic() + timeout
        before = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no line starting with {prefix!r} after {timeout} s; output {before}; stderr {self.stderr()[-3000:]}")
            if line is None:
                pytest.fail(f"the script exited ({self.process.wait()}) before {prefix!r}; output {before}; stderr {self.stderr()[-3000:]}")
            if line.startswith(prefix):
                return line, before
            before.append(line)

    def stderr(self):
        return Path(self.log.name).read_text(errors="replace")


@pytest.mark.skipif(bool(missing_services()),
                    reason=f"{' and '.join(missing_services())} not installed "
                           "(apt-get install redis-server postgresql; `make test` installs them)")
def test_the_local_cluster_relays_between_nodes_and_stops_everything_on_sigterm(session_id):
    if not binary().exists():
        pytest.fail(f"server binary not found at {binary()}: run `swift build` or set MERIDIAN_BIN")
    base = consecutive_free_ports(3)
    script = Script("--base-port", str(base), "--ready-timeout", str(READY_TIMEOUT))
    started = []
    try:
        ready, before = script.line_starting("cluster ready", READY_TIMEOUT + 30)
        urls = [word for word in ready.split() if word.startswith("ws://")]
        assert urls == [f"ws://127.0.0.1:{port}/" for port in (base, base + 1, base + 2)]
        directory = Path(next(line for line in before if line.startswith("directory: ")).split()[1])
        assert directory.is_dir()

        started = descendants(script.process.pid)
        commands = [command_line(pid) for pid, _ in started]
        nodes = [c for c in commands if b"serve" in c and b"--cluster" in c]
        assert len(nodes) == 3, commands
        # Redis rewrites its command line ("redis-server 127.0.0.1:PORT").
        programs = {os.path.basename(c[0].split()[0]) for c in commands if c and c[0]}
        assert {b"redis-server", b"postgres"} <= programs, commands

        async def relayed():
            first = await Client.open(urls[0], "first")
            third = await Client.open(urls[2], "third")
            try:
                await first.join(session_id)
                await third.join(session_id)
                await first.ok({"type": "annotation.add", "annotation": {
                    "id": "pin", "type": "point", "coordinate": {"latitude": 52.5, "longitude": 13.4}}})
                added, _ = await third.until(lambda m: m["type"] == "annotation.added")
                assert added["annotation"]["id"] == "pin"
                assert added["annotation"]["coordinate"] == {"latitude": 52.5, "longitude": 13.4}
            finally:
                await first.ws.close()
                await third.ws.close()

        run(relayed(), timeout=60)

        script.process.send_signal(signal.SIGTERM)
        status = script.process.wait(60)
        assert status == 143, f"exit status {status}; stderr {script.stderr()[-3000:]}"
        # The script waits for each of its servers; what is left may only be a moment from being reaped.
        deadline = time.monotonic() + 5
        while any(running(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [(pid, command_line(pid)) for pid, start in started if running((pid, start))]
        assert not left, f"still running after the script exited: {left}"
        assert not directory.exists(), f"{directory} was not removed"
        script.line_starting("cluster stopped", 10)
    finally:
        if script.process.poll() is None:
            script.process.send_signal(signal.SIGTERM)
            try:
                script.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(script.process.pid, signal.SIGKILL)
        for pid, start in started:
            if running((pid, start)):
                os.kill(pid, signal.SIGKILL)
        script.log.close()
