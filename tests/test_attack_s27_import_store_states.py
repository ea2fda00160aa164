"""Session 27, judged: an import must accept the states the store itself makes.

A suggested refusal, "two active rows for one entity and category, or a link to a row the
export does not hold, is a broken export", would refuse the store's own exports: ingest
writes facts with ``supersede=False`` (two things the user likes are two active rows of
``user``/``likes``), and a compaction removes an archived row whose predecessor still
names it as its successor. Those links are covered by the chain the import checks (a
row's digest covers ``supersedes``; a close records its successor), so an edited one is
refused there. This guards that such an export is restored, as itself and as a copy, and
verifies."""

from __future__ import annotations

import collections
import json
from datetime import UTC, datetime
from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
COPY = AgentContext(agent_id="orch", role="orchestrator", tenant="copy", namespace="n1")


def test_duplicate_active_facts_and_a_compacted_successor_are_imported(tmp_path: Path) -> None:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=clock)
    mem.ingest_round({"user": "I live in Zurich. I like tea."}, context=A)
    mem.ingest_round({"user": "I like coffee."}, context=A)
    old = mem.add("Ann lives in Oslo", entity="Ann", category="home", context=A)
    new = mem.update(old.id, content="Ann lives in Bergen", context=A)
    mem.forget(new.id, context=A)
    clock.advance(days=3)
    assert mem.compact(older_than="1d", context=A)["removed"] == 1
    data = json.loads(json.dumps(mem.export_user("acme", context=A)))
    mem.purge_user("acme", "restore drill", context=A)

    active = collections.Counter(
        (m["entity"], m["category"]) for m in data["memories"] if m["status"] == "active"
    )
    ids = {m["id"] for m in data["memories"]}
    assert max(active.values()) > 1  # the premises: two active rows of one entity+category
    assert any(m["superseded_by"] not in ids for m in data["memories"] if m["superseded_by"])
    for ctx in (A, COPY):
        assert mem.import_user(data, context=ctx)["memories"] == len(data["memories"])
        assert mem.verify_audit_chain(context=ctx).ok
    mem.close()
