"""reflect() stores its memory and its ``reflection`` audit entry in one transaction: a
crash between the two steps leaves neither (the chain records every write: DESIGN.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="t", namespace="n")


class Crash(RuntimeError):
    """The process dying between the memory's write and its reflection audit entry."""


def test_crash_between_reflection_memory_and_its_audit_entry_leaves_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(), context=CTX)
    try:
        for day, city in (("10", "Berlin"), ("11", "Paris"), ("12", "Berlin")):
            mem.ingest_round(
                {"user": f"I live in {city}.", "assistant": "Noted.",
                 "timestamp": f"2026-05-{day}T10:00:00Z", "user_name": "Ana"},
            )  # fmt: skip
        before = sorted(m.id for m in mem.list(status="all", limit=1000))
        chain_before = len(mem.audit_log(limit=10_000))
        real = mem.auditor.record

        def record(ctx: AgentContext, action: str, *args: Any, **kwargs: Any) -> Any:
            if action == "reflection":  # the memory is written: die before its entry
                raise Crash(action)
            return real(ctx, action, *args, **kwargs)

        monkeypatch.setattr(mem.auditor, "record", record)
        with pytest.raises(Crash):
            mem.reflect(min_episodes=2)
        after = mem.list(status="all", limit=1000)
        assert sorted(m.id for m in after) == before
        assert not [m for m in after if m.category == "reflection"]
        assert len(mem.audit_log(limit=10_000)) == chain_before
        monkeypatch.setattr(mem.auditor, "record", real)
        kept = mem.reflect(min_episodes=2)  # the store is usable and the retry is whole
        actions = [e.action for e in mem.audit_log(limit=10_000)]
        assert kept.memory_id is not None and "reflection" in actions
        assert mem.verify_audit_chain().ok
    finally:
        mem.close()
