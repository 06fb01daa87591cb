"""What of Deploy/ can be checked on this machine: the install script into a
temporary prefix, the server started from that prefix with the example
config, the systemd unit (systemd-analyze verify), the Kubernetes manifest
and the container file's stages."""

import json
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import REPO, Server, binary

DEPLOY = REPO / "Deploy"


@pytest.fixture(scope="module")
def prefix():
    path = Path(tempfile.mkdtemp(prefix="meridian-prefix-"))
    result = subprocess.run([str(DEPLOY / "install.sh"), str(path), str(binary())], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return path


def test_install_lays_out_binary_config_unit_and_docs(prefix):
    assert (prefix / "bin" / "meridian").stat().st_mode & 0o111
    assert json.loads((prefix / "etc" / "meridian" / "meridian.json").read_text()) == json.loads((DEPLOY / "meridian.json").read_text())
    assert (prefix / "lib" / "systemd" / "system" / "meridian.service").exists()
    assert (prefix / "share" / "doc" / "meridian" / "openapi.yaml").exists()


def test_the_installed_server_with_the_example_config_answers_healthz(prefix, monkeypatch):
    data = tempfile.mkdtemp(prefix="meridian-prefix-data-")
    monkeypatch.setenv("MERIDIAN_BIN", str(prefix / "bin" / "meridian"))
    # The example config as installed; flags move it to a free port and a temporary data directory.
    secret = prefix / "etc" / "meridian" / "jwt-secret"
    assert secret.stat().st_mode & 0o077 == 0, "the token secret is readable by its owner only"
    assert len(secret.read_text().strip()) >= 32
    server = Server("--config", str(prefix / "etc" / "meridian" / "meridian.json"), "--host", "127.0.0.1", "--data-dir", data,
                    "--auth", "jwt", "--jwt-secret-file", str(secret))
    try:
        with urllib.request.urlopen(f"http://{server.host}:{server.port}/healthz", timeout=10) as response:
            assert response.status == 200 and json.loads(response.read()) == {"status": "ok"}
        assert (Path(data) / "meridian.sqlite").exists()
    finally:
        server.stop()


def test_the_example_config_is_complete_and_valid(prefix):
    result = subprocess.run([str(prefix / "bin" / "meridian"), "serve", "--config", str(DEPLOY / "meridian.json"), "--print-config"],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads((DEPLOY / "meridian.json").read_text())


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_systemd_unit_verifies(prefix):
    # The unit names /usr/local; verify a copy pointing at the temporary prefix.
    unit_dir = Path(tempfile.mkdtemp(prefix="meridian-unit-"))
    unit = unit_dir / "meridian.service"
    unit.write_text((DEPLOY / "meridian.service").read_text().replace("/usr/local", str(prefix)))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    problems = [line for line in (result.stdout + result.stderr).splitlines() if "meridian.service" in line]
    assert result.returncode == 0 and not problems, result.stdout + result.stderr
    text = unit.read_text()
    for setting in ("DynamicUser=yes", "ProtectSystem=strict", "StateDirectory=meridian", "NoNewPrivileges=yes"):
        assert setting in text


def test_the_kubernetes_manifest_has_probes_and_graceful_termination():
    docs = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text())}
    assert {"Deployment", "Service", "ConfigMap", "PersistentVolumeClaim"} <= set(docs)
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["terminationGracePeriodSeconds"] >= 30
    assert docs["Deployment"]["spec"]["strategy"]["type"] == "Recreate"
    secret_file = container["args"][container["args"].index("--jwt-secret-file") + 1]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    assert any(secret_file.startswith(mounts[name] + "/") for name in secrets), "the token secret comes from a Secret volume"
    config = json.loads(docs["ConfigMap"]["data"]["meridian.json"])
    assert config["dataDir"] == container["volumeMounts"][0]["mountPath"]
    assert docs["Service"]["spec"]["selector"] == docs["Deployment"]["spec"]["selector"]["matchLabels"]


def test_the_container_file_builds_with_swift_and_runs_on_slim_debian():
    lines = [l.strip() for l in (DEPLOY / "Containerfile").read_text().splitlines()]
    stages = [l for l in lines if l.startswith("FROM ")]
    assert len(stages) == 2 and stages[0].startswith("FROM swift:") and stages[1] == "FROM debian:bookworm-slim"
    assert any("libwebsockets17" in l for l in lines)
    assert any("Deploy/install.sh /opt/meridian" in l for l in lines)
    assert "STOPSIGNAL SIGTERM" in lines
    # The map libraries the dashboard serves, where the default settings look for them.
    assert any("libjs-leaflet" in l for l in lines)
    assert any(l.startswith("RUN Tools/vendor-maplibre.sh /opt/maplibre-gl") for l in lines)
    assert "COPY --from=build /opt/maplibre-gl /usr/local/share/javascript/maplibre-gl" in lines
