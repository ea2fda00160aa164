"""What the docs promise about contradictions holds: consolidate() re-resolves and flags
nothing, reflect() flags a contradiction and resolves nothing."""

from __future__ import annotations

from pathlib import Path

from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

ROOT = Path(__file__).resolve().parents[1]
CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="t", namespace="n")


def test_docs_name_reflect_as_the_step_that_flags_contradictions() -> None:
    skill = " ".join((ROOT / "SKILL.md").read_text(encoding="utf-8").split())
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "It reports counts, not contradictions: `reflect` is the step that flags them" in skill
    assert "`reflect()` is the step that flags contradictions" in readme


def test_consolidate_leaves_contradictions_to_reflect(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(), context=CTX)
    try:
        for day, city in (("10", "Berlin"), ("11", "Paris"), ("12", "Berlin")):
            mem.ingest_round(
                {"user": f"I live in {city}.", "assistant": "Noted.",
                 "timestamp": f"2026-05-{day}T10:00:00Z", "user_name": "Ana"},
            )  # fmt: skip
        before = [(m.id, m.status.value) for m in mem.list(status="all", limit=1000)]
        report = mem.consolidate(limit=50)
        assert "contradictions" not in report.to_dict()
        reflection = mem.reflect(min_episodes=2, store=False)
        assert reflection.contradictions_for_review  # Berlin -> Paris -> Berlin is flagged
        after = [(m.id, m.status.value) for m in mem.list(status="all", limit=1000)]
        assert after == before  # neither step resolved anything
    finally:
        mem.close()
