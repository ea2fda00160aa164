"""Authorisation holds as ceilings (issue 16, findings 7, 8, 11, 13): through a real uvicorn
server and the library."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import httpx
import pytest
from interface_support import running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import AccessDenied, QuotaExceededError
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope


def _memory(path: Path) -> AgentMemory:
    return AgentMemory(
        path / "memory.db", embedder=HashingEmbedder(64), clock=ManualClock(), ids=SeededIdSource(5)
    )


def _ring(**grant: object) -> KeyRing:
    values: dict[str, object] = {
        "id": "w",
        "sha256": hash_key("key-w"),
        "tenant": "acme",
        "roles": ("executor",),
        "agent_ids": ("bot",),
    }
    values.update(grant)
    reviewer = ApiKey(id="r", sha256=hash_key("key-r"), tenant="acme",
                      roles=(AgentRole.REVIEWER,), agent_ids=("*",))  # fmt: skip
    return KeyRing([ApiKey.model_validate(values), reviewer])


# finding 11 -------------------------------------------------------------------------------------
def test_write_limit_is_a_ceiling_new_session_or_budget_headers_do_not_reset_it(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path)
    with running_server(mem, _ring(max_writes_per_agent=2)) as url, httpx.Client(base_url=url) as c:
        codes = []
        for i in range(12):
            headers = {"x-api-key": "key-w", "x-session-id": f"s{i}"}
            headers["x-token-budget"] = str(100 + i)
            r = c.post("/v1/memories", json={"content": f"fact number {i}"}, headers=headers)
            codes.append(r.status_code)
    stored = mem.stats(context=AgentContext(agent_id="x", tenant="acme")).total
    mem.close()
    assert codes[:2] == [200, 200] and set(codes[2:]) == {429}, codes
    assert stored == 2


def test_token_budget_in_the_body_cannot_exceed_the_keys_budget(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ctx = AgentContext(agent_id="bot", role="executor", tenant="acme")
    for i in range(30):
        mem.add(f"the quarterly report number {i} mentions budgets " + "word " * 40, context=ctx)
    with running_server(mem, _ring(token_budget=60)) as url, httpx.Client(base_url=url) as c:
        body = {"query": "quarterly report budgets", "token_budget": 100_000}
        r = c.post("/v1/recall", json=body, headers={"x-api-key": "key-w"})
    mem.close()
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["token_budget"] == 60 and data["tokens_used"] <= 60


# finding 13 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [("role", AgentRole.ORCHESTRATOR), ("read_only", False), ("tenant", "other"),
     ("max_writes_per_agent", None), ("token_budget", 10**9), ("agent_id", "root")],
)  # fmt: skip
def test_a_child_context_cannot_widen_itself_by_assignment(field: str, value: object) -> None:
    parent = AgentContext(agent_id="boss", role="orchestrator", tenant="acme")
    child = parent.as_agent("kid", AgentRole.REVIEWER, read_only=True, token_budget=50)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(child, field, value)
    assert (child.role, child.read_only, child.tenant) == (AgentRole.REVIEWER, True, "acme")
    assert child.token_budget == 50
    with pytest.raises(AccessDenied):
        child.require(__import__("attestor_arango.context").context.Permission.WRITE, "add")


def test_narrowing_returns_new_objects_and_a_child_budget_never_exceeds_the_parent() -> None:
    parent = AgentContext(agent_id="boss", tenant="acme", token_budget=100)
    child = parent.as_agent("kid", token_budget=10**6)
    assert child is not parent and child.token_budget == 100
    assert parent.agent_id == "boss" and parent.token_budget == 100


# finding 7 --------------------------------------------------------------------------------------
def test_refused_writes_of_a_read_only_key_do_not_grow_the_store(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    db = tmp_path / "memory.db"
    with running_server(mem, _ring()) as url, httpx.Client(base_url=url) as c:
        c.get("/v1/stats", headers={"x-api-key": "key-r", "x-agent-id": "mon"})
        before = sum(p.stat().st_size for p in tmp_path.glob("memory.db*"))
        codes = set()
        for i in range(50):
            headers = {"x-api-key": "key-r", "x-agent-id": f"{i}" + "A" * 60_000}
            r = c.post("/v1/memories", json={"content": "x" * 60_000}, headers=headers)
            codes.add(r.status_code)
        for _ in range(200):  # a short agent id: refusals are audited, but rate-limited
            short = {"x-api-key": "key-r", "x-agent-id": "mon"}
            r = c.post("/v1/memories", json={"content": "y"}, headers=short)
            codes.add(r.status_code)
    entries = mem.store.read_audit(Scope("acme"), 10_000, 0)
    mem.close()
    after = sum(p.stat().st_size for p in tmp_path.glob("memory.db*"))
    assert codes <= {400, 403, 413, 422}, codes
    assert max(len(e.agent_id) for e in entries) <= 128
    denials = [e for e in entries if e.action == "permission_denied"]
    assert 1 <= len(denials) <= 20, len(denials)
    assert after - before < 400_000, (before, after)
    assert db.exists()


# finding 8 --------------------------------------------------------------------------------------
def test_ingest_over_quota_stores_nothing(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    orch = AgentContext(agent_id="o", role="orchestrator", tenant="acme")
    mem.set_quota("acme", daily_writes=0, context=orch)
    before = mem.stats(context=orch)
    for i in range(5):
        with pytest.raises(QuotaExceededError):
            mem.ingest_round({"user": f"I live in Paris {i}. " + "filler " * 2000}, context=orch)
    after = mem.stats(context=orch)
    mem.close()
    assert (after.episodes, after.total) == (before.episodes, before.total) == (0, 0)


def test_ingest_without_write_permission_stores_nothing(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    reviewer = AgentContext(agent_id="r", role="reviewer", tenant="acme")
    with pytest.raises(AccessDenied):
        mem.ingest_round({"user": "I live in Paris."}, context=reviewer)
    stats = mem.stats(context=reviewer)
    mem.close()
    assert stats.episodes == 0
