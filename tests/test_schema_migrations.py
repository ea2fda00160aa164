"""The embedded schema: versioned, forward-only, idempotent."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from attestor_arango.errors import StoreError
from attestor_arango.store.embedded import schema as embedded_schema
from attestor_arango.store.embedded import sql as q
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
    conn.execute(
        "INSERT INTO audit VALUES ('t', 1, 'i', 0, 'a', 'r', 'x', NULL, '{}', 'p', 'h', NULL)"
    )
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit SET action = 'y'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit")


@contextmanager
def written_at_schema(patch: pytest.MonkeyPatch, path: Path, version: int) -> Iterator[None]:
    """Inside, the package writes ``path`` as it did at schema ``version`` (< 8): migrations
    stop there, no audit entry is signed before schema 7, and no memory gets a salt (its
    digests are the plain SHA-256 ones written before salts). The memories' ``salt`` column
    the code reads is there while inside and dropped on leaving (so are the episodes'), so
    the file is then what that version wrote."""
    from attestor_arango.core import writes
    from attestor_arango.ingest import pipeline

    assert version < 8
    steps = embedded_schema.MIGRATIONS[:version]
    last, script = steps[-1]
    salts = (
        "\nALTER TABLE memories ADD COLUMN salt TEXT;\nALTER TABLE episodes ADD COLUMN salt TEXT;\n"
    )
    steps = [*steps[:-1], (last, script + salts)]
    with patch.context() as p:
        p.setattr(embedded_schema, "MIGRATIONS", steps)
        p.setattr(embedded_schema, "LATEST", version)
        p.setattr(writes, "new_salt", lambda ids: None)
        p.setattr(pipeline, "new_salt", lambda ids: None)
        if version < 7:  # schema 7 added audit signatures
            for name in ("INSERT_AUDIT", "LAST_AUDIT", "READ_AUDIT"):
                text = getattr(q, name).replace(", signature", "")
                p.setattr(q, name, text.replace(",\n    :signature", ""))
        yield
    conn = sqlite3.connect(path)
    try:
        conn.execute("ALTER TABLE memories DROP COLUMN salt")
        conn.execute("ALTER TABLE episodes DROP COLUMN salt")
        conn.commit()
    finally:
        conn.close()


def test_migration_6_keeps_every_row_rowid_and_counter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Schema 6 rebuilds memories, episodes and relations with a (tenant, id) identity: a
    file written at schema 5 keeps its rows, rowids (the FTS rows refer to them) and its
    AUTOINCREMENT counter (a deleted rowid is never handed out again)."""
    from attestor_arango.context import AgentContext
    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.memory import AgentMemory

    path = tmp_path / "m.db"
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")
    with written_at_schema(monkeypatch, path, 5):
        mem = AgentMemory(path, embedder=HashingEmbedder(32))
        mem.add("Ann likes tea", entity="Ann", category="drink", context=ctx)
        mem.ingest_round({"user": "I live in Porto and I work at Initech."}, context=ctx)
        last = mem.add("a row that retention deletes", context=ctx)
        mem.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 5
    conn.execute("DELETE FROM memories_fts WHERE rowid = (SELECT MAX(rowid) FROM memories)")
    conn.execute("DELETE FROM memories WHERE id = ?", (last.id,))
    conn.commit()
    before = {
        t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall())
        for t in ("memories", "episodes", "relations", "memories_fts")
    }
    counter = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").fetchone()
    conn.close()
    assert before["memories"] and before["episodes"] and before["relations"]

    mem = AgentMemory(path, embedder=HashingEmbedder(32))
    assert mem.store.schema_version == embedded_schema.LATEST  # type: ignore[attr-defined]
    fresh = mem.add("a row after the migration", context=ctx)
    hits = mem.recall("where does the user live?", context=ctx)
    report = mem.verify_audit_chain("acme", context=ctx)
    mem.close()
    # the row deleted behind the service's back is the one problem verification still sees
    assert len(report.problems) == 1 and last.id in report.problems[0].message, report.problems
    conn = sqlite3.connect(path)
    after = {
        t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall())
        for t in ("memories", "episodes", "relations", "memories_fts")
    }
    new_rowid = conn.execute("SELECT rowid FROM memories WHERE id = ?", (fresh.id,)).fetchone()
    conn.close()
    assert [r[:-1] for r in after["episodes"]] == before["episodes"]  # and their salts
    assert {r[-1] for r in after["episodes"]} == {None}
    assert after["relations"] == before["relations"]
    old_rows = [r for r in after["memories"] if r[1] != fresh.id]
    assert [r[:-1] for r in old_rows] == before["memories"]  # schema 8 appended the salt
    assert {r[-1] for r in old_rows} == {None}  # rows written before salts have none
    assert new_rowid[0] == counter[0] + 1  # the deleted row's rowid is not reused
    assert any("Porto" in h.memory.content for h in hits), hits


def test_a_store_written_before_salts_migrates_and_still_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Schema 8 adds each memory's salt. A file written at schema 7 (rows without a salt,
    their chain entries and signatures over plain SHA-256 digests) opens, migrates, and its
    chain and signatures still verify; rows written after the migration get salts and keyed
    digests (``hmac1:``), so a reader tells the two kinds apart by the digest's form."""
    from attestor_arango.config import Config, SigningSettings
    from attestor_arango.context import AgentContext
    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.memory import AgentMemory

    path = tmp_path / "m.db"
    config = Config(path=str(path), signing=SigningSettings(enabled=True))
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
    with written_at_schema(monkeypatch, path, 7):
        mem = AgentMemory(config=config, embedder=HashingEmbedder(32))
        old = mem.add("Ann likes tea", entity="Ann", category="drink", context=ctx)
        mem.update(old.id, content="Ann likes green tea", context=ctx)
        mem.ingest_round({"user": "I live in Porto."}, context=ctx)
        mem.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 7
    assert "salt" not in {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
    conn.close()

    mem = AgentMemory(config=config, embedder=HashingEmbedder(32))
    assert mem.store.schema_version == embedded_schema.LATEST  # type: ignore[attr-defined]
    before = mem.list(status="all", limit=100, context=ctx)
    assert before and {m.salt for m in before} == {None}
    assert mem.verify_audit_chain(context=ctx).ok
    assert mem.verify_all(context=ctx)["ok"]
    fresh = mem.add("Bob likes coffee", context=ctx)
    mem.forget(before[-1].id, reason="asked by Ann", context=ctx)
    assert fresh.salt is not None
    rows = {
        e.target: e.details["row"]
        for e in mem.audit_log(limit=1000, context=ctx)
        if e.action == "add"
    }
    assert rows[fresh.id].startswith("hmac1:")
    assert all(len(rows[m.id]) == 64 and ":" not in rows[m.id] for m in before)
    report = mem.verify_audit_chain(context=ctx)
    assert report.ok, report.problems
    signed = mem.verify_all(context=ctx)
    assert signed["ok"] and signed["valid"] == len(before) + 1, signed
    assert mem.purge_user("acme", "erasure request #8", context=ctx).ok
    assert mem.verify_audit_chain(context=ctx).ok
    mem.close()
