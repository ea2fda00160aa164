"""The CLI by subprocess: --json parsed back, exit codes scripts rely on, api/doctor end to end."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from interface_support import PYTHON, cli_env, free_port

from attestor_arango.errors import AccessDenied, StoreError
from attestor_arango.interfaces.api.auth import hash_key
from attestor_arango.interfaces.client import MemoryClient


def cli(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", *args],
        env=cli_env(home, **(env or {})),
        capture_output=True,
        text=True,
        timeout=120,
    )


def ok_json(home: Path, *args: str, **env: str) -> Any:
    done = cli(home, *args, "--json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_write_read_and_history_with_json(tmp_path: Path) -> None:
    first = ok_json(
        tmp_path,
        "add",
        "Alice lives in Paris",
        "--entity",
        "Alice",
        "--category",
        "city",
        "--tag",
        "geo",
        "--metadata",
        '{"src": "chat"}',
    )
    assert first["tags"] == ["geo"] and first["metadata"] == {"src": "chat"}
    second = ok_json(
        tmp_path, "add", "Alice lives in Lyon", "--entity", "Alice", "--category", "city"
    )
    assert second["supersedes"] == first["id"]
    assert ok_json(tmp_path, "get", first["id"])["status"] == "superseded"
    as_of = ok_json(tmp_path, "get", first["id"], "--as-of", second["t_created"])
    assert as_of["id"] == first["id"]
    assert [m["id"] for m in ok_json(tmp_path, "timeline", "Alice")] == [first["id"], second["id"]]
    assert [m["id"] for m in ok_json(tmp_path, "list")] == [second["id"]]
    assert len(ok_json(tmp_path, "list", "--status", "all")) == 2
    assert [m["id"] for m in ok_json(tmp_path, "search", "Lyon")] == [second["id"]]
    recall = ok_json(tmp_path, "recall", "where does Alice live")
    assert recall["results"][0]["memory"]["id"] == second["id"]
    pack = ok_json(tmp_path, "recall", "where does Alice live", "--pack")
    assert second["id"] in json.dumps(pack)
    stats = ok_json(tmp_path, "stats")
    assert (stats["total"], stats["active"], stats["superseded"]) == (2, 1, 1)
    chain = ok_json(tmp_path, "audit", "--verify")
    assert chain["ok"] is True and chain["entries"] >= 1
    log = ok_json(tmp_path, "audit")
    assert [e["action"] for e in log] == ["add", "add", "supersede"]
    forgotten = ok_json(tmp_path, "forget", second["id"], "--reason", "moved")
    assert forgotten["status"] == "archived"
    assert [e["target"] for e in ok_json(tmp_path, "audit", "--deletions")] == [second["id"]]
    human = cli(tmp_path, "timeline", "Alice")
    assert human.returncode == 0 and "Alice lives in Lyon" in human.stdout


def test_exit_codes(tmp_path: Path) -> None:
    m = ok_json(tmp_path, "add", "a fact")
    missing = cli(tmp_path, "get", "no-such-id", "--json")
    assert missing.returncode == 3
    assert json.loads(missing.stderr)["error"]["code"] == "not_found"
    denied = cli(tmp_path, "forget", m["id"], "--role", "reviewer")
    assert denied.returncode == 4 and "permission" in denied.stderr
    assert cli(tmp_path, "add", "x", env={"ATTESTOR_ROLE": "monitor"}).returncode == 4
    assert cli(tmp_path, "add", "").returncode == 2
    assert cli(tmp_path, "add", "t", "--valid-from", "2026-01-01T00:00:00").returncode == 2
    assert cli(tmp_path, "add", "t", "--metadata", "[1]").returncode == 2
    assert cli(tmp_path, "list", "--limit", "notanumber").returncode == 2  # argparse
    assert cli(tmp_path, "no-such-command").returncode == 2
    assert cli(tmp_path, "purge", "--reason", "gdpr").returncode == 2  # needs --yes
    other = cli(tmp_path, "export", "--user", "someone-else")
    assert other.returncode == 4, other.stderr
    assert ok_json(tmp_path, "stats")["total"] == 1  # nothing above changed the store


def test_export_purge_import_round_trip(tmp_path: Path) -> None:
    a = ok_json(tmp_path, "add", "Bob likes tea", "--entity", "Bob", "--category", "drink")
    ok_json(tmp_path, "add", "Bob likes coffee", "--entity", "Bob", "--category", "drink")
    dump = tmp_path / "export.json"
    written = ok_json(tmp_path, "export", "-o", str(dump), "--keep")  # kept past the purge
    assert written["written"] == str(dump) and dump.is_file()
    report = ok_json(tmp_path, "purge", "--reason", "GDPR request 7", "--yes")
    assert report["ok"] is True
    assert ok_json(tmp_path, "stats")["total"] == 0
    ok_json(tmp_path, "import", str(dump))
    restored = ok_json(tmp_path, "timeline", "Bob")
    assert [m["content"] for m in restored] == ["Bob likes tea", "Bob likes coffee"]
    assert restored[0]["id"] == a["id"]


def test_retention_dry_run_and_doctor(tmp_path: Path) -> None:
    ok_json(tmp_path, "add", "temp note", "--category", "scratch")
    policies = tmp_path / "retention.yaml"
    policies.write_text(
        yaml.safe_dump(
            [{"name": "scratch", "category": "scratch", "older_than": "1s", "action": "archive"}]
        ),
        encoding="utf-8",
    )
    report = ok_json(tmp_path, "retention", "--policies", str(policies), "--dry-run")
    assert report["dry_run"] is True and report["policies"][0]["policy"] == "scratch"
    assert ok_json(tmp_path, "stats")["active"] == 1  # dry run changed nothing
    doctor = ok_json(tmp_path, "doctor")
    names = {c["name"]: c for c in doctor["checks"]}
    assert doctor["ok"] is True
    for role in ("document", "vector", "text", "graph"):
        assert names[f"role.{role}"]["ok"] is True
    assert names["embedder"]["detail"].startswith("hashing")
    assert names["recall"]["ok"] is True


def test_doctor_names_what_to_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the store directory should be", encoding="utf-8")
    done = cli(tmp_path, "doctor", "--json", env={"ATTESTOR_PATH": str(blocker / "m.db")})
    assert done.returncode == 1
    report = json.loads(done.stdout)
    store = next(c for c in report["checks"] if c["name"] == "store")
    assert store["ok"] is False and "writable" in store["fix"]


def test_api_command_serves_and_shuts_down_gracefully(tmp_path: Path) -> None:
    no_keys = cli(tmp_path, "api", "--port", str(free_port()))
    assert no_keys.returncode == 2 and "--new-key" in no_keys.stderr
    wide_open = cli(tmp_path, "api", "--no-auth", "--host", "0.0.0.0", "--port", str(free_port()))
    assert wide_open.returncode == 2 and "loopback" in wide_open.stderr
    made = ok_json(
        tmp_path,
        "api",
        "--new-key",
        "--tenant",
        "acme",
        "--key-role",
        "executor",
        "--key-agent",
        "bot-1",
    )
    assert made["entry"]["sha256"] == hash_key(made["key"])
    keys = tmp_path / "keys.yaml"
    keys.write_text(yaml.safe_dump({"keys": [made["entry"]]}), encoding="utf-8")
    assert made["key"] not in keys.read_text(encoding="utf-8")  # only the hash is stored

    port = free_port()
    proc = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "attestor_arango.interfaces.cli.main",
            "api",
            "--port",
            str(port),
            "--keys",
            str(keys),
            "--log-level",
            "info",
        ],
        env=cli_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        with MemoryClient(url, made["key"], timeout=5) as c:
            deadline = time.monotonic() + 60
            while True:
                try:
                    c.health()
                    break
                except StoreError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        pytest.fail(f"api did not start: {proc.communicate()[1]}")
                    time.sleep(0.2)
            m = c.add("served by the CLI")
            assert m.tenant == "acme" and m.provenance.agent_id == "bot-1"
            with pytest.raises(AccessDenied):
                c.forget(m.id)
        proc.send_signal(signal.SIGTERM)
        # uvicorn drains, runs the lifespan shutdown (closing the store), then re-raises
        # the signal so a supervisor sees why the process ended
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
        assert "Application shutdown complete" in proc.communicate()[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # the store was closed cleanly and holds the write
    assert ok_json(tmp_path, "stats", "--tenant", "acme")["total"] == 1


def test_doctor_runs_the_arangodb_checks(tmp_path: Path) -> None:
    """No ArangoDB answers on a closed loopback port: the backend's own checks say what to do."""
    env = {"ATTESTOR_BACKEND": "arangodb", "ARANGO_URL": f"http://127.0.0.1:{free_port()}"}
    done = cli(tmp_path, "doctor", "--json", env=env)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["backend"] == "arangodb" and report["ok"] is False
    arango = [c for c in report["checks"] if c["name"].startswith("arangodb.")]
    assert arango and not arango[0]["ok"] and arango[0]["fix"]
    store = next(c for c in report["checks"] if c["name"] == "store")
    assert store["ok"] is False and "ARANGO_URL" in store["fix"]
    assert next(c for c in report["checks"] if c["name"] == "embedder")["ok"] is True
