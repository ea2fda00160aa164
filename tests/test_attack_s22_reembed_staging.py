"""``reembed(staging_path=...)`` never takes a file that is not its own: the staging file is
deleted when the run finishes, so the store's own database, or any other existing file,
given as the staging path used to be deleted with it (the whole store lost). Such a path,
and one that is no path at all, is refused with ValidationError before anything changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from attack_support import stored

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="o", role="orchestrator", tenant="a", namespace="n")


def store_of(path: Path, dimension: int = 64) -> AgentMemory:
    return AgentMemory(path, embedder=HashingEmbedder(dimension), context=CTX)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    with store_of(tmp_path / "m.db") as mem:
        for n in range(3):
            mem.add(f"Fact number {n}", entity=f"e{n}")
    return tmp_path / "m.db"


def test_the_store_itself_as_the_staging_file_is_refused(db: Path) -> None:
    with store_of(db, 32) as mem:  # another embedder: a real move would run
        before = stored(mem)
        journal = db.with_name(db.name + "-journal")  # not there in WAL mode: still its
        for given in (db, str(db), db.parent / "." / db.name, journal):
            with pytest.raises(ValidationError, match="staging_path"):
                mem.reembed(staging_path=given)
        assert db.is_file() and stored(mem) == before
    with store_of(db) as mem:
        assert mem.stats().total == 3


def test_another_existing_file_is_refused_and_kept(db: Path, tmp_path: Path) -> None:
    app = tmp_path / "app.sqlite"
    with sqlite3.connect(app) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me", encoding="utf-8")
    with store_of(db, 32) as mem:
        before = stored(mem)
        for given in (app, notes, tmp_path, "/dev/null"):
            with pytest.raises(ValidationError, match="staging_path"):
                mem.reembed(staging_path=given)
        assert stored(mem) == before
    assert app.is_file() and notes.read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize("given", [True, 5, 2.5, [], {}, b"/tmp/x", "", "a\x00b", "a\ud800"])
def test_a_staging_path_that_is_no_path_is_refused(db: Path, given: object) -> None:
    with store_of(db, 32) as mem:
        before = stored(mem)
        with pytest.raises(ValidationError, match="staging_path"):
            mem.reembed(staging_path=given)  # type: ignore[arg-type]
        assert stored(mem) == before


def test_a_path_that_cannot_be_created_is_a_clear_error(db: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with store_of(db, 32) as mem, pytest.raises(ValidationError, match="staging_path"):
        mem.reembed(staging_path=blocker / "under-a-file" / "s.db")


def test_a_new_path_and_a_staging_file_still_work(db: Path, tmp_path: Path) -> None:
    given = tmp_path / "stage" / "s.db"
    with store_of(db, 32) as mem:
        assert mem.reembed(staging_path=given)["status"] == "reembedded"
    assert not given.exists()  # finished: its staging file is gone
    with store_of(db, 48) as mem:
        assert mem.reembed(staging_path=str(given))["status"] == "reembedded"
        assert mem.stats().total == 3


@pytest.mark.parametrize("progress", [5, "x", True, {}])
def test_a_progress_that_cannot_be_called_is_refused_first(
    db: Path, tmp_path: Path, progress: object
) -> None:
    # before: a raw TypeError at the first batch, after the staging file was made
    with store_of(db, 32) as mem:
        before = stored(mem)
        with pytest.raises(ValidationError, match="progress"):
            mem.reembed(progress=progress)  # type: ignore[arg-type]
        assert stored(mem) == before
    assert sorted(p.name for p in tmp_path.iterdir() if "reembed" in p.name) == []
