"""Session 23 attack battery: an erasure in one process while another holds the tenant loaded.

Process A recalled a tenant (its text and vector indexes and decoded rows in memory, its
index files written beside the store and mapped), and wrote more rows to it (so its
in-memory indexes differ from their files and would be saved at close). Process B then
erases: ``purge_user`` of the tenant, or ``compact`` of an archived row. A keeps working
(recalls, lists, gets, adds to the tenant and to another one) and closes. A must serve no
erased row after B committed, and no file under the store's folder may hold an erased
word once both closed (not the SQLite file, not the index files A saves at close), and no
index file an erased row's id (the audit chain keeps ids by design, never words).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import Worker, files_holding

CLI = [sys.executable, "-m", "attestor_arango.interfaces.cli.main"]
SUBJECT = "subject"
KEEP = "keeper"
# distinctive words of the subject: in no other row, so a byte match is the subject's
SUBJECT_WORDS = ["Quillerbrand", "Zephyrgonne", "Marrowquist"]


def _residue(folder: Path, ids: list[str], words: list[str] = SUBJECT_WORDS) -> list[str]:
    """The erased words in any file under ``folder``, the erased ids in any index file."""
    index_files = folder / "mem.db.idx"
    return files_holding(folder, words) + files_holding(index_files, ids)


def _seed(a: Worker) -> list[str]:
    ids = a.call(
        "adds",
        SUBJECT,
        [f"{w} keeps the ledger of harbour number {i}" for i, w in enumerate(SUBJECT_WORDS)],
    )
    a.call("adds", KEEP, ["the keeper likes green tea", "the keeper walks the harbour"])
    return list(ids)


@pytest.mark.parametrize("a_after", ["recall", "close_only", "write_subject", "write_other"])
def test_a_process_holding_a_purged_tenant_serves_and_saves_none_of_it(
    tmp_path: Path, a_after: str
) -> None:
    path = tmp_path / "mem.db"
    a = Worker(path)
    ids = _seed(a)
    # A loads the tenant's indexes (the files are written), then adds a row only A holds
    assert a.call("texts", SUBJECT, "Quillerbrand ledger") != []
    assert a.call("recall", SUBJECT, "who keeps the ledger") != []
    ids.append(a.call("add", SUBJECT, "Zephyrgonne mends the nets at dawn"))
    assert "Zephyrgonne mends the nets at dawn" in a.call("texts", SUBJECT, "Zephyrgonne nets")

    b = Worker(path)
    assert b.call("purge", SUBJECT) is True
    b.close()

    if a_after == "recall":
        assert a.call("texts", SUBJECT, "Quillerbrand Zephyrgonne Marrowquist ledger") == []
        assert a.call("recall", SUBJECT, "Zephyrgonne mends the nets ledger") == []
        assert a.call("list", SUBJECT) == []
        assert a.call("residue", SUBJECT) == {k: 0 for k in a.call("residue", SUBJECT)}
    elif a_after == "write_subject":  # a new row of the tenant after its erasure
        a.call("add", SUBJECT, "a fresh start in spring")
        assert a.call("texts", SUBJECT, "Quillerbrand ledger spring") == ["a fresh start in spring"]
        assert a.call("list", SUBJECT) == ["a fresh start in spring"]
    elif a_after == "write_other":
        a.call("add", KEEP, "the keeper sails at noon")
        assert a.call("texts", KEEP, "keeper") != []
    a.close()

    assert _residue(tmp_path, ids) == []
    # a fresh process finds nothing of the subject either
    c = Worker(path)
    assert c.call("texts", SUBJECT, "Quillerbrand Zephyrgonne Marrowquist ledger nets spring") == (
        ["a fresh start in spring"] if a_after == "write_subject" else []
    )
    assert c.call("texts", KEEP, "keeper") != []
    c.close()
    assert _residue(tmp_path, ids) == []


def test_a_purge_by_the_process_that_loaded_it_leaves_the_other_nothing(tmp_path: Path) -> None:
    """The reverse order: B loads and adds, A (which wrote the rows) purges; B closes last."""
    path = tmp_path / "mem.db"
    a = Worker(path)
    ids = _seed(a)
    b = Worker(path)
    assert b.call("texts", SUBJECT, "Quillerbrand ledger") != []
    ids.append(b.call("add", SUBJECT, "Marrowquist sings to the gulls"))
    assert a.call("purge", SUBJECT) is True
    a.close()
    assert b.call("texts", SUBJECT, "Marrowquist gulls ledger") == []
    b.close()
    assert _residue(tmp_path, ids) == []


def test_a_row_compacted_elsewhere_is_neither_served_nor_saved(tmp_path: Path) -> None:
    """B forgets a row of the tenant and compacts it away while A holds the tenant loaded
    with a row of its own added since the files (A's close saves the indexes)."""
    path = tmp_path / "mem.db"
    a = Worker(path)
    a.call("adds", KEEP, ["the keeper likes green tea", "the keeper walks the harbour"])
    gone = a.call("add", KEEP, "Quillerbrand once borrowed the keeper's boat")
    assert a.call("texts", KEEP, "keeper Quillerbrand") != []
    a.call("add", KEEP, "the keeper mends a sail")
    b = Worker(path)
    b.call("forget", KEEP, gone)
    b.call("advance", 40)
    assert b.call("compact", KEEP, "30d") == 1
    b.close()
    assert a.call("texts", KEEP, "Quillerbrand keeper") == [
        "the keeper likes green tea",
        "the keeper mends a sail",
        "the keeper walks the harbour",
    ]
    a.close()
    assert _residue(tmp_path, [gone], ["Quillerbrand"]) == []
    c = Worker(path)
    assert "Quillerbrand" not in " ".join(c.call("texts", KEEP, "Quillerbrand keeper"))
    c.close()


def test_a_cli_purge_between_two_serving_processes(tmp_path: Path) -> None:
    """Two long-lived processes (as two server workers) hold the tenant loaded; the CLI
    purges it in between; both keep answering, then close: nothing of it is served or
    left in a file."""
    path = tmp_path / "mem.db"
    a, b = Worker(path), Worker(path)
    ids = _seed(a)
    for w in (a, b):
        assert w.call("recall", SUBJECT, "who keeps the ledger") != []
    ids.append(b.call("add", SUBJECT, "Marrowquist rows to the lighthouse"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTESTOR_", "ARANGO_"))}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[1]), ATTESTOR_PATH=str(path))
    env.update(ATTESTOR_EMBEDDER="hashing", XDG_DATA_HOME=str(tmp_path / "xdg"))
    done = subprocess.run(
        [*CLI, "purge", "--tenant", SUBJECT, "--reason", "erasure request", "--yes", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    for w in (a, b):
        assert w.call("recall", SUBJECT, "Marrowquist lighthouse ledger") == []
        assert w.call("texts", SUBJECT, "Quillerbrand Zephyrgonne Marrowquist") == []
        assert w.call("recall", KEEP, "keeper tea") != []
    a.close()
    b.close()
    assert _residue(tmp_path, ids) == []
