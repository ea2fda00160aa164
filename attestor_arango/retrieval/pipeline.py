"""Recall: the deterministic pipeline of DESIGN section 5, above the Store protocol.

Steps, in order (each switchable and tuned in ``RetrievalConfig``):
1. lanes: vector top-K and BM25 top-K over the same temporal view (plus the
   optional LLM query lanes, only when switched on and given an expander);
   lane completion ranks each vector/text candidate in the other lane too;
2. fusion: reciprocal rank fusion as a normalised score;
3. graph affinity from hop distance to the entities the query names, and the
   question's speaker: turns said by the person the query asks about (speakers.py);
4. typed relations touching those entities, as synthetic candidates;
5. query-term coverage of each candidate's session, neighbouring conversation
   turns (neighbours.py; a memory that ends by asking, turn or not, yields to the
   answers), time cues (a "when" question, a date the query names), confidence
   decay and recency boost against the view's as_of (last: it sums every
   candidate's relevance once), then freshness over the candidates' stored vectors;
6. order by the summed relevance (the tie rule of candidates.py), every
   candidate kept;
7. greedy budget fit in that order.

An MMR diversity rerank ran between 5 and 7 until session 8 of issue 17: switched
off it changed no knowledge-update case through ``add``, won one through
``ingest_round`` and moved LoCoMo by noise, so it went (docs/configuration.md has
the table).

Pure Python over the candidates a Store returns, so both backends rank alike.
A failing lane degrades the answer, is named in ``errors`` and in the trace; it
never fails silently. Recall only reads: it writes nothing to the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeGuard

import numpy as np

from attestor_arango.clock import from_us
from attestor_arango.embeddings import Embedder
from attestor_arango.errors import ValidationError
from attestor_arango.models import CutResult, RecallResponse, trusted_maker
from attestor_arango.retrieval.budget import left_out, pack
from attestor_arango.retrieval.candidates import Candidate, order
from attestor_arango.retrieval.candidates import results as candidate_results
from attestor_arango.retrieval.completion import Lanes, VectorCache, cached_vectors
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.coverage import apply_coverage, credits_any
from attestor_arango.retrieval.freshness import (
    StoredRows,
    UnitVectors,
    apply_freshness,
    asks_past,
)
from attestor_arango.retrieval.fusion import fuse
from attestor_arango.retrieval.graph import apply_affinity, relation_candidates
from attestor_arango.retrieval.lane_run import describe, fatal, run_lanes
from attestor_arango.retrieval.lanes import QueryExpander
from attestor_arango.retrieval.neighbours import (
    add_neighbours,
    apply_asking,
    apply_neighbours,
    has_turns,
)
from attestor_arango.retrieval.optional import speaks
from attestor_arango.retrieval.space import embedder_warnings
from attestor_arango.retrieval.speakers import apply_speaker
from attestor_arango.retrieval.temporal import apply_decay_boost
from attestor_arango.retrieval.text_lane import stored_terms
from attestor_arango.retrieval.timecue import apply_time_cue
from attestor_arango.retrieval.trace import RecallTrace, Tracer, recall_id
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import GraphStore, MemoryStore, Store
from attestor_arango.text.stemming import scoring_terms
from attestor_arango.validation import entity_key


def _weights(lanes: Lanes, config: RetrievalConfig) -> dict[str, float]:
    return {
        name: config.bm25_weight
        if name == "bm25" or name.startswith("mq_")
        else config.vector_weight
        for name, _ in lanes
    }


def _graph(
    store: GraphStore,
    scope: Scope,
    query: str,
    view: TemporalView,
    config: RetrievalConfig,
    cands: list[Candidate],
    errors: dict[str, str],
    tr: RecallTrace,
) -> tuple[list[Candidate], list[str]]:
    n_in = len(cands)
    try:
        known = store.known_entities(scope)
        # a scope that knows no entity names none: the query is not tokenised for names
        keys = known.names.find(query) if known.entities else []
        if not keys:
            tr.step("graph", n_in, n_in, query_entities=0)
            return cands, []
        # Entities carry no transaction time, so a name learnt after as_of could be
        # recognised in a replay. Only keys the view can see count: a candidate's
        # entity or an endpoint of a relation visible in the view.
        seen = {entity_key(c.memory.entity) for c in cands if c.memory.entity}
        existing = {c.id for c in cands}
        limit = config.relation_limit if config.relations_enabled else 0
        # A relation extracted from a fact later superseded or forgotten must not outlive
        # it: only relations whose backing memory the view sees count, read by one store
        # query (a hub entity touches hundreds; issue 21): the newest ``limit`` no
        # candidate backs (the synthetic candidates' pool), and the query's keys any of
        # them, candidate-backed ones included, ends on
        backed = store.relations_backed(scope, keys, view, sorted(existing), limit)
        rels = backed.relations
        seen |= backed.ends
        keys = [k for k in keys if k in seen]
        if not keys:
            tr.step("graph", n_in, n_in, query_entities=0)
            return cands, []
        hops = store.hops(scope, keys, config.graph_max_depth, view)
        apply_affinity(cands, hops, config)
        if config.speaker_weight > 0:
            apply_speaker(cands, query, keys, config.speaker_weight)
        if config.relations_enabled:
            synth = [
                s
                for s in relation_candidates(scope, rels, known.entities, keys, existing, config)
                if s.id not in existing
            ]
            cands = cands + synth
        tr.step("graph", n_in, len(cands), query_entities=len(keys))
        return cands, keys
    except Exception as exc:
        fatal(exc)
        errors["graph_error"] = describe(exc)
        tr.step("graph", n_in, len(cands), error=errors["graph_error"])
        return cands, []


def _vectors(
    store: MemoryStore,
    scope: Scope,
    cands: Sequence[Candidate],
    errors: dict[str, str],
    vcache: dict[str, np.ndarray] | None = None,
) -> Mapping[str, np.ndarray]:
    """The stored vectors of the real candidates (freshness compares them; a synthetic
    relation candidate is never an older or newer statement, so it needs none)."""
    real = [c.id for c in cands if not c.synthetic]
    # the backend's unit vectors: asked for only when it handed its rows over widened (an
    # index too large to keep them widened keeps no unit vectors either)
    units = None
    if getattr(vcache, "widened_by_store", False) and _has_units(store):
        units = partial(store.vector_units, scope)
    kept = _kept_matrix(vcache, real, units)
    if kept is not None:
        return kept
    real.sort()  # the store is read in id order (only when the kept matrix cannot answer)
    vectors: dict[str, np.ndarray] = {}
    try:
        if real:
            vectors.update(cached_vectors(store, scope, real, vcache))
    except Exception as exc:
        fatal(exc)
        errors["vectors_error"] = describe(exc)
    return vectors


def _has_units(store: object) -> TypeGuard[UnitVectors]:
    return speaks(store, UnitVectors, ("vector_units",))


def _kept_matrix(
    vcache: dict[str, np.ndarray] | None,
    ids: Sequence[str],
    units: Callable[[list[str]], np.ndarray | None] | None = None,
) -> StoredRows | None:
    """The vectors of ``ids`` as the one matrix the recall's ``VectorCache`` kept them in,
    unsplit, when it holds all of them there and nothing else (the lanes' union, read in
    one step): the rows ``cached_vectors`` would hand over, the same arrays' values, without
    splitting ~85 rows apart for freshness to join them again (~300k instructions on a
    recall that runs freshness). ``units``: the backend's kept unit vectors (``UnitVectors``),
    which freshness reads before dividing the rows. None: ``cached_vectors`` answers."""
    pending = getattr(vcache, "pending", None)  # a VectorCache's matrices, kept unsplit
    if not pending or len(pending) != 1 or vcache:
        return None
    kept_ids, matrix = pending[0]
    if len(kept_ids) != len(matrix):
        return None
    wide = getattr(vcache, "wide", None)  # lane completion's float64 rows and norms of it
    rows = StoredRows(kept_ids, matrix, wide[1:] if wide and wide[0] is matrix else None, units)
    return rows if all(map(rows.place.__contains__, ids)) else None


def _inputs(scope: Scope, view: TemporalView, budget: int, query: str | None) -> dict[str, Any]:
    """What a trace's start event records so ``recall_trace`` can scope and replay it."""
    out: dict[str, Any] = {  # every event names its tenant already (RecallTrace)
        "namespace": scope.namespace,
        "as_of": view.as_of,
        "window": list(view.window) if view.window else None,
        "budget": budget,
    }
    if query is not None:
        out["query"] = query
    return out


