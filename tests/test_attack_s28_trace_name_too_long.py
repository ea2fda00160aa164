"""Attack: a recall-trace path the file system cannot name (a file name past its limit).

``Tracer.erase_tenant`` is documented never to raise, but listing the trace's files ran
outside its guard: with a trace name too long for the file system, ``purge_user`` raised
``OSError`` from the trace step, and the purge's later steps (export files, staged
vectors, the report) never ran. The erasure now reports the failure, and the purge goes on.
"""

from __future__ import annotations

from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.trace import Tracer

LONG = "t" * 250 + ".jsonl"  # with the ".tenants" suffix past NAME_MAX (255)


def test_erasing_a_trace_whose_name_is_too_long_reports_instead_of_raising(
    tmp_path: Path,
) -> None:
    report = Tracer(tmp_path / LONG).erase_tenant("acme")
    assert report.error is not None and "listing the trace files failed" in report.error
    assert report.left == -1  # unknown, not "nothing left"


def test_a_purge_with_such_a_trace_path_still_erases_the_store_and_reports(
    tmp_path: Path,
) -> None:
    trace = TraceSettings(enabled=False, path=str(tmp_path / LONG))
    config = Config(path=str(tmp_path / "mem.db"), trace=trace)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())
    ctx = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="n")
    mem.add("Zanzibar quokka lives at 12 Harbour Lane", context=ctx)
    report = mem.purge_user("acme", "erasure request #7", context=ctx)
    assert not report.ok
    assert report.error is not None and "recall-trace" in report.error
    assert report.remaining is not None and report.remaining["trace_events"] == -1
    assert report.removed.get("memories", 0) >= 1
    assert mem.recall("quokka", context=ctx).results == ()
    mem.close()
