"""Optional LLM query lanes (HyDE, multi-query) behind a tiny callable interface.

The pipeline only ever sees ``QueryExpander`` callables: text in, texts out.
With the config flags off (the default) the pipeline never calls them, so no
LLM is on the read path. An expander built from an LLM must pin temperature 0;
``llm_expanders`` does that for any provider offering
``complete(prompt, *, temperature) -> str``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

QueryExpander = Callable[[str], list[str]]

HYDE_PROMPT = (
    "Write one short passage, as it could appear in a personal memory store, that would "
    "answer the question below. Output the passage only.\n\nQuestion: {query}\n"
)
MULTI_QUERY_PROMPT = (
    "Rewrite the search query below in {n} different ways, one per line, keeping names and "
    "dates. Output the rewrites only.\n\nQuery: {query}\n"
)


class CompletionProvider(Protocol):
    def complete(self, prompt: str, *, temperature: float) -> str: ...


def llm_expanders(
    provider: CompletionProvider | Any, *, n_queries: int = 3, temperature: float = 0.0
) -> Mapping[str, QueryExpander]:
    """HyDE and multi-query expanders over a provider; temperature pinned to 0."""
    if temperature != 0.0:
        raise ValueError("LLM query lanes run at temperature 0 only")

    def hyde(query: str) -> list[str]:
        text = provider.complete(HYDE_PROMPT.format(query=query), temperature=0.0)
        return [text.strip()] if text and text.strip() else []

    def multi(query: str) -> list[str]:
        text = provider.complete(
            MULTI_QUERY_PROMPT.format(query=query, n=n_queries), temperature=0.0
        )
        lines = [ln.strip(" -*\t") for ln in (text or "").splitlines()]
        return [ln for ln in lines if ln][:n_queries]

    return {"hyde": hyde, "multi_query": multi}


def expanders_from_settings(
    llm_settings: Mapping[str, Any] | None, *, n_queries: int = 3
) -> Mapping[str, QueryExpander] | None:
    """Expanders over the configured LLM (``Config.llm``), or None when none is configured.

    Only called when a lane flag is on, so with the flags off no provider is even built.
    """
    from attestor_arango.llm import provider_from_settings

    provider = provider_from_settings(dict(llm_settings or {}))
    if provider is None:
        return None
    return llm_expanders(provider, n_queries=n_queries)


def expanders_for(
    hyde: bool, multi_query: bool, n_queries: int, llm_settings: Mapping[str, Any] | None
) -> Mapping[str, QueryExpander] | None:
    """The LLM query lanes a recall may call: none unless a lane is switched on in the
    retrieval config (off by default), so no provider is built for a plain recall."""
    if not (hyde or multi_query):
        return None
    return expanders_from_settings(llm_settings, n_queries=n_queries)
