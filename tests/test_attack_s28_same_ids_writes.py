"""Session 28 regression guard: a tenant holding another tenant's very memory ids (ids are
per tenant since schema 6: the second tenant imports the first one's export as its own)
forgets, updates, applies retention, compacts and purges them; the first tenant's rows,
reads, entities, export and audit chain stay exactly as they were, in the process and
after a reopen.

Held when written. The reads of two tenants sharing ids are guarded by
``test_erasure_residue``; this guards the writes, each of which names a row by its id
(``CLOSE_MEMORY``, the compaction's and retention's deletes, the purge's statements):
one that matched on the id alone would close or delete the other tenant's row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from tests.forged_chain import rechained

ORCH = AgentRole.ORCHESTRATOR
VICTIM = AgentContext(agent_id="orch", role=ORCH, tenant="victim", namespace="n1")
MALLORY = AgentContext(agent_id="orch", role=ORCH, tenant="mallory", namespace="n1")


def _memory(folder: Path, clock: ManualClock) -> AgentMemory:
    config = Config(path=str(folder / "mem.db"))
    return AgentMemory(config=config, embedder=HashingEmbedder(64), clock=clock)


def _state(mem: AgentMemory) -> dict[str, Any]:
    """Everything the victim reads of itself, ids and texts."""
    ctx = VICTIM
    rows = mem.list(status="all", limit=1000, context=ctx)
    export = mem.export_user("victim", context=ctx)
    return {
        "rows": [(m.id, m.content, m.status, m.t_expired) for m in rows],
        "recall": [r.memory.id for r in mem.recall("where does Quokka live", context=ctx).results],
        "search": [m.id for m in mem.search("Quokka", context=ctx)],
        "facts": [m.id for m in mem.current_facts(context=ctx)],
        "timeline": [m.id for m in mem.timeline("Quokka", context=ctx)],
        "entities": sorted(e.name for e in mem.store.list_entities(Scope("victim"))),
        "gets": [mem.get(m.id, context=ctx).content for m in rows],
        "export": sorted((m["id"], m["content"], m["status"]) for m in export["memories"]),
        "episodes": len(export["episodes"]),
    }


def test_writes_of_a_tenant_holding_the_same_ids_leave_the_other_alone(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = _memory(tmp_path, clock)
    first = mem.add("Quokka lives in Zanzibar", entity="Quokka", tags=["t"], context=VICTIM)
    current = mem.update(first.id, content="Quokka moved to Perth", context=VICTIM)
    other = mem.add("Quokka manages Wombat", entity="Wombat", context=VICTIM)
    mem.ingest_round({"user": "I am Quokka, I moved to Nice", "assistant": "Noted."},
                     context=VICTIM.with_session("S1"))  # fmt: skip
    dump = json.dumps(mem.export_user("victim", context=VICTIM)).replace('"victim"', '"mallory"')
    mem.import_user(rechained(json.loads(dump)), context=MALLORY)
    mine = sorted(m.id for m in mem.list(status="all", limit=1000, context=VICTIM))
    theirs = sorted(m.id for m in mem.list(status="all", limit=1000, context=MALLORY))
    assert mine and mine == theirs  # the premise: one set of ids in both tenants
    before = _state(mem)
    head = mem.audit_log(limit=10_000, context=VICTIM)[-1]

    mem.forget(other.id, reason="gone", context=MALLORY)
    mem.update(current.id, content="Quokka went to Mars", context=MALLORY)
    clock.advance(days=3)
    assert mem.compact(older_than="1d", context=MALLORY)["removed"] == 1  # the forgotten row
    policy = [{"name": "all", "action": "delete", "older_than": "1d"}]
    assert mem.apply_retention(policy, context=MALLORY).outcomes[0].applied >= 1
    assert mem.purge_user("mallory", "drill", context=MALLORY).ok

    assert _state(mem) == before
    report = mem.verify_audit_chain("victim", anchor=(head.seq, head.hash), context=VICTIM)
    assert report.ok, report
    mem.close()
    mem = _memory(tmp_path, clock)  # the indexes read back from their files
    assert _state(mem) == before
    mem.close()
