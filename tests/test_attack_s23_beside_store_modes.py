"""Attack battery: files the service keeps beside a private store, readable by everyone.

The recall trace (each tenant's queries, and with ``include_content`` the texts recalled)
and the export ledger (which tenants were exported, to which files) were created by the
process's umask, ``0644``, beside a store its owner made private (``chmod 600``); the
trace's per-tenant folder ``0755``. They now take the database file's permission bits,
as SQLite's ``-wal``/``-shm`` and the index files do (``core.linefile.create_like``), and
a rewrite keeps them (the erasure's copy of a shared trace file was ``0644`` too). The
file ``export --output`` names keeps the umask: the user chose where it goes and who may
read it, and it is meant to be taken away.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.governance.export_files import ledger_path
from attestor_arango.interfaces.cli.main import main
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="a", role="orchestrator", tenant="t", namespace="n")
B = AgentContext(agent_id="a", role="orchestrator", tenant="u", namespace="n")


@pytest.fixture(autouse=True)
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _private_store(folder: Path, db_mode: int, **trace: object) -> AgentMemory:
    db = folder / "mem.db"
    AgentMemory(db, embedder=HashingEmbedder(64)).close()
    os.chmod(db, db_mode)
    settings = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"), **trace)
    config = Config(path=str(db), trace=settings)
    return AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())


@pytest.mark.parametrize("db_mode", [0o600, 0o640])
def test_trace_files_take_the_database_files_permissions(tmp_path: Path, db_mode: int) -> None:
    with _private_store(tmp_path, db_mode, include_content=True, max_bytes=600, keep=2) as mem:
        mem.add("Ann likes green tea", context=A)
        for n in range(6):  # past max_bytes: rotated, and a new file made
            mem.recall(f"green tea {n}", context=A)
    folder = tmp_path / "trace.jsonl.tenants"
    files = sorted(p for p in folder.iterdir())
    assert len(files) > 1  # the premise: the tenant's file was rotated
    assert {f.name: _mode(f) for f in files} == {f.name: db_mode for f in files}
    if not db_mode & 0o077:
        assert _mode(folder) & 0o077 == 0


def test_a_rewritten_shared_trace_file_keeps_its_permissions(tmp_path: Path) -> None:
    shared = tmp_path / "trace.jsonl"  # the one file earlier versions wrote every tenant's to
    lines = [{"seq": 1, "tenant": "t", "query": "x"}, {"seq": 2, "tenant": "u", "query": "y"}]
    shared.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    os.chmod(shared, 0o600)
    with _private_store(tmp_path, 0o600) as mem:
        report = mem.purge_user("t", "subject request", context=A)
    assert report.ok, report
    assert '"u"' in shared.read_text(encoding="utf-8")
    assert '"t"' not in shared.read_text(encoding="utf-8")
    assert _mode(shared) == 0o600


def test_the_export_ledger_takes_the_database_files_permissions_not_the_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "mem.db"
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        mem.add("Ann likes green tea", context=mem.default_context)
    os.chmod(db, 0o600)
    out = tmp_path / "away" / "export.json"
    out.parent.mkdir()
    assert main(["export", "--path", str(db), "--output", str(out), "--json"]) == 0, capsys
    ledger = ledger_path(Config(path=str(db)))
    assert ledger.is_file() and str(out.resolve()) in ledger.read_text(encoding="utf-8")
    assert _mode(ledger) == 0o600
    assert _mode(out) == 0o644  # the user's chosen place: the umask, as any file they write


@pytest.mark.parametrize("db_mode", [0o600, 0o640])
def test_the_reembed_staging_list_takes_the_database_files_permissions(
    tmp_path: Path, db_mode: int
) -> None:
    """The ``.reembed.paths`` list (where an unfinished run's staging files are, so that a
    purge finds them) was made by the umask, 0644, beside a private store; it now takes the
    database file's bits as the staging files do, when made and when rewritten."""
    db, clock = tmp_path / "mem.db", ManualClock()
    with AgentMemory(db, embedder=HashingEmbedder(64), clock=clock) as mem:
        for n in range(5):
            mem.add(f"Ann likes tea number {n}", context=A)
            clock.advance(seconds=1)
    os.chmod(db, db_mode)
    listed = tmp_path / "mem.db.reembed.paths"
    first, second = tmp_path / "a" / "s.sqlite", tmp_path / "b" / "s.sqlite"

    def stop(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with AgentMemory(db, embedder=HashingEmbedder(32), clock=clock) as mem:
        for path in (first, second):
            with pytest.raises(KeyboardInterrupt):
                mem.reembed(batch_size=2, progress=stop, staging_path=path, context=A)
        assert listed.read_text(encoding="utf-8").split() == [
            str(first.resolve()),
            str(second.resolve()),
        ]
        assert _mode(listed) == db_mode
        assert _mode(first) == db_mode  # the premise: the staging files already did
        mem.reembed(staging_path=first, context=A)  # finished: forgotten, the list rewritten
    assert listed.read_text(encoding="utf-8").split() == [str(second.resolve())]
    assert _mode(listed) == db_mode
