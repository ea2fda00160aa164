"""Attack battery: one store opened under two names (a symlink to its file, or to its folder).

SQLite follows a symlink to the real file and keeps its journal beside it, but the files the
package keeps beside the store (the persisted indexes ``<db>.idx``, the export ledger
``<db>.exports``, the re-embedding staging ``<db>.reembed``) were placed beside the name the
caller gave. Written under one name and purged under the other, the subject's words stayed
in the first name's files: the purge looked beside the second. Every derived file is now
placed beside the resolved store file, so both names find the same files, and a purge under
either leaves no byte of the subject in the folder while another tenant keeps its rows.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

ORCH = AgentRole.ORCHESTRATOR
SUBJECT = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role=ORCH, tenant="other", namespace="n1")


def _word(name: str) -> str:
    return "zq" + "".join(reversed(name)) + "vxk"  # built at run time: no constant holds it


def _holding(root: Path, word: str) -> list[str]:
    """Every regular file under ``root`` (symlinks not followed) whose bytes hold ``word``."""
    return sorted(
        str(f.relative_to(root))
        for f in root.rglob("*")
        if f.is_file() and not f.is_symlink() and word.encode() in f.read_bytes().lower()
    )


def _layout(tmp_path: Path, how: str) -> tuple[Path, Path]:
    """The store's real file and a second name of it: a symlink to the file, or the file
    under a symlink to its folder."""
    real = tmp_path / "real"
    real.mkdir()
    db = real / "mem.db"
    alias_dir = tmp_path / "alias"
    if how == "file":
        alias_dir.mkdir()
        alias = alias_dir / "link.db"
        alias.symlink_to(db)
    else:
        alias_dir.symlink_to(real, target_is_directory=True)
        alias = alias_dir / "mem.db"
    return db, alias


@pytest.mark.parametrize("how", ["file", "folder"])
@pytest.mark.parametrize("order", ["real-then-alias", "alias-then-real"])
def test_a_purge_under_another_name_of_the_store_leaves_no_index_file_of_the_subject(
    tmp_path: Path, how: str, order: str
) -> None:
    db, alias = _layout(tmp_path, how)
    first, second = (db, alias) if order == "real-then-alias" else (alias, db)
    word, kept = _word("marrowfield"), _word("tollbrook")
    with AgentMemory(first, embedder=HashingEmbedder(64)) as mem:
        mem.add(f"{word} lives in Paris", context=SUBJECT)
        mem.add(f"{kept} lives in Rome", context=OTHER)
        assert mem.recall(word, context=SUBJECT).results  # builds and saves the indexes
        assert mem.recall(kept, context=OTHER).results
    assert _holding(tmp_path, word)  # the premise: the subject's words are on disk

    with AgentMemory(second, embedder=HashingEmbedder(64)) as mem:
        assert mem.recall(word, context=SUBJECT).results  # the indexes read under this name
        report = mem.purge_user("subject", "erasure request #31", context=SUBJECT)
        assert report.ok, report.to_dict()
        assert _holding(tmp_path, word) == []
        assert [r.memory.content for r in mem.recall(kept, context=OTHER).results] == [
            f"{kept} lives in Rome"
        ]
    assert _holding(tmp_path, word) == []
    with AgentMemory(first, embedder=HashingEmbedder(64)) as mem:
        assert not mem.recall(word, context=SUBJECT).results
        assert mem.recall(kept, context=OTHER).results
    assert _holding(tmp_path, word) == []


def test_the_files_beside_the_store_are_the_same_under_both_names(tmp_path: Path) -> None:
    """Index files saved under one name are the ones the other name maps (no second copy of
    the tenant's words in a folder beside the symlink)."""
    db, alias = _layout(tmp_path, "file")
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        mem.add("Ann likes green tea", context=SUBJECT)
        mem.recall("tea", context=SUBJECT)
    with AgentMemory(alias, embedder=HashingEmbedder(64)) as mem:
        mem.add("Ann likes black tea", context=SUBJECT)
        mem.recall("tea", context=SUBJECT)
    assert sorted(p.name for p in tmp_path.rglob("*.idx")) == ["mem.db.idx"]


def test_a_cli_export_under_one_name_is_deleted_by_a_purge_under_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``export --output`` records the file it wrote in the ledger beside the store; a purge
    run with the other name of the store must read that ledger and delete the file."""
    from attestor_arango.interfaces.cli.main import main

    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    db, alias = _layout(tmp_path, "file")
    word = _word("quillhaven")

    def cli(path: Path, *args: str) -> int:
        code = main(["--json", *args, "--path", str(path)])
        capsys.readouterr()
        return code

    out = tmp_path / "subject.json"
    assert cli(alias, "add", f"{word} drinks Glimmerwine", "--tenant", "subject") == 0
    assert cli(alias, "export", "--tenant", "subject", "--output", str(out)) == 0
    assert word.encode() in out.read_bytes()  # the premise: the copy holds the words

    assert cli(db, "purge", "--tenant", "subject", "--reason", "erasure #32", "--yes") == 0

    assert not out.exists()
    assert _holding(tmp_path, word) == []


def test_a_reembed_staged_under_one_name_is_dropped_by_a_purge_under_the_other(
    tmp_path: Path,
) -> None:
    """An unfinished ``reembed`` keeps the tenant's vectors in the staging file beside the
    store; a purge under the other name must find that file."""
    db, alias = _layout(tmp_path, "file")
    with AgentMemory(alias, embedder=HashingEmbedder(64)) as mem:
        for n in range(4):
            mem.add(f"Fact number {n} of the subject", context=SUBJECT)

    def stop(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with (
        AgentMemory(alias, embedder=HashingEmbedder(32), context=SUBJECT) as mem,
        pytest.raises(KeyboardInterrupt),
    ):
        mem.reembed(batch_size=2, progress=stop)
    staged = [p for p in tmp_path.rglob("*.reembed") if not p.is_symlink()]
    assert staged  # the premise: the run left its staging file

    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        report = mem.purge_user("subject", "erasure #33", context=SUBJECT)
        assert report.ok, report.to_dict()
    for path in staged:
        with sqlite3.connect(path) as check:
            assert check.execute("SELECT COUNT(*) FROM staged").fetchone()[0] == 0, path
