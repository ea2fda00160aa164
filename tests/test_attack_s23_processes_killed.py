"""Session 23 attack battery: a process killed while it writes an index file, with other
processes on the same store.

1. A process loads a tenant's rows (pre-erasure) and is about to write the tenant's index
   file when another process purges the tenant (which removes the tenant's index files and
   every temporary file being written for them); the first one then writes its file and
   is killed before it can remove it. No file may keep an erased word.
2. A process that removes rows (a compaction, a retention delete) killed right after its
   COMMIT, before it removed the tenant's index files, while another process stays open
   and closes last: no file may keep a removed word.
3. A process killed half-way through writing an index file while another process keeps
   the store open: the survivor, a fresh opener and a later one answer exactly as a store
   rebuilt from the rows (the copy of the SQLite file alone).
"""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.support.processes import Worker, files_holding

SUBJECT = "subject"
SUBJECT_WORDS = ["Quillerbrand", "Zephyrgonne", "Marrowquist"]
WORDS = ["alpha", "river", "stone", "garden", "music", "paint", "camp", "harbour", "ledger"]
QUERIES = ["alpha river", "stone garden music", "paint", "harbour ledger camp"]


def _file_name(tenant: str, kind: str) -> str:
    """The name of a tenant's index file (persisted.py: a digest of the tenant)."""
    return f"{hashlib.sha256(tenant.encode()).hexdigest()[:32]}.{kind}"


def _residue(folder: Path, ids: list[str]) -> list[str]:
    """The erased words in any file under ``folder``, the erased ids in any index file
    (the audit chain keeps ids by design, never words)."""
    return files_holding(folder, SUBJECT_WORDS) + files_holding(folder / "mem.db.idx", ids)


@pytest.mark.parametrize("kind", ["text", "vectors"])
@pytest.mark.parametrize("stop", ["before_the_file", "inside_the_file"])
def test_a_writer_killed_after_an_erasure_it_raced_leaves_no_erased_words(
    tmp_path: Path, kind: str, stop: str
) -> None:
    path = tmp_path / "mem.db"
    seed = Worker(path)
    ids = seed.call("adds", SUBJECT, [f"{w} keeps the ledger" for w in SUBJECT_WORDS])
    seed.close()
    shutil.rmtree(tmp_path / "mem.db.idx", ignore_errors=True)  # the next load rebuilds
    a = Worker(path)
    if stop == "before_the_file":
        a.call("stall_save", _file_name(SUBJECT, kind))
    else:
        a.call("stall_sections", 1)
    # A reads the rows and stops right before writing the rebuilt index's file, or with
    # its temporary file begun
    a.send("texts" if kind == "text" else "nearest", SUBJECT, "Quillerbrand ledger")
    stopped = a.read()
    assert stopped == (
        {"stalled": _file_name(SUBJECT, kind)} if stop == "before_the_file" else stopped
    )
    assert stop == "before_the_file" or _file_name(SUBJECT, kind) in stopped["writing"]
    b = Worker(path)
    assert b.call("purge", SUBJECT) is True
    b.close()
    assert _residue(tmp_path, ids) == []
    if stop == "before_the_file":
        a.send_line("go")  # A goes on to write its file, then waits to be killed
        assert "written" in a.read()
    a.kill()
    assert _residue(tmp_path, ids) == []
    c = Worker(path)
    assert c.call("texts", SUBJECT, "Quillerbrand Zephyrgonne Marrowquist ledger") == []
    c.close()
    assert _residue(tmp_path, ids) == []


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(2, 6))) + f" n{seed}x{i}" for i in range(n)]


def _answers(w: Worker) -> list[object]:
    out: list[object] = []
    for q in QUERIES:
        out.append(w.call("pool", "t", q))
        out.append(w.call("nearest", "t", q))
    return out


def _rebuilt(path: Path, folder: Path) -> list[object]:
    """The answers of a copy of the SQLite file alone (every index rebuilt from its rows)."""
    folder.mkdir()
    src, dst = sqlite3.connect(path), sqlite3.connect(folder / "mem.db")
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    w = Worker(folder / "mem.db")
    try:
        return _answers(w)
    finally:
        w.close()


@pytest.mark.parametrize("sections", [1, 4])
def test_a_writer_killed_mid_file_while_another_process_serves(
    tmp_path: Path, sections: int
) -> None:
    path = tmp_path / "mem.db"
    seed = Worker(path)
    seed.call("adds", "t", _texts(1, 60))
    _answers(seed)  # loads both indexes, so their files are written
    seed.close()
    survivor = Worker(path)
    _answers(survivor)  # maps the files
    killed = Worker(path)
    _answers(killed)
    killed.call("adds", "t", _texts(2, 40))  # its indexes now differ from their files
    killed.call("stall_sections", sections)
    killed.send("close")  # saves them: killed half-way through the first file
    assert "writing" in killed.read()
    killed.kill()
    folder = tmp_path / "mem.db.idx"
    assert list(folder.glob("*.tmp.*")), "the killed writer left its temporary file"
    truth = _rebuilt(path, tmp_path / "truth")
    assert _answers(survivor) == truth
    fresh = Worker(path)
    assert _answers(fresh) == truth
    fresh.close()
    survivor.close()
    assert not list(folder.glob("*.tmp.*"))  # a later save cleared the dead writer's file
    again = Worker(path)
    assert _answers(again) == truth
    again.close()


@pytest.mark.parametrize("removal", ["compact", "retention"])
def test_a_compaction_killed_right_after_its_commit_leaves_no_removed_words(
    tmp_path: Path, removal: str
) -> None:
    path = tmp_path / "mem.db"
    seed = Worker(path)
    seed.call("adds", "t", ["the keeper likes green tea", "the keeper walks the harbour"])
    gone = seed.call("add", "t", "Quillerbrand once borrowed the keeper's boat")
    assert seed.call("texts", "t", "keeper") != []
    assert seed.call("nearest", "t", "keeper boat") != []
    seed.close()  # the tenant's index files hold the row
    assert files_holding(tmp_path / "mem.db.idx", ["Quillerbrand", gone]) != []
    a = Worker(path)  # serves on, never reading the tenant; the last to close
    a.call("add", "other", "an unrelated row")
    b = Worker(path)
    b.call("forget", "t", gone)
    b.call("advance", 40)
    b.call("stall_commit")
    b.send(removal, "t", "30d")  # the forgotten row; retention: every row of the tenant
    assert b.read() == {"committed": True}
    b.kill()
    a.call("add", "other", "another unrelated row")
    a.close()
    assert _residue_of(tmp_path, "Quillerbrand", gone) == []
    d = Worker(path)
    kept = ["the keeper likes green tea", "the keeper walks the harbour"]
    assert d.call("texts", "t", "Quillerbrand keeper") == (kept if removal == "compact" else [])
    d.close()
    assert _residue_of(tmp_path, "Quillerbrand", gone) == []


def _residue_of(folder: Path, word: str, memory_id: str) -> list[str]:
    return files_holding(folder, [word]) + files_holding(folder / "mem.db.idx", [memory_id])
