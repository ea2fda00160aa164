"""Session 19 attack battery: the recall trace file grew without bound.

A long-running service with tracing on appended to one JSONL file forever: a caller who
recalls in a loop fills the disk. The file is now bounded (``trace.max_bytes``) and
rotated (``trace.keep`` older files, ``<path>.1`` the newest of them); a purge erases the
tenant's events from every rotated file, and a recorded recall is still found after its
events rotated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings, load_config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.trace import Tracer

SUBJECT = AgentContext(agent_id="a", role="orchestrator", tenant="subject", namespace="n")
OTHER = AgentContext(agent_id="a", role="orchestrator", tenant="other", namespace="n")


def _files(folder: Path) -> dict[str, int]:
    """Every trace file under ``folder``, the tenants' (in ``trace.jsonl.tenants``) too."""
    found = sorted(p for p in folder.rglob("*") if p.is_file() and "trace" in str(p))
    return {str(p.relative_to(folder)): p.stat().st_size for p in found}


def test_a_tracer_keeps_its_files_under_the_bound(tmp_path: Path) -> None:
    tracer = Tracer(tmp_path / "trace.jsonl", max_bytes=2_000, keep=2)
    for n in range(500):
        tracer.emit({"tenant": "t", "step": "s", "n": n})
    file = tracer.file_of("t")
    sizes = _files(file.parent)
    assert sorted(sizes) == [file.name, f"{file.name}.1", f"{file.name}.2"]
    assert all(0 < size <= 2_000 for size in sizes.values()), sizes
    newest = file.read_text(encoding="utf-8").splitlines()
    assert json.loads(newest[-1]) == {"n": 499, "seq": 500, "step": "s", "tenant": "t"}
    kept = [json.loads(line)["n"] for name in (f"{file.name}.2", f"{file.name}.1", file.name)
            for line in (file.parent / name).read_text(encoding="utf-8").splitlines()]  # fmt: skip
    assert kept == list(range(500 - len(kept), 500))  # the newest events, none lost between


def test_keep_zero_keeps_one_file(tmp_path: Path) -> None:
    tracer = Tracer(tmp_path / "trace.jsonl", max_bytes=500, keep=0)
    for n in range(100):
        tracer.emit({"tenant": "t", "n": n})
    file = tracer.file_of("t")
    sizes = _files(file.parent)
    assert list(sizes) == [file.name] and sizes[file.name] <= 500


def _memory(folder: Path) -> AgentMemory:
    trace = TraceSettings(
        enabled=True, path=str(folder / "trace.jsonl"), include_content=True, max_bytes=6_000
    )
    config = Config(path=str(folder / "mem.db"), trace=trace)
    return AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())


def test_purge_erases_the_tenant_from_every_rotated_file(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.add("Zanzibar Quillfeather likes tea", context=SUBJECT)
    mem.add("Bob likes coffee", context=OTHER)
    for _ in range(4):
        mem.recall("Zanzibar Quillfeather", context=SUBJECT)
        mem.recall("Bob coffee", context=OTHER)
    sizes = _files(tmp_path)
    assert any(name.endswith(".jsonl.1") for name in sizes), sizes
    assert all(s <= 6_000 for s in sizes.values()), sizes
    assert any(
        b"Quillfeather" in (tmp_path / name).read_bytes() for name in sizes if name.endswith(".1")
    )

    report = mem.purge_user("subject", "erasure request", context=SUBJECT)

    assert report.ok, report.to_dict()
    for name in _files(tmp_path):
        assert b"Quillfeather" not in (tmp_path / name).read_bytes(), name
    assert any(b"coffee" in (tmp_path / name).read_bytes() for name in _files(tmp_path))
    mem.close()


def test_a_recall_whose_events_rotated_is_still_found(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.add("Bob likes coffee", context=OTHER)
    first = mem.recall("Bob coffee", context=OTHER)
    rotated = Tracer(tmp_path / "trace.jsonl").file_of("other").with_suffix(".jsonl.1")
    while not rotated.is_file():
        mem.recall("coffee", context=OTHER)
    recorded = mem.recall_trace(first.recall_id, context=OTHER)
    assert recorded.result_ids == tuple(r.memory.id for r in first.results)
    mem.close()


@pytest.mark.parametrize(("key", "value"), [("max_bytes", 0), ("keep", -1)])
def test_a_bound_that_is_no_bound_is_refused(tmp_path: Path, key: str, value: int) -> None:
    with pytest.raises(ValidationError, match=rf"trace\.{key}: should be greater than"):
        load_config(env={}, trace={"enabled": True, "path": str(tmp_path / "t"), key: value})


def test_the_bound_is_read_from_the_environment(tmp_path: Path) -> None:
    config = load_config(env={"ATTESTOR_TRACE_MAX_BYTES": "1234"})
    assert config.trace.max_bytes == 1234


def test_purge_with_tracing_turned_off_erases_the_rotated_files_too(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.add("Zanzibar Quillfeather likes tea", context=SUBJECT)
    rotated = Tracer(tmp_path / "trace.jsonl").file_of("subject").with_suffix(".jsonl.1")
    while not rotated.is_file():
        mem.recall("Zanzibar Quillfeather", context=SUBJECT)
    mem.close()
    off = TraceSettings(enabled=False, path=str(tmp_path / "trace.jsonl"))
    config = Config(path=str(tmp_path / "mem.db"), trace=off)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())
    report = mem.purge_user("subject", "erasure request", context=SUBJECT)
    assert report.ok and report.removed["trace_events"] > 0, report.to_dict()
    for name in _files(tmp_path):
        assert b"Quillfeather" not in (tmp_path / name).read_bytes(), name
    mem.close()
