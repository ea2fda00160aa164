"""The recall explainer: why each result ranked where it did, and what the budget cut.

The page makes one ``explain_recall`` call: its ``response`` is what ``recall`` returns
for the same query, as_of, budget and context (same recall id, results and every field
of each ``ScoreBreakdown``), and its ``cut`` is what the budget fit left out of that same
ranking, with each one's place. A recall is replayed by its inputs: the permalink pins
``as_of`` to the recall's own instant, and the replay must come back with the same recall
id (ids are hashes of the inputs) and the same results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attestor_arango.clock import iso, to_us
from attestor_arango.interfaces.ui import params as P
from attestor_arango.interfaces.ui.access import Reader
from attestor_arango.models import RecallExplanation, RecallResult, RecordedRecall
from attestor_arango.retrieval.pack import ContextPack

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
    ("relevance", "relevance", "every signal summed"),
    ("final", "final", "final score"),
)


def explain(r: Reader, q: Mapping[str, str]) -> dict[str, Any]:
    trace = P.text(q, "trace")
    if trace is not None:
        return replay(r, q, trace)
    query = P.text(q, "q")
    if query is None:
        return {"recall_query": None, "fields": FIELDS, "recorded": None}
    as_of = P.as_of(q)
    budget_raw = P.text(q, "budget")
    budget = None if budget_raw is None else P.number(q, "budget", 0, 1, 10_000_000)
    args: dict[str, Any] = {"query": query, "as_of": as_of, "token_budget": budget}
    return _explained(r, query, args, P.text(q, "expect"))


def replay(r: Reader, q: Mapping[str, str], trace: str) -> dict[str, Any]:
    """A recorded recall (``recall_trace``) run again with exactly its recorded inputs.

    The trace keeps the query text only with ``trace.include_content``; without it the
    page asks for the query, and the replay's recall id (a hash of every input) says
    whether the query given was the one recorded.
    """
    recorded: RecordedRecall = r.call("recall_trace", recall_id=trace)
    query = recorded.query or P.text(q, "q")
    if query is None:
        return {"recall_query": None, "fields": FIELDS, "recorded": recorded}
    window = recorded.time_window
    args: dict[str, Any] = {
        "query": query,
        "as_of": iso(to_us(recorded.as_of)),
        "time_window": None if window is None else tuple(iso(to_us(t)) for t in window),
        "token_budget": recorded.token_budget,
    }
    data = _explained(r, query, args, recorded.recall_id)
    replayed = tuple(res.memory.id for res in data["response"].results)
    data["recorded"] = recorded
    data["same_results"] = replayed == recorded.result_ids
    return data


def _explained(r: Reader, query: str, args: dict[str, Any], expect: str | None) -> dict[str, Any]:
    explained: RecallExplanation = r.call("explain_recall", **args)
    response = explained.response
    # the pack recall_as_pack returns for this very response (no second ranking run)
    pack = ContextPack.from_response(response)
    return {
        "recall_query": query,
        "fields": FIELDS,
        "response": response,
        "pack": pack,
        "prompt": pack.render_prompt(),
        "cuts": explained.cut,
        "replay_as_of": iso(to_us(response.as_of)),
        "expect": expect,
        "replay_ok": None if expect is None else expect == response.recall_id,
        "budget": args["token_budget"],
        "recorded": None,
    }


def value(result: RecallResult, name: str) -> Any:
    """A breakdown field as the API returns it (None where the step did not apply)."""
    return getattr(result.breakdown, name)
