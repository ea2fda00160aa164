"""Recall traces are kept per tenant (``retrieval/trace.py``, "Layout").

Before, every tenant's events went to one file rotated past ``trace.max_bytes``: one
tenant's recalls rotated another tenant's recorded recalls out of existence, and a purge
rewrote the file every other tenant's events were in. Each tenant now has its own file
(named by a digest of its id, inside ``<trace.path>.tenants``), rotated on its own; the
shared file earlier versions wrote is still read and still cleaned.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import TenantRequiredError
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.trace import Tracer

A = AgentContext(agent_id="a", role="orchestrator", tenant="loud", namespace="n")
B = AgentContext(agent_id="a", role="orchestrator", tenant="quiet", namespace="n")


def _memory(folder: Path, **trace: object) -> AgentMemory:
    settings = TraceSettings(
        enabled=True, path=str(folder / "trace.jsonl"), include_content=True, **trace
    )
    config = Config(path=str(folder / "mem.db"), trace=settings)
    return AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())


def _trace_files(folder: Path) -> dict[Path, bytes]:
    """Every trace file under ``folder`` (whatever the layout) and its bytes."""
    return {
        p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and "trace" in str(p)
    }


def test_one_tenants_recalls_past_the_bound_leave_anothers_recorded_recall(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path, max_bytes=4_000, keep=1)
    mem.add("Bob likes coffee", context=B)
    mem.add("Zanzibar Quillfeather likes tea", context=A)
    quiet = mem.recall("Bob coffee", context=B)
    for n in range(40):  # far past (keep + 1) * max_bytes of the loud tenant's events
        mem.recall(f"Zanzibar tea {n}", context=A)
    recorded = mem.recall_trace(quiet.recall_id, context=B)
    assert recorded.result_ids == tuple(r.memory.id for r in quiet.results)
    assert recorded.query == "Bob coffee"
    mem.close()


def test_a_purge_leaves_every_file_of_another_tenant_byte_identical(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.add("Bob likes coffee", context=B)
    mem.add("Zanzibar Quillfeather likes tea", context=A)
    for _ in range(3):
        mem.recall("Bob coffee", context=B)
        mem.recall("Zanzibar Quillfeather", context=A)
    before = {p: data for p, data in _trace_files(tmp_path).items() if b'"quiet"' in data}
    assert before

    report = mem.purge_user("loud", "erasure request", context=A)

    assert report.ok and report.removed["trace_events"] > 0, report.to_dict()
    after = _trace_files(tmp_path)
    assert {p: after.get(p) for p in before} == before
    assert not any(b"Quillfeather" in data or b'"loud"' in data for data in after.values())
    mem.close()


# ids the API refuses (Scope) and ones it takes ("a/../../x", "A" beside "a"): the trace
# must not rely on that check
ODD = ["../x", "a/b", "a/../../x", "/etc/passwd", "Zoë 東京 \U0001f600", "x" * 5000]
ODD += ["\ud800", "A", "a", "..", "."]


def test_odd_tenant_ids_each_get_a_file_inside_the_trace_folder(tmp_path: Path) -> None:
    tracer = Tracer(tmp_path / "t" / "trace.jsonl")
    folder = (tmp_path / "t" / "trace.jsonl.tenants").resolve()
    for tenant in ODD:
        tracer.emit({"tenant": tenant, "step": "start"})
    files = [tracer.file_of(tenant) for tenant in ODD]
    assert len(set(files)) == len(ODD)  # "A" and "a" too: no two ids share a file
    assert all(f.resolve().parent == folder for f in files)
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert written == sorted(files)
    for tenant, file in zip(ODD, files, strict=True):
        [event] = file.read_text(encoding="utf-8", errors="surrogatepass").splitlines()
        assert json.loads(event)["tenant"] == tenant


def test_erasing_an_odd_tenant_deletes_exactly_its_files(tmp_path: Path) -> None:
    tracer = Tracer(tmp_path / "trace.jsonl", max_bytes=200, keep=2)
    for n in range(30):
        for tenant in ODD:
            tracer.emit({"tenant": tenant, "n": n})
    others = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    gone = {p for p in others if p.name.startswith(tracer.file_of("a/../../x").name)}
    assert len(gone) == 3  # the file and its two rotated ones

    report = tracer.erase_tenant("a/../../x")

    assert report.error is None and report.removed > 0
    left = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert left == {p: data for p, data in others.items() if p not in gone}


def test_an_event_naming_no_tenant_is_refused(tmp_path: Path) -> None:
    tracer = Tracer(tmp_path / "trace.jsonl")
    for event in ({"step": "start"}, {"tenant": "", "step": "start"}, {"tenant": 7}):
        with pytest.raises(TenantRequiredError, match="must name its tenant"):
            tracer.emit(event)
    assert not any(tmp_path.iterdir())


def _as_earlier_version(folder: Path) -> None:
    """The per-tenant files merged into the one shared file an earlier version wrote."""
    tenants = folder / "trace.jsonl.tenants"
    lines = [line for p in sorted(tenants.iterdir()) for line in p.read_bytes().splitlines()]
    lines.sort(key=lambda line: json.loads(line)["seq"])
    (folder / "trace.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    shutil.rmtree(tenants)


def test_the_shared_file_of_an_earlier_version_is_still_read_and_cleaned(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.add("Bob likes coffee", context=B)
    mem.add("Zanzibar Quillfeather likes tea", context=A)
    quiet = mem.recall("Bob coffee", context=B)
    loud = mem.recall("Zanzibar Quillfeather", context=A)
    mem.close()
    _as_earlier_version(tmp_path)
    mem = _memory(tmp_path)
    mem.recall("Bob likes", context=B)  # new events go to the tenant's own file

    assert mem.recall_trace(quiet.recall_id, context=B).query == "Bob coffee"
    assert mem.recall_trace(loud.recall_id, context=A).query == "Zanzibar Quillfeather"
    report = mem.purge_user("loud", "erasure request", context=A)

    assert report.ok and report.removed["trace_events"] > 0, report.to_dict()
    shared = (tmp_path / "trace.jsonl").read_bytes()
    assert b"Quillfeather" not in shared and b"Bob coffee" in shared
    assert mem.recall_trace(quiet.recall_id, context=B).query == "Bob coffee"
    mem.close()


def test_doctor_names_the_folder_the_tenants_events_go_to(tmp_path: Path) -> None:
    from attestor_arango.interfaces.cli.doctor import run_doctor

    mem = _memory(tmp_path)
    mem.add("Bob likes coffee", context=B)
    mem.recall("Bob coffee", context=B)
    config = mem.config
    mem.close()
    [check] = [c for c in run_doctor(config).to_dict()["checks"] if c["name"] == "trace"]
    [written] = [p for p, data in _trace_files(tmp_path).items() if b"Bob coffee" in data]
    # the folder doctor names holds the file the recall wrote; the old shared path is named
    # as read only
    assert f"trace to {written.parent} " in str(check["detail"])
    assert "only read" in str(check["detail"])
