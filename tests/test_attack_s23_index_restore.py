"""Attack battery: persisted index files that outlive the rows they reflect.

An index file records the tenant's generation counters (epoch, inserts, closes, changes,
last rowid) and is reused while the rows differ from it only by inserts and closes. The
counters describe how many rows changed, not which: a database restored from an older
copy (or a copy of the store that went its own way, its index folder copied over) keeps
the tenant's epoch, and as many writes after the restore as were lost bring the counters
back to the file's. The file was then reused as it was: the lost rows' words served by
recall and search, the rows written after the restore never found, a row closed since
served as current. A file now also names the row its last rowid is and the last row it
holds closed (with when); a store whose rows disagree rebuilds the index from them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="t", namespace="n")


def _word(name: str) -> str:
    return "zq" + "".join(reversed(name)) + "vxk"  # built at run time: no constant holds it


def _open(db: Path) -> AgentMemory:
    return AgentMemory(db, embedder=HashingEmbedder(64))


def _restore(backup: Path, db: Path) -> None:
    """The database file put back from a copy, its index folder left as it is."""
    for end in ("-wal", "-shm"):
        db.with_name(db.name + end).unlink(missing_ok=True)
    shutil.copy(backup, db)


def _found(mem: AgentMemory, word: str) -> tuple[list[str], list[str]]:
    recalled = [r.memory.content for r in mem.recall(word, context=CTX).results]
    searched = [m.content for m in mem.search(word, context=CTX)]
    return [c for c in recalled if word in c], [c for c in searched if word in c]


@pytest.mark.parametrize("lost", [1, 3])
def test_rows_written_after_a_restore_are_found_and_the_lost_ones_are_not(
    tmp_path: Path, lost: int
) -> None:
    db, backup = tmp_path / "mem.db", tmp_path / "backup.db"
    with _open(db) as mem:
        mem.add("Ann likes green tea", context=CTX)
    shutil.copy(db, backup)
    gone = _word("lostfen")
    with _open(db) as mem:
        for n in range(lost):
            mem.add(f"{gone} note {n}", context=CTX)
        assert _found(mem, gone)[1]  # the premise: the index (and its file) holds them
    _restore(backup, db)
    fresh = _word("newmoor")
    with _open(db) as mem:  # as many rows written as were lost: the counters match again
        for n in range(lost):
            mem.add(f"{fresh} entry {n}", context=CTX)

    with _open(db) as mem:
        expected = [f"{fresh} entry {n}" for n in range(lost)]
        recalled, searched = _found(mem, fresh)
        assert sorted(recalled) == expected and sorted(searched) == expected
        assert _found(mem, gone) == ([], [])
    with _open(db) as mem:  # the index written back is of the rows, and is used again
        assert sorted(_found(mem, fresh)[1]) == expected
        assert _found(mem, gone) == ([], [])


def test_a_row_closed_after_a_restore_is_not_served_as_current(tmp_path: Path) -> None:
    db, backup = tmp_path / "mem.db", tmp_path / "backup.db"
    first, second = _word("ashcombe"), _word("birchley")
    with _open(db) as mem:
        a = mem.add(f"{first} likes tea", context=CTX).id
        b = mem.add(f"{second} likes coffee", context=CTX).id
    shutil.copy(db, backup)
    with _open(db) as mem:
        mem.forget(a, context=CTX)
        assert _found(mem, first) == ([], [])  # the premise: the file holds a closed
        assert _found(mem, second)[1]
    _restore(backup, db)
    with _open(db) as mem:  # one close again, of the other row: the counters match again
        mem.forget(b, context=CTX)

    with _open(db) as mem:
        assert _found(mem, first) == ([f"{first} likes tea"], [f"{first} likes tea"])
        assert _found(mem, second) == ([], [])


def test_an_index_folder_copied_from_a_copy_of_the_store_is_not_used(tmp_path: Path) -> None:
    """Two stores made from one file share the tenant's epoch; the index folder of one
    copied beside the other must not serve the first one's rows."""
    db, twin = tmp_path / "a" / "mem.db", tmp_path / "b" / "mem.db"
    db.parent.mkdir()
    twin.parent.mkdir()
    with _open(db) as mem:
        mem.add("Ann likes green tea", context=CTX)
    shutil.copy(db, twin)
    ours, theirs = _word("corvale"), _word("duskwater")
    with _open(db) as mem:
        mem.add(f"{ours} is ours", context=CTX)
    with _open(twin) as mem:
        mem.add(f"{theirs} is theirs", context=CTX)
        mem.search(theirs, context=CTX)  # builds and saves the twin's index
    shutil.rmtree(db.with_name("mem.db.idx"), ignore_errors=True)
    shutil.copytree(twin.with_name("mem.db.idx"), db.with_name("mem.db.idx"))

    with _open(db) as mem:
        assert _found(mem, theirs) == ([], [])
        assert _found(mem, ours) == ([f"{ours} is ours"], [f"{ours} is ours"])


@pytest.mark.parametrize(
    "marks",
    [None, [], {"last_id": 5}, {"last_id": "x"}, {"last_close": 7},
     {"last_close": [{"a": 1}, 5]}, {"last_close": ["id", True]}, {"last_close": [1, 2, 3]},
     {"last_close": [["id"], 1.5]}],
)  # fmt: skip
def test_a_file_whose_marks_are_of_the_wrong_form_is_rebuilt_not_a_crash(
    tmp_path: Path, marks: object
) -> None:
    """A whole, checksummed file whose marks are not what a writer writes (a forged or
    foreign file; where a mark is not named, the true one is kept): the index is rebuilt
    from the rows, with no error to the caller."""
    from attestor_arango.store.embedded import indexfile

    db = tmp_path / "mem.db"
    word = _word("elmsgate")
    with _open(db) as mem:
        first = mem.add(f"{word} likes tea", context=CTX).id
        mem.forget(first, context=CTX)
        mem.add(f"{word} likes coffee", context=CTX)
        mem.search(word, context=CTX)
    files = sorted(db.with_name("mem.db.idx").glob("*.text"))
    assert files  # the premise: a text index file was saved
    for file in files:
        old = indexfile.IndexFile(file)
        true = old.meta["marks"]
        forged = {**true, **marks} if isinstance(marks, dict) else marks
        meta = {**old.meta, "marks": forged}
        sections = {name: np.array(old.section(name)) for name in old.names()}
        del old
        indexfile.install(indexfile.write_temp(file, meta, sections), file)
    with _open(db) as mem:
        assert _found(mem, word) == ([f"{word} likes coffee"], [f"{word} likes coffee"])