def _attach_terms(
    store: Store, scope: Scope, cands: Sequence[Candidate], tcache: dict[str, tuple[str, ...]]
) -> None:
    """Gives ``cands`` the scoring terms the backend kept (``stored_terms``); a candidate
    it keeps none for tokenises its content when a step first asks."""
    held = stored_terms(store, scope, [c.id for c in cands], tcache)
    for cand in cands:
        cand.terms = held.get(cand.id)


def recall(
    store: Store,
    embedder: Embedder,
    scope: Scope,
    query: str,
    view: TemporalView,
    budget: int,
    config: RetrievalConfig,
    *,
    tracer: Tracer | None = None,
    expanders: Mapping[str, QueryExpander] | None = None,
    cut: list[CutResult] | None = None,
    id_key: bytes = b"",
) -> RecallResponse:
    """Ranks the memories of ``scope`` visible in ``view`` for ``query``.

    Same store state, view, query, budget, embedder and config -> the same
    response, byte for byte. ``cut``, when given, receives what the budget fit left
    out of this very ranking (the recall explainer), without a second ranking run.
    ``id_key`` keys the recall id (the store's, ``core/recall_key.py``).
    """
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("recall needs a non-empty query string")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValidationError("token budget must be a non-negative integer")
    rid = recall_id(
        scope.tenant,
        scope.namespace,
        query,
        view.as_of,
        view.window,
        budget,
        config.to_json(),
        id_key,
    )
    tr = RecallTrace(tracer, rid, scope.tenant)
    if tr.on:  # the inputs a replay needs (never the query text unless include_content is set)
        tr.step(
            "start", 0, 0, **_inputs(scope, view, budget, query if tr.include_content else None)
        )
    errors = embedder_warnings(store, scope, embedder)
    if "embedding_space" in errors:  # vectors of two spaces are never compared
        config = replace(config, vector_enabled=False, hyde_enabled=False)
        tr.step("embedding_space", 0, 0, error=errors["embedding_space"])

    vcache: dict[str, np.ndarray] = VectorCache()  # stored vectors read by this recall, by id
    tcache: dict[str, tuple[str, ...]] = {}  # and the scoring terms
    lanes = run_lanes(
        store, embedder, scope, query, view, config, expanders, errors, tr, vcache, tcache
    )
    weights = _weights(lanes, config)
    cands = fuse(lanes, config.rrf_k, weights=weights)
    fused = list(cands)
    if tr.on:  # what only an event reads
        tr.step("fuse", sum(len(h) for _, h in lanes), len(cands), lane_weights=weights)
    del lanes  # the lanes: freed before the response is built (garbage collection, below)

    keys: list[str] = []
    if config.graph_enabled and cands is not None:
        cands, keys = _graph(store, scope, query, view, config, cands, errors, tr)

    # conversation turns (their links) are what the neighbour steps read: without one among
    # the candidates, both have nothing to do
    turns = has_turns(cands)
    if config.neighbour_weight > 0 and turns:
        try:
            cands = add_neighbours(store, scope, view, cands, config.neighbour_fetch)
        except Exception as exc:  # the candidates as they came still rank
            errors["neighbour_error"] = describe(exc)
            tr.step("neighbours", len(cands), len(cands), error=errors["neighbour_error"])

    fresh = config.freshness_enabled and not asks_past(query) and bool(cands)
    if config.coverage_enabled and credits_any(cands):  # only conversation records gain
        # coverage reads every candidate's terms: the fused candidates take the scoring
        # terms the backend's text index kept, so it does not tokenise them again
        # (freshness reads a few: the memoised tokeniser's, if need be)
        _attach_terms(store, scope, fused, tcache)
        # before freshness: an update yields on full relevance
        apply_coverage(cands, query, config.session_coverage_weight)
    if config.neighbour_weight > 0 and turns:  # before freshness, like coverage
        apply_neighbours(cands, config.neighbour_weight)
    if config.asking_weight != 0:  # turns and plain memories alike (neighbours.py)
        apply_asking(cands, query, config.asking_weight)
    if config.time_cue_enabled:
        apply_time_cue(cands, query, config.time_cue_weight, config.date_match_weight)
    # last of the signals: decay scales the lane relevance, and its relevance update sums
    # every candidate's signals once (asking and time cue set their own fields only)
    apply_decay_boost(cands, view.as_of, config)
    if fresh:  # reads the words of the few candidates that may be an update
        # the stored vectors only freshness compares: not read for a query that skips it
        vectors = _vectors(store, scope, cands, errors, vcache)
        if "vectors_error" in errors:
            tr.step("vectors", len(cands), len(cands), error=errors["vectors_error"])
        apply_freshness(cands, vectors, config, scoring_terms(query))
    tr.step("time", len(cands), len(cands))

    ranked = order(cands)  # the final score is the relevance (``candidates.results``)
    tr.step("rerank", len(cands), len(ranked))

    kept, counts, used = pack(ranked, budget)
    if tr.on:
        tr.step(
            "budget",
            len(ranked),
            len(kept),
            tokens_used=used,
            token_budget=budget,
            ids=[c.id for c in kept],
        )

    if cut is not None:
        cut.extend(
            CutResult(rank=place, result=c.result(tokens, view.as_of))
            for place, c, tokens in left_out(ranked, kept)
        )
    # garbage collection: a response holds ~600-700 container objects, about one young
    # collection's worth (threshold 700), and each collection traverses every object alive.
    # With no other reference left, each candidate is freed once its result is built (the
    # builder drops it from ``kept``), so fewer objects are alive at a time: ~200 young
    # collections per 1000 recalls, not ~880 (so the cut above reads ``kept`` first)
    del cands, fused, ranked
    results = tuple(candidate_results(kept, counts, view.as_of))
    # built without re-validation: every value is of its field's type already (the results
    # are trusted models, the errors text by lane), so validation would only check them
    return _response(
        {
            "query": str(query),  # a str subclass as validation gives it: plain text
            "as_of": from_us(view.as_of),
            "results": results,
            "tokens_used": int(used),
            "token_budget": int(budget),
            "errors": dict(sorted(errors.items())),
            "recall_id": rid,
            "query_entities": tuple(keys),
        }
    )


_response = trusted_maker(RecallResponse)
