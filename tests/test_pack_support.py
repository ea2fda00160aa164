"""ContextPack.support: the deterministic signal benchmarks/abstention.py thresholds."""

from __future__ import annotations

from pathlib import Path

from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="t", namespace="n")


def test_support_is_the_share_of_query_terms_the_best_note_covers(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(), context=CTX)
    try:
        mem.add("Ana lives in Lisbon", entity="Ana", category="city")
        mem.add("Bruno works at Acme", entity="Bruno", category="employer")
        answered = mem.recall_as_pack("Where does Ana live?")
        assert answered.support == 1.0  # ana, live: both in one note
        unanswered = mem.recall_as_pack("What is Ana's favourite food?")
        assert 0.0 < unanswered.support < 0.5  # only "ana" of ana/favourit/food
        assert mem.recall_as_pack("Where does Ana live?").support == answered.support
        assert "support" not in answered.to_json()  # derived, not part of the pack's bytes
    finally:
        mem.close()
