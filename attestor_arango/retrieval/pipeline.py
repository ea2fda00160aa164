"""Recall: vector and BM25 lanes fused by reciprocal rank fusion, budget-packed.

Pure Python over the candidates a Store returns, so both backends rank alike.
A failing lane degrades the answer and is named in ``errors``; it never fails
silently and never fails the whole recall while another lane answered.
"""

from __future__ import annotations

from ..clock import from_us
from ..embeddings import Embedder
from ..models import RecallResponse, RecallResult, ScoreBreakdown
from ..scope import Scope, TemporalView
from ..store.protocol import Hit, Store
from ..tokens import count_tokens
from .config import RetrievalConfig


def recall(
    store: Store,
    embedder: Embedder,
    scope: Scope,
    query: str,
    view: TemporalView,
    budget: int,
    config: RetrievalConfig,
) -> RecallResponse:
    errors: dict[str, str] = {}
    vector_hits: list[Hit] = []
    text_hits: list[Hit] = []
    try:
        qvec = embedder.embed([query])[0]
        vector_hits = store.vector_candidates(scope, qvec, config.vector_k, view)
    except Exception as exc:  # a lane failure degrades, it does not abort
        errors["vector_error"] = f"{type(exc).__name__}: {exc}"
    try:
        text_hits = store.text_candidates(scope, query, config.text_k, view)
    except Exception as exc:
        errors["bm25_error"] = f"{type(exc).__name__}: {exc}"

    memories = {}
    parts: dict[str, dict[str, float | int]] = {}
    for lane, hits in (("vector", vector_hits), ("bm25", text_hits)):
        for rank, hit in enumerate(hits, start=1):
            memories[hit.memory.id] = hit.memory
            entry = parts.setdefault(hit.memory.id, {"rrf": 0.0})
            entry[f"{lane}_rank"] = rank
            entry[f"{lane}_score"] = hit.score
            entry["rrf"] = float(entry["rrf"]) + 1.0 / (config.rrf_k + rank)

    ordered = sorted(
        memories.values(),
        key=lambda m: (-float(parts[m.id]["rrf"]), -m.us("t_created"), m.id),
    )
    results: list[RecallResult] = []
    used = 0
    for memory in ordered:
        tokens = count_tokens(memory.content)
        if used + tokens > budget:
            continue
        used += tokens
        p = parts[memory.id]
        score = round(float(p["rrf"]), 12)
        breakdown = ScoreBreakdown(
            vector_rank=p.get("vector_rank"),  # type: ignore[arg-type]
            vector_score=p.get("vector_score"),
            bm25_rank=p.get("bm25_rank"),  # type: ignore[arg-type]
            bm25_score=p.get("bm25_score"),
            rrf=score,
            final=score,
        )
        results.append(
            RecallResult(
                memory=memory.at(view.as_of), score=score, tokens=tokens, breakdown=breakdown
            )
        )
    return RecallResponse(
        query=query,
        as_of=from_us(view.as_of),
        results=tuple(results),
        tokens_used=used,
        token_budget=budget,
        errors=errors,
    )
