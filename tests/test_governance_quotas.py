"""Daily write quotas per user (tenant), per-agent write limits, UTC day boundaries."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from attestor_arango import AccessDenied, AgentContext, AgentRole, ValidationError
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import QuotaExceededError
from attestor_arango.governance.quotas import next_reset_us, utc_day
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

ORCH = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="p1")
WRITER = ORCH.as_agent("exec", AgentRole.EXECUTOR)
LATE = datetime(2026, 3, 31, 23, 58, tzinfo=UTC)


def test_utc_day_helpers() -> None:
    clock = ManualClock(LATE)
    assert utc_day(clock.now_us()) == "2026-03-31"
    assert next_reset_us(clock.now_us()) == ManualClock(datetime(2026, 4, 1, tzinfo=UTC)).now_us()
    clock.advance(seconds=120)
    assert utc_day(clock.now_us()) == "2026-04-01"


def test_quota_blocks_then_resets_at_utc_midnight(mem: AgentMemory, clock: ManualClock) -> None:
    clock.set(LATE)
    status = mem.set_quota("acme", daily_writes=3, context=ORCH)
    assert status["daily_writes"] == 3 and status["remaining"] == 3
    first = mem.add("fact one", context=WRITER)
    mem.add("fact two", context=WRITER)
    mem.update(first.id, content="fact one, revised", context=WRITER)  # updates count too
    before = mem.store.count_rows(Scope("acme"))
    with pytest.raises(QuotaExceededError) as err:
        mem.add("fact four", context=WRITER)
    assert err.value.details["limit"] == 3
    assert err.value.details["resets_at"] == "2026-04-01T00:00:00Z"
    assert err.value.http_status == 429
    after = mem.store.count_rows(Scope("acme"))
    assert after == before  # a refused write stores nothing
    assert mem.quota_status(context=WRITER)["remaining"] == 0
    # a duplicate of an active fact is not a new write and is not refused
    assert mem.add("fact two", context=WRITER).content == "fact two"

    clock.advance(seconds=150)  # 00:00:30 UTC the next day
    mem.add("fact four", context=WRITER)
    status = mem.quota_status("acme", context=WRITER)
    assert (status["day"], status["used"], status["remaining"]) == ("2026-04-01", 1, 2)
    assert mem.store.count_writes(Scope("acme"), "2026-03-31") == 3


def test_quota_is_per_tenant_and_other_tenants_unaffected(
    mem: AgentMemory, clock: ManualClock
) -> None:
    beta = AgentContext(agent_id="b", role=AgentRole.ORCHESTRATOR, tenant="beta", namespace="p1")
    mem.set_quota("acme", daily_writes=0, context=ORCH)
    with pytest.raises(QuotaExceededError):
        mem.add("blocked", context=ORCH)
    for i in range(5):
        mem.add(f"beta fact {i}", context=beta)
    assert mem.quota_status(context=beta)["daily_writes"] is None


def test_removing_a_quota_and_audit_of_changes(mem: AgentMemory) -> None:
    mem.set_quota("acme", daily_writes=1, context=ORCH)
    mem.add("one", context=ORCH)
    with pytest.raises(QuotaExceededError):
        mem.add("two", context=ORCH)
    mem.set_quota("acme", daily_writes=None, context=ORCH)
    mem.add("two", context=ORCH)
    changes = [
        (e.details["old"], e.details["new"], e.agent_id)
        for e in mem.audit_log(context=ORCH)
        if e.action == "quota_set"
    ]
    assert changes == [(None, 1, "orch"), (1, None, "orch")]


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True, 10**9])
def test_bad_quota_values_are_refused_and_change_nothing(mem: AgentMemory, bad: object) -> None:
    mem.set_quota("acme", daily_writes=5, context=ORCH)
    with pytest.raises(ValidationError):
        mem.set_quota("acme", daily_writes=bad, context=ORCH)  # type: ignore[arg-type]
    assert mem.store.get_quota(Scope("acme")) == 5


def test_only_orchestrators_of_the_tenant_set_quotas(mem: AgentMemory) -> None:
    for role in (AgentRole.PLANNER, AgentRole.EXECUTOR, AgentRole.REVIEWER, AgentRole.MONITOR):
        with pytest.raises(AccessDenied):
            mem.set_quota("acme", daily_writes=1, context=ORCH.as_agent("x", role))
    with pytest.raises(AccessDenied):
        mem.set_quota("beta", daily_writes=1, context=ORCH)
    with pytest.raises(AccessDenied):
        mem.set_quota("acme", daily_writes=1, context=ORCH.as_agent("ro", read_only=True))
    assert mem.store.get_quota(Scope("acme")) is None
    assert mem.store.get_quota(Scope("beta")) is None


def test_max_writes_per_agent(mem: AgentMemory) -> None:
    capped = AgentContext(
        agent_id="capped", role=AgentRole.EXECUTOR, tenant="acme", max_writes_per_agent=2
    )
    a = mem.add("first", context=capped)
    mem.update(a.id, content="first, v2", context=capped)
    with pytest.raises(QuotaExceededError) as err:
        mem.add("third", context=capped)
    assert err.value.details["limit"] == 2
    mem.add("another agent may still write", context=ORCH)


def test_concurrent_writers_cannot_overrun_the_quota(tmp_path: Path, clock: ManualClock) -> None:
    """Two AgentMemory instances (two connections) race on one file: the check is atomic."""
    path = tmp_path / "shared.db"
    mems = [
        AgentMemory(path, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(s))
        for s in (1, 2)
    ]
    mems[0].set_quota("acme", daily_writes=7, context=ORCH)
    ok: list[str] = []
    refused: list[str] = []
    lock = threading.Lock()

    def writer(m: AgentMemory, who: int) -> None:
        for i in range(10):
            try:
                m.add(f"writer {who} fact {i}", context=ORCH)
                with lock:
                    ok.append(f"{who}-{i}")
            except QuotaExceededError:
                with lock:
                    refused.append(f"{who}-{i}")

    threads = [threading.Thread(target=writer, args=(m, n)) for n, m in enumerate(mems)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 7 and len(refused) == 13
    assert mems[0].store.count_rows(Scope("acme"))["total"] == 7
    assert mems[0].store.count_writes(Scope("acme"), utc_day(clock.now_us())) == 7
    for m in mems:
        m.close()


def test_ingest_is_held_to_the_same_quota(mem: AgentMemory) -> None:
    mem.set_quota("acme", daily_writes=0, context=ORCH)
    before = mem.store.count_rows(Scope("acme"))
    with pytest.raises(QuotaExceededError):
        mem.ingest_round(
            {"user": "I moved to Lisbon last week.", "assistant": "Noted."}, context=WRITER
        )
    after = mem.store.count_rows(Scope("acme"))
    # a refused round stores nothing, not even its episode (issue 16, finding 8)
    assert after["total"] == before["total"] == 0
    assert after["episodes"] == before["episodes"] == 0
