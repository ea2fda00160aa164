"""Trace files are never written through a planted link, and take the store's bits.

A recall appended its events (the query text with ``include_content``) to whatever the
tenant's trace file name resolved to: a symlink planted there got them appended to its
target, a dangling one had its target created with the umask's 0644 beside a 0600 store,
and a file made beforehand 0666 was kept and written. The file is now opened without
following links (a link or other non-regular file at its name is replaced, with a logged
warning), created exclusively with the store's bits, and an existing file of ours with
other bits is given the store's.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.trace import Tracer
from attestor_arango.retrieval.trace_files import tenant_file

CTX = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="n")


def _memory(folder: Path, **trace: object) -> AgentMemory:
    settings = TraceSettings(
        enabled=True, path=str(folder / "trace.jsonl"), include_content=True, **trace
    )
    config = Config(path=str(folder / "mem.db"), trace=settings)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())
    mem.add("Ann likes secret tea", context=CTX)
    os.chmod(folder / "mem.db", 0o600)
    return mem


def _bits(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _own_file(folder: Path) -> Path:
    file = tenant_file(folder / "trace.jsonl", "acme")
    file.parent.mkdir(parents=True, exist_ok=True)
    return file


def test_a_link_at_the_trace_file_leaves_its_target_untouched(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mem = _memory(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious\n")
    file = _own_file(tmp_path)
    os.symlink(victim, file)
    with caplog.at_level(logging.WARNING, logger="attestor_arango"):
        mem.recall("secret tea", context=CTX)
    assert victim.read_text() == "precious\n"
    assert not file.is_symlink() and file.is_file()
    assert b"secret tea" in file.read_bytes()
    assert _bits(file) == 0o600
    assert any("not a regular file" in r.getMessage() for r in caplog.records)
    mem.close()


def test_a_dangling_link_at_the_trace_file_creates_nothing_at_its_target(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path)
    target = tmp_path / "made-by-trace.jsonl"
    file = _own_file(tmp_path)
    os.symlink(target, file)
    mem.recall("secret tea", context=CTX)
    assert not target.exists()
    assert _bits(file) == 0o600 and b"secret tea" in file.read_bytes()
    mem.close()


def test_a_file_made_beforehand_readable_by_all_gets_the_stores_bits(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    file = _own_file(tmp_path)
    file.write_bytes(b"")
    os.chmod(file, 0o666)
    mem.recall("secret tea", context=CTX)
    assert _bits(file) == 0o600 and b"secret tea" in file.read_bytes()
    mem.close()


def test_a_link_at_the_trace_folder_leaves_its_target_empty(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tenant_file(tmp_path / "trace.jsonl", "acme").parent
    os.symlink(elsewhere, folder)
    mem.recall("secret tea", context=CTX)
    assert list(elsewhere.iterdir()) == []
    assert not folder.is_symlink() and folder.is_dir()
    assert b"secret tea" in tenant_file(tmp_path / "trace.jsonl", "acme").read_bytes()
    mem.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_owned_by_another_user_is_replaced_not_written(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    file = _own_file(tmp_path)
    file.write_bytes(b"theirs\n")
    os.chown(file, 12345, 12345)
    mem.recall("secret tea", context=CTX)
    assert file.stat().st_uid == os.geteuid()
    assert b"theirs" not in file.read_bytes() and b"secret tea" in file.read_bytes()
    mem.close()


def test_rotation_never_writes_through_a_link_planted_at_the_new_file(tmp_path: Path) -> None:
    tracer = Tracer(tmp_path / "trace.jsonl", max_bytes=200, keep=1)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    file = tracer.file_of("acme")
    for n in range(3):
        tracer.emit({"tenant": "acme", "step": "s", "n": n, "pad": "x" * 120})
        file.unlink()
        os.symlink(victim, file)  # planted after each write and rotation
    tracer.emit({"tenant": "acme", "step": "s", "n": 9, "pad": "x" * 120})
    assert victim.read_text() == "precious\n"
    assert b'"n": 9' in file.read_bytes()


def test_an_erasure_rewrite_never_writes_through_a_link_at_its_copy(tmp_path: Path) -> None:
    shared = tmp_path / "trace.jsonl"  # the file earlier versions shared, rewritten
    shared.write_bytes(b'{"tenant": "acme", "step": "s"}\n{"tenant": "other", "step": "s"}\n')
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    copy = tmp_path / f".trace.jsonl.erase-{os.getpid()}"
    tracer = Tracer(shared)
    # planted between the stale-copy sweep and the rewrite: the sweep runs first
    import attestor_arango.retrieval.trace as trace_module

    real = trace_module.drop_stale_copies

    def sweep_then_plant(path: Path) -> None:
        real(path)
        os.symlink(victim, copy)

    trace_module.drop_stale_copies = sweep_then_plant  # type: ignore[assignment]
    try:
        report = tracer.erase_tenant("acme")
    finally:
        trace_module.drop_stale_copies = real  # type: ignore[assignment]
    assert victim.read_text() == "precious\n"
    assert report.error is None and report.removed == 1
    assert shared.read_bytes() == b'{"tenant": "other", "step": "s"}\n'
