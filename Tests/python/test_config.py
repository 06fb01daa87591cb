"""Configuration layering (flags > MERIDIAN_* environment > file > defaults),
--print-config, and start-up refusals with clear messages."""

import json
import os
import socket
import subprocess
import tempfile
from pathlib import Path

from conftest import Server, binary


def meridian(*args, env=None, timeout=20):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MERIDIAN_")}
    full_env.update(env or {})
    return subprocess.run([str(binary()), "serve", *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def write_config(values):
    path = Path(tempfile.mkdtemp(prefix="meridian-config-")) / "meridian.json"
    path.write_text(json.dumps(values))
    return str(path)


def test_print_config_layers_flags_over_environment_over_file_over_defaults():
    config = write_config({"port": 1111, "maxSessions": 7, "dataDir": "/from/file", "logLevel": "debug", "idleUnload": 12.5})
    result = meridian("--config", config, "--log-level", "error", "--print-config",
                      env={"MERIDIAN_MAX_SESSIONS": "8", "MERIDIAN_LOG_LEVEL": "warning", "MERIDIAN_DRAG_POLICY": "priority"})
    assert result.returncode == 0, result.stderr
    effective = json.loads(result.stdout)
    assert effective["port"] == 1111                # file
    assert effective["maxSessions"] == 8            # environment over file
    assert effective["logLevel"] == "error"         # flag over environment and file
    assert effective["dragPolicy"] == "priority"    # environment over default
    assert effective["dataDir"] == "/from/file"
    assert effective["idleUnload"] == 12.5
    assert effective["historySize"] == 4096         # default
    assert effective["host"] == "127.0.0.1"


def test_defaults_alone():
    result = meridian("--print-config")
    assert result.returncode == 0, result.stderr
    effective = json.loads(result.stdout)
    assert effective["port"] == 8080 and effective["dataDir"] is None and effective["maxSessions"] == 10000


def test_print_config_never_prints_a_password():
    result = meridian("--print-config", "--store", "postgres://maps:hunter2@db.internal:5432/maps",
                      env={"MERIDIAN_CLUSTER": "redis://127.0.0.1:6379"})
    assert result.returncode == 0, result.stderr
    assert "hunter2" not in result.stdout + result.stderr
    effective = json.loads(result.stdout)
    assert effective["store"] == "postgres://maps:***@db.internal:5432/maps"
    assert effective["cluster"] == "redis://127.0.0.1:6379"


def test_an_unknown_config_key_is_refused_by_name():
    result = meridian("--config", write_config({"prot": 1}), "--print-config")
    assert result.returncode != 0
    assert 'unknown key "prot"' in result.stderr


def test_a_bad_environment_value_is_refused_by_name():
    result = meridian("--print-config", env={"MERIDIAN_PORT": "eighty"})
    assert result.returncode != 0
    assert "MERIDIAN_PORT=eighty: not an integer" in result.stderr


def test_an_invalid_value_is_refused_whatever_its_source():
    result = meridian("--print-config", env={"MERIDIAN_DRAG_POLICY": "whoever"})
    assert result.returncode != 0
    assert 'dragPolicy "whoever"' in result.stderr


def test_a_data_directory_that_cannot_be_created_stops_start_up():
    base = Path(tempfile.mkdtemp(prefix="meridian-blocked-"))
    (base / "file").write_text("not a directory")
    result = meridian("--port", "0", "--auth", "none", "--data-dir", str(base / "file" / "data"))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "cannot open the session store" in result.stderr and "cannot create the data directory" in result.stderr
    assert "listening" not in result.stdout


def test_a_corrupt_store_stops_start_up():
    base = Path(tempfile.mkdtemp(prefix="meridian-corrupt-"))
    (base / "meridian.sqlite").write_bytes(b"garbage, not an SQLite file" * 100)
    result = meridian("--port", "0", "--auth", "none", "--data-dir", str(base))
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"cannot open the session store at {base / 'meridian.sqlite'}: file is not a database" in result.stderr


def test_a_config_file_configures_a_running_server(session_id):
    data = tempfile.mkdtemp(prefix="meridian-data-")
    server = Server("--config", write_config({"dataDir": data, "maxSessions": 3}))
    try:
        assert server.alive()
        assert (Path(data) / "meridian.sqlite").exists()
    finally:
        server.stop()


def test_edge_settings_from_environment_flags_and_file():
    config = write_config({"maxConnections": 500, "allowedOrigins": ["https://file.example"], "handshakeTimeout": 4})
    result = meridian("--config", config, "--max-connections-per-ip", "9", "--print-config",
                      env={"MERIDIAN_ALLOWED_ORIGINS": "https://a.example, https://b.example",
                           "MERIDIAN_MAX_CONNECTIONS_PER_IP": "7", "MERIDIAN_TLS_CERT": "/c.pem", "MERIDIAN_TLS_KEY": "/k.pem"})
    assert result.returncode == 0, result.stderr
    effective = json.loads(result.stdout)
    assert effective["allowedOrigins"] == ["https://a.example", "https://b.example"]  # environment over file
    assert effective["maxConnections"] == 500                                        # file
    assert effective["maxConnectionsPerIp"] == 9                                     # flag over environment
    assert effective["handshakeTimeout"] == 4
    assert effective["tlsCert"] == "/c.pem" and effective["tlsKey"] == "/k.pem"


def test_edge_defaults():
    effective = json.loads(meridian("--print-config").stdout)
    assert effective["maxConnections"] == 100000 and effective["maxConnectionsPerIp"] == 1000
    assert effective["handshakeTimeout"] == 10 and effective["allowedOrigins"] == []
    assert effective["tlsCert"] is None and effective["tlsKey"] is None


def test_a_store_that_is_not_postgresql_is_refused_without_its_password():
    result = meridian("--port", "0", "--auth", "none", "--store", "mysql://root:hunter2@db.example/maps")
    assert result.returncode != 0 and "listening" not in result.stdout
    assert 'store "mysql://root@db.example/maps": use a postgres://user:password@host:port/database URL' in result.stderr
    assert "hunter2" not in result.stderr


def test_an_unreachable_store_stops_start_up_with_the_cause():
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgres://meridian:hunter2@127.0.0.1:{port}/maps"
    result = meridian("--port", "0", "--auth", "none", env={"MERIDIAN_STORE": url})
    assert result.returncode == 3, result.stdout + result.stderr
    assert (f"cannot open the session store at postgres://meridian@127.0.0.1:{port}/maps: cannot connect: Connection refused"
            in result.stderr)
    assert "hunter2" not in result.stderr and "listening" not in result.stdout


def test_the_store_is_unset_by_default_and_read_from_the_file():
    assert json.loads(meridian("--print-config").stdout)["store"] is None
    url = "postgres://meridian@db.example:5432/maps"
    effective = json.loads(meridian("--config", write_config({"store": url}), "--print-config").stdout)
    assert effective["store"] == url
