"""AgentMemory's LLM-driven writes: ingesting conversation rounds, consolidation, reflection.

Each imports its machinery on first use, so ``import attestor_arango.memory`` does not
load the extraction and prompt code. mypy sees ``self`` in a mixin as the mixin; each
method ``cast``s it to the ``AgentMemory`` it is mixed into, whose helpers it calls and
which the functions it delegates to take.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from attestor_arango.context import AgentContext, Permission

if TYPE_CHECKING:
    from attestor_arango.ingest import IngestResult, Turn
    from attestor_arango.ingest.consolidation import ConsolidationReport
    from attestor_arango.ingest.reflection import Reflection
    from attestor_arango.memory import AgentMemory


class IngestMixin:
    """Methods of ``AgentMemory`` that turn conversations into memories."""

    def ingest_round(
        self, turn: Turn | dict[str, Any], *, context: AgentContext | None = None
    ) -> IngestResult:
        """Stores a conversation round as an episode, then extracts and resolves its facts.

        User and assistant facts are extracted separately; each fact becomes one
        ADD / UPDATE / INVALIDATE / NOOP decision with the episode as evidence,
        applied atomically through the same write path as ``add``.
        """
        from attestor_arango.ingest import ingest_round

        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.WRITE, "ingest_round")
        return ingest_round(mem, turn, ctx)

    def consolidate(
        self, *, limit: int = 50, context: AgentContext | None = None
    ) -> ConsolidationReport:
        """Re-reads the ``limit`` most recent episodes (with ``llm.consolidation_model`` if set)."""
        from attestor_arango.ingest.consolidation import consolidate

        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.WRITE, "consolidate")
        return consolidate(mem, ctx, limit=limit)

    def reflect(
        self,
        user: str | None = None,
        *,
        min_episodes: int = 3,
        store: bool = True,
        context: AgentContext | None = None,
    ) -> Reflection:
        """Stable preferences and constraints, changed beliefs, contradictions for human review.

        Nothing read is changed: contradictions are flagged, never resolved. With
        ``store`` the reflection is kept as a memory of category ``reflection``.
        """
        from attestor_arango.ingest.reflection import reflect

        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.WRITE if store else Permission.READ, "reflect")
        return reflect(mem, ctx, user=user, min_episodes=min_episodes, store=store)
