"""AgentMemory's retrieval: ``recall`` and ``recall_as_pack``.

The ranking itself lives in attestor_arango/retrieval/; these methods check the
permission and the budget, pick the view and the optional LLM query lanes, and count the
tokens spent. mypy sees ``self`` in a mixin as the mixin; each method ``cast``s it to
the ``AgentMemory`` it is mixed into, whose helpers it calls and which the functions it
delegates to take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from attestor_arango.context import AgentContext, Permission
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.errors import ValidationError
from attestor_arango.models import RecallResponse
from attestor_arango.retrieval import recall as run_recall
from attestor_arango.retrieval.lanes import QueryExpander, expanders_from_settings
from attestor_arango.retrieval.pack import ContextPack
from attestor_arango.retrieval.trace import shared_tracer
from attestor_arango.validation import TimeInput

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory


class RetrievalMixin:
    """Read-only, ranked recall for ``AgentMemory``; no LLM unless query lanes are on."""

    def recall(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> RecallResponse:
        """Ranked, budget-packed memories for a query; no LLM, no writes."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.READ, "recall")
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty; pass what you want to recall")
        budget = ctx.token_budget if token_budget is None else token_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
            raise ValidationError("token_budget must be a positive integer")
        view = mem._view(as_of, time_window)
        limit_blas_threads()  # small products only: see attestor_arango/core/blas.py
        response = run_recall(
            mem.store,
            mem.embedder,
            mem._scope(ctx),
            query.strip(),
            view,
            budget,
            mem.retrieval_config,
            tracer=shared_tracer(mem.config.trace),
            expanders=mem._query_expanders(),
        )
        ctx.token_budget_used += response.tokens_used
        return response

    def recall_as_pack(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> ContextPack:
        """``recall`` as a frozen, JSON-serialisable pack; ``pack.render_prompt()`` for the LLM."""
        response = self.recall(
            query,
            as_of=as_of,
            time_window=time_window,
            token_budget=token_budget,
            context=context,
        )
        return ContextPack.from_response(response)

    def _query_expanders(self) -> Mapping[str, QueryExpander] | None:
        """LLM query lanes only when switched on in the retrieval config (off by default)."""
        mem = cast("AgentMemory", self)
        cfg = mem.retrieval_config
        if not (cfg.hyde_enabled or cfg.multi_query_enabled):
            return None
        return expanders_from_settings(mem.config.llm, n_queries=cfg.multi_query_n)
