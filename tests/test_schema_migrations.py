"""The embedded schema: versioned, forward-only, idempotent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from attestor_arango.errors import StoreError
from attestor_arango.store.embedded import schema as embedded_schema
from attestor_arango.store.embedded.store import SQLiteStore


def test_fresh_file_gets_latest_version_and_reopen_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    s = SQLiteStore(path)
    assert s.schema_version == embedded_schema.LATEST
    s.close()
    s = SQLiteStore(path)
    assert s.schema_version == embedded_schema.LATEST
    assert s.integrity_check() == "ok"
    s.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "memories",
        "memories_fts",
        "episodes",
        "entities",
        "relations",
        "audit",
        "quotas",
        "write_counts",
        "embedding_spaces",
    } <= tables


def test_newer_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {embedded_schema.LATEST + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        SQLiteStore(path)


def test_a_new_migration_applies_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    extra = (embedded_schema.LATEST + 1, "CREATE TABLE extra (x INTEGER);")
    monkeypatch.setattr(embedded_schema, "MIGRATIONS", [*embedded_schema.MIGRATIONS, extra])
    monkeypatch.setattr(embedded_schema, "LATEST", extra[0])
    s = SQLiteStore(path)
    assert s.schema_version == extra[0]
    s.close()
    SQLiteStore(path).close()  # a second open must not re-run it (CREATE would fail)


def test_failed_migration_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    bad = (embedded_schema.LATEST + 1, "CREATE TABLE ok_table (x);\nCREATE TABLE memories (y);")
    monkeypatch.setattr(embedded_schema, "MIGRATIONS", [*embedded_schema.MIGRATIONS, bad])
    monkeypatch.setattr(embedded_schema, "LATEST", bad[0])
    with pytest.raises(sqlite3.OperationalError):
        SQLiteStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == bad[0] - 1
    assert (
        conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name='ok_table'").fetchone()[0] == 0
    )


def test_audit_table_is_append_only(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "m.db")
    s.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    conn.execute("INSERT INTO audit VALUES ('t', 1, 'i', 0, 'a', 'r', 'x', NULL, '{}', 'p', 'h')")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit SET action = 'y'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit")
