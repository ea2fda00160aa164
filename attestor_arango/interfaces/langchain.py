"""LangChain ``BaseRetriever`` over ``AgentMemory.recall``.

Install with the ``langchain`` extra. Each call is one deterministic, read-only
recall as the retriever's AgentContext (its tenant, namespace and budgets),
optionally at a past moment (``as_of``) or over a validity window
(``time_window``); the top ``k`` results become Documents whose ``page_content``
is the memory's text and whose metadata carries its id, score and provenance,
so an answer can cite the memory it used.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from attestor_arango.context import AgentContext
from attestor_arango.validation import check_limit

MAX_K = 1000  # documents one call returns at most


class AttestorRetriever(BaseRetriever):
    """Documents from AgentMemory's ranked recall, best first."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(description="an AgentMemory (or anything with its recall method)")
    context: AgentContext | None = Field(
        default=None, description="who recalls; default: the memory's own context"
    )
    k: int = Field(default=4, gt=0, le=MAX_K, description="documents to return at most")
    as_of: str | datetime | None = Field(default=None, description="recall a past belief")
    time_window: tuple[str | datetime, str | datetime] | None = Field(
        default=None, description="only facts valid in this [start, end] window"
    )
    token_budget: int | None = Field(default=None, gt=0, description="memory tokens at most")

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        """Raises ``ValidationError`` (a ``k`` that is not a whole number from 1 to
        ``MAX_K``, an empty query, ...) or ``AccessDenied`` from recall."""
        given = kwargs.get("k")
        # the per-call k is bounded as the field is; checked again for the field, which
        # pydantic does not re-validate when it is assigned after construction
        k = check_limit(self.k if given is None else given, maximum=MAX_K, name="k")
        response = self.memory.recall(
            query,
            as_of=kwargs.get("as_of", self.as_of),
            time_window=kwargs.get("time_window", self.time_window),
            token_budget=kwargs.get("token_budget", self.token_budget),
            context=self.context,
        )
        return [document(r.memory, r.score) for r in list(response.results)[:k]]


def document(memory: Any, score: float) -> Document:
    """One recalled memory as a LangChain Document (id and citation fields in metadata)."""
    return Document(
        id=memory.id,
        page_content=memory.content,
        metadata={
            "id": memory.id,
            "score": score,
            "entity": memory.entity,
            "category": memory.category,
            "tags": list(memory.tags),
            "namespace": memory.namespace,
            "valid_from": memory.valid_from.isoformat(),
            "valid_until": memory.valid_until.isoformat() if memory.valid_until else None,
            "recorded_at": memory.t_created.isoformat(),
            "agent_id": memory.provenance.agent_id,
        },
    )
