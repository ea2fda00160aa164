"""explain_recall (one ranking: what recall returns plus what the budget cut) and
recall_trace (a recorded recall by its id, for one tenant and namespace only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attestor_arango import AgentContext, NotFoundError, ValidationError
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import trace
from attestor_arango.retrieval.trace import Tracer
from tests.support.trace_reading import trace_text

A = AgentContext(agent_id="p", role="planner", tenant="acme", namespace="inbox")
A_OTHER_NS = AgentContext(agent_id="p", role="planner", tenant="acme", namespace="other")
B = AgentContext(agent_id="p", role="planner", tenant="beta", namespace="inbox")


def _mem(tmp: Path, clock: ManualClock, *, content: bool) -> AgentMemory:
    trace = TraceSettings(enabled=True, path=str(tmp / "trace.jsonl"), include_content=content)
    return AgentMemory(
        config=Config(path=str(tmp / "m.db"), trace=trace),
        embedder=HashingEmbedder(64),
        clock=clock,
        ids=SeededIdSource(5),
    )


def _fill(mem: AgentMemory, clock: ManualClock) -> None:
    for i in range(30):
        mem.add(f"tea note {i}: green tea from shop {i % 4}", entity=f"shop-{i % 4}", context=A)
        clock.advance(seconds=1)
    mem.add("beta tea secret", context=B)


def test_explain_is_recall_plus_the_cut_of_the_same_ranking(mem: AgentMemory) -> None:
    for i in range(30):
        mem.add(f"tea note {i}: green tea from shop {i % 4}", context=A)
    at = mem.recall("green tea", context=A).as_of
    budgeted = mem.recall("green tea", as_of=at, token_budget=40, context=A)
    explained = mem.explain_recall("green tea", as_of=at, token_budget=40, context=A)
    assert explained.response.model_dump_json() == budgeted.model_dump_json()
    whole = mem.recall("green tea", as_of=at, token_budget=1 << 40, context=A)
    kept = {r.memory.id for r in budgeted.results}
    want = [(i, r.memory.id) for i, r in enumerate(whole.results, 1) if r.memory.id not in kept]
    assert want and [(c.rank, c.result.memory.id) for c in explained.cut] == want
    for c in explained.cut:  # a cut result carries the breakdown the whole ranking gives it
        assert c.result == whole.results[c.rank - 1]


def test_a_recorded_recall_is_found_by_id_in_its_own_scope_only(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = _mem(tmp_path, clock, content=True)
    _fill(mem, clock)
    response = mem.recall("green tea shop", token_budget=30, context=A)
    rec = mem.recall_trace(response.recall_id, context=A)
    assert rec.query == "green tea shop" and rec.tenant == "acme" and rec.namespace == "inbox"
    assert rec.as_of == response.as_of and rec.token_budget == 30
    assert rec.result_ids == tuple(r.memory.id for r in response.results)
    assert rec.tokens_used == response.tokens_used
    assert rec.steps[0].step == "start" and rec.steps[-1].step == "budget"
    # replayed at the recorded instant: the same id and results
    clock.advance(seconds=60)
    mem.add("tea note new: green tea shop opened today", context=A)
    again = mem.recall(rec.query or "", as_of=rec.as_of, token_budget=rec.token_budget, context=A)
    assert again.recall_id == rec.recall_id
    assert tuple(r.memory.id for r in again.results) == rec.result_ids
    assert mem.recall_trace(rec.recall_id, context=A).runs == 2
    for other in (B, A_OTHER_NS):  # another tenant, another namespace: not found
        with pytest.raises(NotFoundError):
            mem.recall_trace(response.recall_id, context=other)
    mem.close()


def test_without_content_the_trace_keeps_no_query(tmp_path: Path, clock: ManualClock) -> None:
    mem = _mem(tmp_path, clock, content=False)
    _fill(mem, clock)
    response = mem.recall("green tea shop", context=A)
    rec = mem.recall_trace(response.recall_id, context=A)
    assert rec.query is None and rec.result_ids
    assert "green tea shop" not in trace_text(tmp_path / "trace.jsonl")
    mem.close()


def test_tracing_off_and_bad_ids(mem: AgentMemory) -> None:
    with pytest.raises(NotFoundError, match="traces are off"):
        mem.recall_trace("rc_" + "0" * 24, context=A)
    for bad in ("", "rc_xyz", "../etc/passwd", 7, None):
        with pytest.raises(ValidationError):
            mem.recall_trace(bad, context=A)  # type: ignore[arg-type]


def test_a_torn_trace_line_is_skipped(tmp_path: Path, clock: ManualClock) -> None:
    mem = _mem(tmp_path, clock, content=True)
    _fill(mem, clock)
    rid = mem.recall("green tea", context=A).recall_id
    with Tracer(tmp_path / "trace.jsonl").file_of("acme").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"recall_id": rid, "step": "start"})[:-5])  # a crash mid-write
    assert mem.recall_trace(rid, context=A).recall_id == rid
    mem.close()


def test_with_tracing_off_a_recall_reads_no_clock(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off, no event is written, so no step time is measured: the trace's clock is never
    read (the lanes' laps were two reads and a round a recall), and the answer is the one
    a recall with the clock gives."""
    for i in range(12):
        mem.add(f"tea note {i}: green tea from shop {i % 4}", entity=f"shop-{i % 4}")
    at = mem.recall("green tea").as_of
    want = mem.recall("green tea from shop 2", as_of=at).model_dump_json()

    def no_clock() -> float:
        raise AssertionError("the trace read the clock with tracing off")

    monkeypatch.setattr(trace.time, "perf_counter", no_clock)
    assert mem.recall("green tea from shop 2", as_of=at).model_dump_json() == want
