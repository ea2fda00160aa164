"""Issue 18 item 11: health checks check.

``/v1/health`` (over a real server) shows no file path to a key holder; the embedded
store's vector and graph roles are probed, so ``doctor`` fails (exit 1, through the CLI)
with the relations table dropped or a vector of the wrong width.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import httpx
from interface_support import PYTHON, cli_env, keyring, running_server

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.spec import H_API_KEY
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded.store import SQLiteStore


def test_rest_health_shows_no_file_path(tmp_path: Path) -> None:
    db = tmp_path / "secret-dir" / "memory.db"
    keys, plain = keyring()
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem, running_server(mem, keys) as url:
        key = next(iter(plain.values()))
        response = httpx.get(f"{url}/v1/health", headers={H_API_KEY: key}, timeout=30)
    assert response.status_code == 200, response.text
    assert "secret-dir" not in response.text and str(tmp_path) not in response.text
    body = response.json()
    assert body["ok"] is True and body["graph"] is True and body["vector"] is True


def _filled(tmp_path: Path) -> Path:
    db = tmp_path / "memory.db"
    with AgentMemory(db, embedder=HashingEmbedder()) as mem:  # doctor's hashing-v1-384
        mem.add("Alice is the engineering manager", entity="alice", category="role")
    return db


def _doctor(tmp_path: Path, db: Path) -> tuple[int, dict[str, dict[str, object]]]:
    done = subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "doctor", "--json"],
        env=cli_env(tmp_path, ATTESTOR_PATH=str(db), ATTESTOR_EMBEDDER="hashing"),
        capture_output=True,
        text=True,
        timeout=180,
    )
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    return done.returncode, checks


def test_store_health_sees_a_dropped_relations_table(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    store = SQLiteStore(db)
    assert store.health()["graph"] is True
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE relations")
    store = SQLiteStore(db)
    report = store.health()
    store.close()
    assert report["graph"] is False and report["ok"] is False
    assert report["document"] is True


def test_doctor_fails_with_the_relations_table_dropped(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    code, checks = _doctor(tmp_path, db)
    assert code == 0 and checks["role.graph"]["ok"] is True
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE relations")
    code, checks = _doctor(tmp_path, db)
    assert code == 1
    assert checks["role.graph"]["ok"] is False and checks["role.document"]["ok"] is True


def test_doctor_fails_on_a_vector_of_the_wrong_width(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE memories SET embedding = zeroblob(12)")
    code, checks = _doctor(tmp_path, db)
    assert code == 1 and checks["role.vector"]["ok"] is False
