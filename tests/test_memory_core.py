"""AgentMemory writes, reads, supersession and bad input, on every backend."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from attestor_arango import (
    AccessDenied,
    AgentContext,
    AgentRole,
    ConflictError,
    EmbeddingMismatchError,
    NotFoundError,
    ValidationError,
)
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.models import MemoryStatus, content_hash

ORCH = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="p1")


def snapshot(m: AgentMemory, ctx: AgentContext = ORCH) -> dict[str, Any]:
    return {
        # a refused call appends a permission_denied audit entry and changes nothing else
        "counts": {k: v for k, v in m.store.count_rows(ctx.scope).items() if k != "audit"},
        "rows": [x.model_dump() for x in m.list(status="all", context=ctx)],
    }


def test_add_records_both_time_axes_and_provenance(
    any_mem: AgentMemory, clock: ManualClock
) -> None:
    ctx = ORCH.as_agent("planner-1", AgentRole.PLANNER)
    m = any_mem.add(
        "Alice is the engineering manager",
        entity="alice",
        category="role",
        tags=["org"],
        context=ctx,
    )
    assert m.tenant == "acme" and m.namespace == "p1"
    assert m.t_created == datetime.fromtimestamp(clock.now_us() / 1e6, m.t_created.tzinfo)
    assert m.valid_from == m.t_created and m.valid_until is None and m.t_expired is None
    assert m.provenance.agent_id == "planner-1" and m.provenance.role == "planner"
    assert m.provenance.agent_trail == ("orch", "planner-1")
    assert m.provenance.parent_agent_id == "orch"
    assert m.content_hash == content_hash("Alice is the engineering manager")
    assert any_mem.get(m.id, context=ORCH) == m


def test_supersession_closes_and_links_atomically(any_mem: AgentMemory, clock: ManualClock) -> None:
    old = any_mem.add(
        "Alice is the engineering manager", entity="alice", category="role", context=ORCH
    )
    clock.advance(seconds=60)
    new = any_mem.add("Alice is the CTO", entity="alice", category="role", context=ORCH)
    closed = any_mem.get(old.id, context=ORCH)
    assert closed.status == MemoryStatus.SUPERSEDED
    assert closed.superseded_by == new.id and new.supersedes == old.id
    assert closed.t_expired == new.t_created
    # what the old row asserted is unchanged: event time and content stay as written
    assert (closed.content, closed.valid_from, closed.valid_until) == (
        old.content,
        old.valid_from,
        old.valid_until,
    )
    assert [m.id for m in any_mem.current_facts(entity="alice", context=ORCH)] == [new.id]
    assert [m.id for m in any_mem.timeline("alice", context=ORCH)] == [old.id, new.id]
    actions = [e.action for e in any_mem.audit_log(context=ORCH)]
    assert actions == ["add", "add", "supersede"]  # every write is in the chain


def test_supersession_is_scoped_to_namespace_and_category(any_mem: AgentMemory) -> None:
    a = any_mem.add("Alice lives in Paris", entity="alice", category="location", context=ORCH)
    other_ns = ORCH.as_agent("orch2", namespace="p2")
    any_mem.add("Alice lives in Rome", entity="alice", category="location", context=other_ns)
    any_mem.add("Alice likes tea", entity="alice", category="preference", context=ORCH)
    assert any_mem.get(a.id, context=ORCH).is_active


def test_identical_content_is_not_duplicated(any_mem: AgentMemory) -> None:
    a = any_mem.add("The build uses Python 3.12", entity="build", category="tooling", context=ORCH)
    b = any_mem.add("The build uses Python 3.12", entity="build", category="tooling", context=ORCH)
    assert a.id == b.id
    assert any_mem.stats(context=ORCH).total == 1


def test_update_writes_a_new_version(any_mem: AgentMemory, clock: ManualClock) -> None:
    a = any_mem.add(
        "Deploys happen on Fridays",
        entity="deploy",
        category="schedule",
        tags=["ops"],
        metadata={"src": "wiki"},
        context=ORCH,
    )
    clock.advance(seconds=5)
    b = any_mem.update(a.id, content="Deploys happen on Thursdays", context=ORCH)
    assert b.id != a.id and b.supersedes == a.id
    assert (b.entity, b.category, b.tags, b.metadata) == (a.entity, a.category, a.tags, a.metadata)
    assert b.content_hash == content_hash("Deploys happen on Thursdays")
    assert any_mem.get(a.id, context=ORCH).superseded_by == b.id
    with pytest.raises(ConflictError):
        any_mem.update(a.id, content="again", context=ORCH)
    assert [e.action for e in any_mem.audit_log(context=ORCH)] == ["add", "add", "update"]


def test_forget_archives_and_only_orchestrator_may(any_mem: AgentMemory) -> None:
    a = any_mem.add("Temporary token is abc", context=ORCH)
    planner = ORCH.as_agent("p", AgentRole.PLANNER)
    before = snapshot(any_mem)
    with pytest.raises(AccessDenied):
        any_mem.forget(a.id, context=planner)
    assert snapshot(any_mem) == before
    f = any_mem.forget(a.id, reason="rotated", context=ORCH)
    assert f.status == MemoryStatus.ARCHIVED and f.t_expired is not None
    assert any_mem.list(context=ORCH) == []
    assert [m.id for m in any_mem.list(status="archived", context=ORCH)] == [a.id]
    with pytest.raises(ConflictError):
        any_mem.forget(a.id, context=ORCH)


def test_reviewer_write_is_denied_before_any_io(mem: AgentMemory) -> None:
    calls: list[str] = []
    real = mem.store

    class Spy:
        def __getattr__(self, name: str) -> Any:
            calls.append(name)
            return getattr(real, name)

    mem.store = Spy()  # type: ignore[assignment]
    reviewer = ORCH.as_agent("rev", AgentRole.REVIEWER)
    with pytest.raises(PermissionError):
        mem.add("I should not be stored", context=reviewer)
    with pytest.raises(PermissionError):
        mem.forget("whatever", context=reviewer)
    # the only store calls are the denial audit appends (governance: refusals are audited)
    assert set(calls) <= {"transaction", "last_audit", "append_audit"}
    mem.store = real
    denied = [e for e in mem.audit_log(context=ORCH) if e.action == "permission_denied"]
    assert [(e.agent_id, e.target) for e in denied] == [("rev", "add"), ("rev", "forget")]
    mem.store = real


def test_other_tenants_ids_are_not_found(any_mem: AgentMemory) -> None:
    a = any_mem.add("acme secret", context=ORCH)
    beta = AgentContext(agent_id="b", tenant="beta", namespace="p1")
    with pytest.raises(NotFoundError):
        any_mem.get(a.id, context=beta)
    with pytest.raises(NotFoundError):
        any_mem.update(a.id, content="hijack", context=beta)
    with pytest.raises(NotFoundError):
        any_mem.forget(a.id, context=beta)
    assert any_mem.get(a.id, context=ORCH).content == "acme secret"


def test_as_of_and_time_window(any_mem: AgentMemory, clock: ManualClock) -> None:
    t_before = clock.now_us()
    clock.advance(seconds=1)
    a = any_mem.add(
        "Bob works at Initech",
        entity="bob",
        category="job",
        context=ORCH,
        valid_from="2020-01-01T00:00:00Z",
    )
    clock.advance(seconds=1)
    mid = clock.now_us()
    clock.advance(seconds=1)
    b = any_mem.add(
        "Bob works at Globex",
        entity="bob",
        category="job",
        context=ORCH,
        valid_from="2025-06-01T00:00:00Z",
    )
    assert any_mem.list(as_of=t_before / 1e6, context=ORCH) == []
    then = any_mem.list(as_of=mid / 1e6, context=ORCH)
    assert [m.id for m in then] == [a.id] and then[0].status == MemoryStatus.ACTIVE
    assert then[0].superseded_by is None  # the later close is masked
    assert any_mem.get(a.id, as_of=mid / 1e6, context=ORCH).t_expired is None
    assert [m.id for m in any_mem.list(context=ORCH)] == [b.id]
    window = ("2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z")
    hist = any_mem.list(status="all", time_window=window, context=ORCH)
    assert [m.id for m in hist] == [a.id]
    with pytest.raises(NotFoundError):
        any_mem.get(b.id, as_of=mid / 1e6, context=ORCH)


def test_recall_ranks_and_packs_into_budget(any_mem: AgentMemory) -> None:
    ctx = ORCH.as_agent("r", AgentRole.RESEARCHER, token_budget=30)
    any_mem.add("The payments service is written in Go", context=ORCH)
    any_mem.add("The search service is written in Rust and uses tantivy", context=ORCH)
    any_mem.add("Lunch is at noon on Fridays", context=ORCH)
    r = any_mem.recall("which language is the payments service written in?", context=ctx)
    assert r.results[0].memory.content == "The payments service is written in Go"
    assert r.tokens_used <= 30 and r.tokens_used == sum(x.tokens for x in r.results)
    assert ctx.token_budget_used == r.tokens_used
    any_mem.recall("search service", context=ctx)
    assert ctx.token_budget_used > r.tokens_used
    small = any_mem.recall("payments", token_budget=3, context=ctx)
    assert small.results == ()


def test_stats_and_health(any_mem: AgentMemory) -> None:
    any_mem.add("x one", entity="x", category="c", context=ORCH)
    any_mem.add("x two", entity="x", category="c", context=ORCH)
    s = any_mem.stats(context=ORCH)
    assert (s.total, s.active, s.superseded, s.entities) == (2, 1, 1, 1)
    assert s.embedder == "hashing-v1-64" and s.dimension == 64
    h = any_mem.health()
    assert h["ok"] is True and h["embedder"]["dimension"] == 64


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": ""}, "empty"),
        ({"content": "   "}, "empty"),
        ({"content": "x" * 40_000}, "over the limit"),
        ({"content": 42}, "string"),
        ({"content": "ok", "valid_from": datetime(2026, 1, 1)}, "timezone"),
        ({"content": "ok", "valid_from": "2026-13-01T00:00:00Z"}, "ISO-8601"),
        (
            {
                "content": "ok",
                "valid_from": "2026-01-02T00:00:00Z",
                "valid_until": "2026-01-01T00:00:00Z",
            },
            "valid_until",
        ),
        ({"content": "ok", "confidence": 1.5}, "outside"),
        ({"content": "ok", "tags": "notalist"}, "list"),
        ({"content": "ok", "metadata": {"x": object()}}, "JSON"),
        ({"content": "ok", "entity": ""}, "entity"),
    ],
)
def test_bad_input_raises_and_changes_nothing(
    any_mem: AgentMemory, kwargs: dict[str, Any], message: str
) -> None:
    any_mem.add("existing fact", entity="e", category="c", context=ORCH)
    before = snapshot(any_mem)
    with pytest.raises(ValidationError, match=message):
        any_mem.add(context=ORCH, **kwargs)
    assert snapshot(any_mem) == before


def test_bad_context_values() -> None:
    with pytest.raises(ValidationError, match="unknown role"):
        AgentContext(role="janitor")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="namespace"):
        AgentContext(namespace="has spaces")
    with pytest.raises(ValidationError, match="tenant"):
        AgentContext(tenant="")


def test_future_as_of_is_refused(any_mem: AgentMemory, clock: ManualClock) -> None:
    future = datetime.fromtimestamp(clock.now_us() / 1e6) + timedelta(days=3)
    with pytest.raises(ValidationError, match="future"):
        any_mem.list(as_of=future.isoformat() + "Z", context=ORCH)


def test_embedding_space_cannot_be_mixed(tmp_path: Any, clock: ManualClock) -> None:
    path = tmp_path / "m.db"
    with AgentMemory(path, embedder=HashingEmbedder(64), clock=clock) as m:
        m.add("first fact", context=ORCH)
    with AgentMemory(path, embedder=HashingEmbedder(32), clock=clock) as m:
        before = snapshot(m)
        with pytest.raises(EmbeddingMismatchError, match="reembed"):
            m.add("second fact", context=ORCH)
        assert snapshot(m) == before
        degraded = m.recall("first fact", context=ORCH)
        # the vector lane is not tried against another space; recall says so and why
        assert "vector_error" not in degraded.errors
        assert "hashing-v1-64" in degraded.errors["embedding_space"]
        assert [r.memory.content for r in degraded.results] == ["first fact"]


def test_rejected_first_write_records_no_embedding_space(mem: AgentMemory) -> None:
    with pytest.raises(ValidationError):
        mem.add("ended before it began", valid_until="2000-01-01T00:00:00Z", context=ORCH)
    assert mem.store.get_embedding_space(ORCH.scope) is None
    assert mem.stats(context=ORCH).total == 0


@pytest.mark.parametrize(
    "value", [-62_135_596_801, 253_402_300_800, float("nan"), float("inf"), "9999-12-31T23:59:59Z"]
)
def test_out_of_range_times_are_validation_errors(any_mem: AgentMemory, value: Any) -> None:
    with pytest.raises(ValidationError):
        any_mem.list(as_of=value, context=ORCH)
    with pytest.raises(ValidationError):
        any_mem.add("x", valid_from=value, context=ORCH)
