"""Session 31 attack: recall needed write access beside the store.

Session 30 keyed recall ids by a file made beside the embedded store at the first recall
(``<db>.recall-key``). A store in a folder the process cannot write (a shared read-only
mount beside a running writer, a container's read-only volume) recalled fine before; then
its first recall raised ``StoreError`` because the key file could not be made. The key now
lives in the store (one per tenant: ``recall_keys``, schema 12), kept by the first recall
that may write, read by every opener; a file SQLite opens read-only is read at the version
it has (schema 11 lacks only the key table) and, keeping no key, recalls under the
session-30 file's key or a key derived from what only the store holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.config import Config
from attestor_arango.core.recall_key import derived_key
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import StoreError, ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.trace import recall_id
from attestor_arango.scope import Scope
from tests.test_arango_store_unit import RecordingDB, Sent, make_store, server_error

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
ASK = {"query": "what does ann like", "as_of": "2020-01-01T00:00:00Z"}
AS_OF_US = 1_577_836_800_000_000


def _memory(db: Path) -> AgentMemory:
    return AgentMemory(config=Config(path=str(db)), embedder=HashingEmbedder(64), context=CTX)


def _id(mem: AgentMemory) -> str:
    return mem.recall(**ASK).recall_id  # type: ignore[arg-type]


def _id_under(mem: AgentMemory, key: bytes) -> str:
    """The id of ``ASK`` made under ``key`` by the public function, not by the store."""
    config = mem.runtime.retrieval_config.to_json()
    return recall_id("acme", "n1", ASK["query"], AS_OF_US, None, 20_000, config, key)


@contextlib.contextmanager
def _unwritable(path: Path) -> Iterator[None]:
    """``path`` (a folder or a file) made unwritable even to root (the immutable flag), or by
    its mode for another user; skips where neither holds (a probe write still succeeds)."""
    root = os.geteuid() == 0
    mode = path.stat().st_mode
    if root:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"cannot make {path} immutable here: {done.stderr!r}")
    else:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        probe = path / ".probe" if path.is_dir() else path
        try:
            with open(probe, "a"):
                pass
        except OSError:
            yield
        else:
            pytest.skip(f"{path} stays writable here")
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(path)], check=False)
        else:
            path.chmod(mode)


def _before_s31(db: Path) -> None:
    """The file as session 30 left it: schema 11, no key table."""
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE recall_keys")
    conn.execute("PRAGMA user_version = 11")
    conn.commit()
    conn.close()


def test_recall_in_a_folder_that_cannot_be_written_gives_the_writers_ids(tmp_path: Path) -> None:
    writer = _memory(tmp_path / "mem.db")  # open: its WAL files stay beside the store
    writer.add("Ann likes green tea")
    with _unwritable(tmp_path):
        reader = _memory(tmp_path / "mem.db")
        rid = _id(reader)  # was StoreError: "the store's recall-id key ... cannot be made"
        now = reader.recall("what does ann like").results
        assert [r.memory.content for r in now] == ["Ann likes green tea"]
        reader.close()
    assert rid == _id(writer)  # the key the reader kept is the writer's
    assert not (tmp_path / "mem.db.recall-key").exists()
    writer.close()


def test_a_store_file_opened_read_only_recalls_with_a_deterministic_key(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    mem = _memory(db)
    mem.add("Ann likes green tea")
    mem.close()
    _before_s31(db)
    ids = []
    with _unwritable(db):
        for _ in range(2):  # two openers agree, and nothing is migrated or kept
            reader = _memory(db)
            assert reader.store.schema_version == 11  # type: ignore[attr-defined]
            assert reader.store.get_recall_key(Scope("acme")) is None
            ids.append(_id(reader))
            key = derived_key(reader.store, Scope("acme"))
            reader.close()
    assert ids[0] == ids[1] == _id_under(reader, key)
    assert ids[0] != _id_under(reader, b"")  # never the public, unkeyed id
    writer = _memory(db)  # writable again: migrated, and a key of its own is kept
    assert writer.store.schema_version == 12  # type: ignore[attr-defined]
    assert writer.store.get_recall_key(Scope("acme")) is None
    _id(writer)
    assert writer.store.get_recall_key(Scope("acme")) is not None
    writer.close()


def test_a_read_only_file_lacking_more_than_the_key_table_is_refused_typed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "mem.db"
    _memory(db).close()
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE recall_keys")
    conn.execute("PRAGMA user_version = 10")  # needs migration 11 (an index writes seek)
    conn.commit()
    conn.close()
    with _unwritable(db):
        reader = _memory(db)  # 11 reshapes an index only writes use: still readable
        assert reader.store.schema_version == 10  # type: ignore[attr-defined]
        reader.close()
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 10
        conn.close()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 9")  # 10 adds an index a read seeks by name
    conn.commit()
    conn.close()
    with _unwritable(db), pytest.raises(StoreError, match="open it once with write access"):
        _memory(db)


def test_a_session_30_key_file_keeps_the_stores_ids(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    old = bytes(range(32))
    mem = _memory(db)
    mem.add("Ann likes green tea")
    mem.close()
    _before_s31(db)
    (tmp_path / "mem.db.recall-key").write_text(old.hex() + "\n", encoding="ascii")
    with _unwritable(db):
        reader = _memory(db)  # read-only: the file's key, read
        assert _id(reader) == _id_under(reader, old)
        reader.close()
    mem = _memory(db)  # writable: the file's key is kept in the store
    assert _id(mem) == _id_under(mem, old)
    assert mem.store.get_recall_key(Scope("acme")) == old.hex()
    mem.close()
    (tmp_path / "mem.db.recall-key").unlink()
    again = _memory(db)
    assert _id(again) == _id_under(again, old)
    again.close()


def test_an_export_carries_no_key_and_a_purge_keeps_it(tmp_path: Path) -> None:
    first = _memory(tmp_path / "a.db")
    first.add("Ann likes green tea")
    rid = _id(first)
    key = first.store.get_recall_key(Scope("acme"))
    assert key is not None
    exported = first.export_user("acme")
    assert key not in json.dumps(exported, default=str)
    second = _memory(tmp_path / "b.db")
    second.import_user(exported)
    assert _id(second) != rid  # the importing store keeps a key of its own
    assert second.store.get_recall_key(Scope("acme")) != key
    second.close()
    first.purge_user("acme", reason="erasure request 1")
    assert first.store.get_recall_key(Scope("acme")) == key  # not the subject's data
    assert not any(first.store.tenant_residue(Scope("acme")).values())
    reopened = _memory(tmp_path / "a.db")
    assert _id(reopened) == rid
    reopened.close()
    first.close()


def test_the_arango_store_keeps_the_key_in_a_collection_and_falls_back_when_read_only() -> None:
    db = RecordingDB()
    store = make_store(db)
    with pytest.raises(Sent):
        store.get_recall_key(Scope("acme", "n1"))
    assert db.log[-1][1:] == ("recall_key_get", {"tenant": "acme"})
    for code in (11, 1004):  # a read-only account, a read-only server
        db = RecordingDB(server_error(code, 403))
        assert make_store(db).put_recall_key(Scope("acme"), "ab" * 32) is None
        assert db.names() == ["recall_key_put"]
    db = RecordingDB(server_error(1210, 409))  # two first callers: the retry finds the key
    with pytest.raises(Sent):
        make_store(db).put_recall_key(Scope("acme"), "ab" * 32)
    assert db.names() == ["recall_key_put", "recall_key_put"]
    assert db.log[0][2] == {"tenant": "acme", "key": "ab" * 32}
    db = RecordingDB(server_error(1203, 404))  # no collection: a failure, not a fallback
    with pytest.raises(StoreError):
        make_store(db).put_recall_key(Scope("acme"), "ab" * 32)


def test_a_refused_recall_keeps_no_key(tmp_path: Path) -> None:
    """The key is kept after every check of the arguments: a refused recall stores nothing."""
    mem = _memory(tmp_path / "mem.db")
    for bad in ({"as_of": "not a time"}, {"time_window": ("2020-01-02", "2020-01-01")}):
        with pytest.raises(ValidationError):
            mem.recall("what does ann like", **bad)  # type: ignore[arg-type]
        assert mem.store.get_recall_key(Scope("acme")) is None
    mem.recall("what does ann like")
    assert mem.store.get_recall_key(Scope("acme")) is not None
    mem.close()


def test_the_first_write_keeps_the_key_so_a_recall_only_reads(tmp_path: Path) -> None:
    """A tenant's first memory keeps its key (``core/writes.py``): its recalls store nothing.
    A legacy key file that holds no key fails the recall, never the write."""
    mem = _memory(tmp_path / "mem.db")
    mem.add("Ann likes green tea")
    kept = mem.store.get_recall_key(Scope("acme"))
    assert kept is not None
    conn = sqlite3.connect(tmp_path / "mem.db")
    before = conn.execute("SELECT * FROM recall_keys").fetchall()
    _id(mem)
    assert conn.execute("SELECT * FROM recall_keys").fetchall() == before
    conn.close()
    mem.close()
    other = tmp_path / "other"
    other.mkdir()
    (other / "mem.db.recall-key").write_text("not a key\n", encoding="ascii")
    bad = _memory(other / "mem.db")
    bad.add("Ann likes green tea")  # stored
    assert bad.store.get_recall_key(Scope("acme")) is None
    with pytest.raises(StoreError, match="holds no recall-id key"):
        _id(bad)
    bad.close()
