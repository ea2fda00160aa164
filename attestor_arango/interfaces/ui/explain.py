"""The recall explainer: why each result ranked where it did, and what the budget cut.

The page runs the same ``recall`` a REST caller would (same query, as_of, budget and
context) and shows every field of each result's ``ScoreBreakdown`` as the API returns
it. The budget fit is the last step and never reorders (retrieval/budget.py), so a
second recall with an unbounded budget gives the whole ranked list; whatever it holds
that the budgeted recall does not was cut by the budget. A recall is replayed by its
inputs: the permalink pins ``as_of`` to the recall's own instant, and the replay must
come back with the same recall id (ids are hashes of the inputs) and the same results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from attestor_arango.clock import iso, to_us
from attestor_arango.errors import AttestorError
from attestor_arango.interfaces.ui import params as P
from attestor_arango.interfaces.ui.access import Reader
from attestor_arango.models import RecallResponse, RecallResult
from attestor_arango.retrieval.pack import ContextPack

UNBOUNDED = 1 << 40  # tokens: more than any tenant holds, so nothing is cut

# (field of ScoreBreakdown, column heading, the pipeline step it comes from)
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("vector_rank", "vec rank", "vector lane"),
    ("vector_score", "vec score", "vector lane (cosine)"),
    ("bm25_rank", "bm25 rank", "BM25 lane"),
    ("bm25_score", "bm25 score", "BM25 lane"),
    ("rrf", "RRF", "reciprocal rank fusion"),
    ("rrf_norm", "RRF norm", "fusion, normalised"),
    ("graph_hops", "hops", "graph affinity"),
    ("graph_bonus", "graph", "graph affinity bonus"),
    ("decay", "decay", "confidence decay"),
    ("boost", "boost", "recency boost"),
    ("freshness", "fresh", "freshness"),
    ("session", "turns", "neighbouring turns"),
    ("coverage", "coverage", "query-term coverage"),
    ("time_cue", "time cue", "time cue"),
    ("relevance", "relevance", "relevance before MMR"),
    ("mmr", "MMR", "maximal marginal relevance"),
    ("final", "final", "final score"),
)


@dataclass(frozen=True)
class Cut:
    rank: int  # place in the unbounded ranking, 1-based
    result: RecallResult


def explain(r: Reader, q: Mapping[str, str]) -> dict[str, Any]:
    query = P.text(q, "q")
    if query is None:
        return {"recall_query": None, "fields": FIELDS}
    as_of = P.as_of(q)
    budget_raw = P.text(q, "budget")
    budget = None if budget_raw is None else P.number(q, "budget", 0, 1, 10_000_000)
    args: dict[str, Any] = {"query": query, "as_of": as_of, "token_budget": budget}
    response: RecallResponse = r.call("recall", **args)
    # the pack recall_as_pack returns for this very response (no third ranking run)
    pack = ContextPack.from_response(response)
    cuts, cut_error = _cuts(r, query, response)
    expect = P.text(q, "expect")
    return {
        "recall_query": query,
        "fields": FIELDS,
        "response": response,
        "pack": pack,
        "prompt": pack.render_prompt(),
        "cuts": cuts,
        "cut_error": cut_error,
        "replay_as_of": iso(to_us(response.as_of)),
        "expect": expect,
        "replay_ok": None if expect is None else expect == response.recall_id,
        "budget": budget,
    }


def _cuts(r: Reader, query: str, response: RecallResponse) -> tuple[list[Cut], str | None]:
    """Results of the whole ranking that the budget left out, with their places."""
    kept = {res.memory.id for res in response.results}
    try:
        full: RecallResponse = r.call(
            "recall",
            query=query,
            as_of=iso(to_us(response.as_of)),
            token_budget=UNBOUNDED,
        )
    except AttestorError as exc:
        return [], exc.message
    cuts = [
        Cut(rank=i, result=res)
        for i, res in enumerate(full.results, start=1)
        if res.memory.id not in kept
    ]
    return cuts, None


def value(result: RecallResult, name: str) -> Any:
    """A breakdown field as the API returns it (None where the step did not apply)."""
    return getattr(result.breakdown, name)
