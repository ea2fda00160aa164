"""Attack battery: the index files beside a store readable by users the store is not.

SQLite gives its ``-wal`` and ``-shm`` files the database file's permissions, so a store
whose owner made it private (``chmod 600 mem.db``) stays private. The persisted index
files hold every memory's text (the text index keeps the contents) and vectors, yet were
created by the process's umask: ``0644``, any local user could read what the database
kept from them. They (and their temporary files) now take the database file's
permission bits, and a folder made for them is private when the database is. So does a
re-embedding staging file (an unfinished run's vectors of the tenant), created 0644 too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded import indexfile

CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="t", namespace="n")


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("db_mode", [0o600, 0o640, 0o644])
def test_index_files_take_the_database_files_permissions(
    tmp_path: Path, umask_022: None, db_mode: int
) -> None:
    db = tmp_path / "mem.db"
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        mem.add("Ann likes green tea", context=CTX)
    os.chmod(db, db_mode)
    folder = db.with_name("mem.db.idx")
    assert not folder.exists()  # the premise: no index was saved yet
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        assert mem.recall("green tea", context=CTX).results  # builds and saves the indexes
    files = sorted(folder.iterdir())
    assert {f.suffix for f in files} == {".text", ".vectors"}
    assert {f.name: _mode(f) for f in files} == {f.name: db_mode for f in files}
    if not db_mode & 0o077:
        assert _mode(folder) & 0o077 == 0


def test_a_file_saved_again_after_a_chmod_takes_the_new_mode(
    tmp_path: Path, umask_022: None
) -> None:
    db = tmp_path / "mem.db"
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        mem.add("Ann likes green tea", context=CTX)
        mem.recall("green tea", context=CTX)
    os.chmod(db, 0o600)
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        mem.update(mem.list(context=CTX)[0].id, content="Ann likes black tea", context=CTX)
        assert mem.recall("black tea", context=CTX).results  # a change: rebuilt and saved
    files = sorted(db.with_name("mem.db.idx").iterdir())
    assert files and all(_mode(f) == 0o600 for f in files), [(f.name, oct(_mode(f))) for f in files]


def test_a_temporary_file_is_never_more_open_than_asked(tmp_path: Path, umask_022: None) -> None:
    import numpy as np

    path = tmp_path / "x.idx" / "a.text"
    tmp = indexfile.write_temp(path, {"k": 1}, {"a": np.zeros(3)}, mode=0o600)
    try:
        assert _mode(tmp) == 0o600 and _mode(path.parent) & 0o077 == 0
    finally:
        tmp.unlink()


@pytest.mark.parametrize("given", [False, True], ids=["default", "staging_path"])
def test_a_reembed_staging_file_takes_the_database_files_permissions(
    tmp_path: Path, umask_022: None, given: bool
) -> None:
    """An unfinished ``reembed`` keeps the tenant's new vectors in its staging file until
    the next run: beside a private store it is private too."""
    db = tmp_path / "mem.db"
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        for n in range(4):
            mem.add(f"Fact number {n}", context=CTX)
    os.chmod(db, 0o600)
    staged = tmp_path / "elsewhere" / "s.sqlite" if given else db.with_name("mem.db.reembed")

    def stop(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with (
        AgentMemory(db, embedder=HashingEmbedder(32), context=CTX) as mem,
        pytest.raises(KeyboardInterrupt),
    ):
        mem.reembed(batch_size=2, progress=stop, staging_path=staged if given else None)
    assert staged.is_file()  # the premise: the run left its staging file
    assert _mode(staged) == 0o600
    with AgentMemory(db, embedder=HashingEmbedder(32), context=CTX) as mem:  # resumes
        assert mem.reembed(staging_path=staged if given else None)["status"] == "reembedded"
    assert not staged.exists()
