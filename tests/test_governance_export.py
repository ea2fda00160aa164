"""Subject-access export and restoring it into an empty tenant."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AccessDenied, AgentContext, AgentRole, ConflictError, ValidationError
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.config import Config, SigningSettings
from attestor_arango.core.signing import Signer
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Episode, Relation
from attestor_arango.scope import Scope

START = datetime(2026, 1, 1, tzinfo=UTC)
ORCH = AgentContext(
    agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="p1", session_id="s1"
)


def _fill(mem: AgentMemory) -> None:
    a = mem.add("Alice leads design", entity="Alice", category="role", tags=["org"], context=ORCH)
    mem.add("Alice leads research", entity="Alice", category="role", context=ORCH)
    mem.add("Bob likes tea", entity="Bob", category="pref", context=ORCH.as_agent("ex", "executor"))
    gone = mem.add("temporary note", context=ORCH)
    mem.forget(gone.id, reason="stale", context=ORCH)
    other = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="p2")
    mem.add("Second namespace fact", context=other)
    now = mem.clock.now_us()
    scope = Scope("acme", "p1")
    mem.store.put_episode(
        scope,
        Episode(
            id="ep1",
            tenant="acme",
            namespace="p1",
            session_id="s1",
            agent_id="orch",
            user_text="Alice leads research now",
            assistant_text="Noted.",
            user_time=from_us(now),
            t_created=from_us(now),
        ),
    )
    mem.store.add_relation(
        scope,
        Relation(
            id="r1",
            tenant="acme",
            namespace="p1",
            source="alice",
            relation="works_with",
            target="bob",
            memory_id=a.id,
            t_created=from_us(now),
        ),
    )
    mem.set_quota("acme", daily_writes=500, context=ORCH)


def _new_mem(path: Path, clock: ManualClock, signing_key: Path | None = None) -> AgentMemory:
    config = Config(
        path=str(path),
        signing=SigningSettings(
            enabled=signing_key is not None,
            key_path=None if signing_key is None else str(signing_key),
        ),
    )
    return AgentMemory(
        config=config, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(11)
    )


def _comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in ("memories", "episodes", "entities", "relations", "quota")}


def test_export_holds_everything_a_subject_access_request_needs(mem: AgentMemory) -> None:
    _fill(mem)
    data = mem.export_user("acme", context=ORCH)
    json.dumps(data)  # JSON-ready as returned
    assert data["format"] == "attestor-arango-export" and data["tenant"] == "acme"
    contents = sorted(m["content"] for m in data["memories"])
    assert contents == sorted(
        [
            "Alice leads design",
            "Alice leads research",
            "Bob likes tea",
            "temporary note",
            "Second namespace fact",
        ]
    )
    by_content = {m["content"]: m for m in data["memories"]}
    assert by_content["Alice leads design"]["status"] == "superseded"
    assert by_content["temporary note"]["status"] == "archived"
    assert by_content["Bob likes tea"]["provenance"]["agent_id"] == "ex"
    assert [e["user_text"] for e in data["episodes"]] == ["Alice leads research now"]
    assert data["sessions"] == [{"session_id": "s1", "memories": 4, "episodes": 1}]
    assert {e["key"] for e in data["entities"]} == {"alice", "bob"}
    assert [r["id"] for r in data["relations"]] == ["r1"]
    assert data["quota"] == {"daily_writes": 500}
    actions = [a["action"] for a in data["audit"]]
    assert {"supersede", "forget", "quota_set"} <= set(actions)
    # the export itself is audited, without content
    last = mem.audit_log(limit=1000, context=ORCH)[-1]
    assert last.action == "export" and last.details["memories"] == 5
    assert "Alice" not in json.dumps(last.details)


def test_round_trip_into_an_empty_tenant_of_a_new_store(tmp_path: Path, clock: ManualClock) -> None:
    key = tmp_path / "key.pem"
    Signer.generate().save(key)
    clock.advance(days=3)
    src = _new_mem(tmp_path / "src.db", clock, key)
    _fill(src)
    exported = json.loads(json.dumps(src.export_user("acme", context=ORCH)))
    # the target's clock is past the export: an import from the future is refused (issue 16)
    dst = _new_mem(tmp_path / "dst.db", ManualClock(clock.now_us() + 1_000_000), key)
    counts = dst.import_user(exported, context=ORCH)
    assert counts == {"memories": 5, "episodes": 1, "entities": 2, "relations": 1, "rekeyed": 0}
    again = dst.export_user("acme", context=ORCH)
    assert _comparable(again) == _comparable(exported)
    # restored rows behave: current facts, history, recall, signatures, the audit chain
    assert [m.content for m in dst.current_facts(entity="Alice", context=ORCH)] == [
        "Alice leads research"
    ]
    assert dst.recall("who leads research", context=ORCH).results
    assert dst.verify_all(context=ORCH)["ok"]
    assert dst.verify_audit_chain(context=ORCH).ok
    entry = next(e for e in dst.audit_log(limit=100, context=ORCH) if e.action == "import")
    assert entry.details["source"]["audit_entries"] == len(exported["audit"])
    assert entry.details["source"]["audit_last_hash"] == exported["audit"][-1]["hash"]
    # later writes get later transaction times than anything imported
    new = dst.add("Alice leads everything", entity="Alice", category="role", context=ORCH)
    assert new.t_created > max(
        from_us(0), *[m.t_created for m in dst.timeline("Alice", context=ORCH)[:-1]]
    )
    src.close()
    dst.close()


def test_purge_then_import_restores_the_same_tenant(mem: AgentMemory) -> None:
    _fill(mem)
    exported = mem.export_user("acme", context=ORCH)
    assert mem.purge_user("acme", "restore drill", context=ORCH).ok
    mem.import_user(exported, context=ORCH)
    assert _comparable(mem.export_user("acme", context=ORCH)) == _comparable(exported)
    assert mem.verify_audit_chain(context=ORCH).ok


def test_import_into_a_tenant_holding_data_is_refused_and_changes_nothing(
    mem: AgentMemory,
) -> None:
    _fill(mem)
    exported = mem.export_user("acme", context=ORCH)
    before = mem.store.tenant_residue(Scope("acme"))
    with pytest.raises(ConflictError, match="empty tenant"):
        mem.import_user(exported, context=ORCH)
    assert mem.store.tenant_residue(Scope("acme")) == before
    # beside the original in one store, a copy as another tenant gets new ids
    copy = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="acme-copy")
    assert mem.import_user(exported, context=copy)["rekeyed"] == 1
    copied = mem.export_user("acme-copy", context=copy)["memories"]
    assert [m["content"] for m in copied] == [m["content"] for m in exported["memories"]]
    assert {m["id"] for m in copied}.isdisjoint(m["id"] for m in exported["memories"])
    assert mem.store.tenant_residue(Scope("acme")) == before


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(format="something-else"),
        lambda d: d.update(version=99),
        lambda d: d.update(memories="nope"),
        lambda d: d["memories"][0].pop("content"),
        lambda d: d["memories"].append(dict(d["memories"][0])),
        lambda d: d.update(quota={"daily_writes": -4}),
    ],
)
def test_malformed_exports_are_refused_before_any_write(
    tmp_path: Path, clock: ManualClock, mutate: Any
) -> None:
    src = _new_mem(tmp_path / "src.db", clock)
    _fill(src)
    data = json.loads(json.dumps(src.export_user("acme", context=ORCH)))
    mutate(data)
    dst = _new_mem(tmp_path / "dst.db", clock)
    with pytest.raises(ValidationError):
        dst.import_user(data, context=ORCH)
    assert not any(dst.store.tenant_residue(Scope("acme")).values())
    assert dst.store.count_rows(Scope("acme"))["audit"] == 0
    src.close()
    dst.close()


def test_export_and_import_need_an_orchestrator_of_that_tenant(mem: AgentMemory) -> None:
    _fill(mem)
    for role in (AgentRole.PLANNER, AgentRole.EXECUTOR, AgentRole.REVIEWER, AgentRole.MONITOR):
        with pytest.raises(AccessDenied):
            mem.export_user("acme", context=ORCH.as_agent("x", role))
    beta = AgentContext(agent_id="b", role=AgentRole.ORCHESTRATOR, tenant="beta")
    with pytest.raises(AccessDenied):
        mem.export_user("acme", context=beta)
    with pytest.raises(AccessDenied):
        mem.import_user({}, context=ORCH.as_agent("p", AgentRole.PLANNER))
    denied = [e.target for e in mem.audit_log(limit=1000, context=beta)]
    assert denied == ["export_user"]
