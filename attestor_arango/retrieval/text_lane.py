"""View-stable BM25: the text lane re-scored with statistics of what the view sees.

A full-text index keeps its term statistics over every row it ever indexed,
including rows created after a replay's ``as_of`` (and rows of other tenants).
Raw index scores would therefore change when later rows arrive and break the
replay guarantee. The pipeline asks the index for a generous candidate set and
re-scores it here with Okapi BM25 whose document frequencies, corpus size and
average length come from those visible candidates only. When the index returns
every visible match (fewer than the fetch size) the result depends on the view
alone. Tokens: lower-cased words, Porter-stemmed like the embedded FTS5
tokenizer, stop words dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Protocol, TypeGuard, runtime_checkable

import numpy as np

from attestor_arango.models import Memory
from attestor_arango.retrieval.completion import Lane, Ranked, read_through
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.optional import speaks
from attestor_arango.retrieval.rounding import round_array
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import (
    MemoryStore,
    PoolScores,
    Store,
    TextHit,
    TextScore,
)
from attestor_arango.text import bm25
from attestor_arango.text.stemming import STEMMER, scoring_terms

_STEMMER = STEMMER  # tests check which stemmer build is in use

# Stemmed, lower-cased, stop-word-free tokens (cached: the same text, the same tuple).
terms = scoring_terms


@runtime_checkable
class KeepsTerms(Protocol):
    """A backend whose text index keeps each row's scoring terms (the embedded one).

    Not part of the Store contract: a backend without it is tokenised here instead.
    """

    def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]: ...


def _keeps_terms(store: object) -> TypeGuard[KeepsTerms]:
    return speaks(store, KeepsTerms, ("scoring_terms",))


def stored_terms(
    store: object,
    scope: Scope,
    ids: Sequence[str],
    cache: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, tuple[str, ...]]:
    """The scoring terms the backend already holds for ``ids`` (each is
    ``scoring_terms(content)``); empty for a backend that keeps none.

    ``cache``: one recall's terms read so far, by id (a row's content, and so its terms,
    never changes): only the ids it lacks are asked for, and what comes back is added.
    The text pool's rows and the fused candidates are mostly the same rows.
    """
    if not _keeps_terms(store):
        return {}
    if cache is None:
        return store.scoring_terms(scope, ids)
    return read_through(cache, ids, lambda wanted: store.scoring_terms(scope, wanted))


def pool_and_terms(
    store: Store,
    scope: Scope,
    query: str,
    k: int,
    view: TemporalView,
    cache: dict[str, tuple[str, ...]] | None = None,
) -> tuple[list[TextHit], dict[str, tuple[str, ...]]]:
    """The ``k``-row text pool and the scoring terms the backend holds for its rows;
    ``cache`` as for ``stored_terms`` (the terms read here are added to it)."""
    pool = store.text_pool(scope, query, k, view)
    return pool, stored_terms(store, scope, [t.id for t in pool], cache)


@runtime_checkable
class ScoresPool(Protocol):
    """A backend that scores the text pool over the pool alone itself (the embedded one: its
    index holds each row's term frequencies, so it needs neither the rows' texts nor most of
    their terms). Not part of the Store contract; it may decline (None: FTS5), and then the
    pool is re-scored here (``rescore_pool``).
    """

    def text_pool_scores(
        self, scope: Scope, query: str, k: int, view: TemporalView
    ) -> PoolScores | None: ...


def _scores_pool(store: object) -> TypeGuard[ScoresPool]:
    return speaks(store, ScoresPool, ("text_pool_scores",))


def _best_first(row: TextHit | TextScore) -> tuple[float, int, str]:
    """The lane's order: score desc, t_created desc, id asc."""
    return -row.score, -row.t_created, row.id


def rescore_pool(
    pool: Sequence[TextHit],
    query: str,
    k1: float = bm25.K1,
    b: float = bm25.B,
    held: Mapping[str, tuple[str, ...]] | None = None,
) -> list[TextHit]:
    """The pool re-scored and re-ordered (score desc, t_created desc, id asc); zero scores drop.

    ``held``: rows' scoring terms the backend already had (``stored_terms``); the other
    rows are tokenised here.
    """
    out = [
        TextHit(t.id, t.content, t.t_created, round(score, 9))
        for t, _, score in raw_scores(pool, query, k1, b, held)
        if score > 0
    ]
    out.sort(key=_best_first)
    return out


def scores_follow_view(store: object) -> bool:
    """Whether ``store.text_pool``'s scores are BM25 over exactly the rows the view sees
    (the embedded in-memory index; the store says so with ``text_scores_follow_view``),
    so the pool's own order is one a replay at the same ``as_of`` gives again whatever
    rows came later or belong to other tenants. An index that keeps statistics of every
    row it holds (FTS5, ArangoSearch) does not: its pool is re-scored (``rescore_pool``)
    before its order is shown. Not part of the Store contract."""
    return getattr(store, "text_scores_follow_view", False) is True


def _ordered_by_backend(
    store: object,
    scope: Scope,
    query: str,
    k: int,
    view: TemporalView,
    cache: dict[str, tuple[str, ...]] | None,
) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """The positive rows of a backend-scored ``k``-row pool (``ScoresPool``; None: it does
    not score), their scores rounded, ordered by score desc, then t_created desc (rows tied
    on both in the backend's order, which ``ranked_by_backend`` settles by id): ids,
    t_created, scores. The terms read go to ``cache``."""
    if not _scores_pool(store):
        return None
    got = store.text_pool_scores(scope, query, k, view)
    if got is None:
        return None
    if cache is not None:
        cache.update(got.terms)
    scores, created = got.scores, got.t_created
    positive = None  # every row (a pool row's BM25 is a sum of positive parts), or these
    if not (scores > 0).all():
        positive = (scores > 0).nonzero()[0]
        scores, created = scores[positive], created[positive]
    scores = round_array(scores, 9)
    order = np.lexsort((-created, -scores))  # score desc, then t_created desc
    scores, created = scores[order], created[order]
    rows = order if positive is None else positive[order]
    return list(map(got.ids.__getitem__, rows.tolist())), created, scores


def _tied(created: np.ndarray, scores: np.ndarray) -> bool:
    """Whether two neighbours of an ordered pool tie on score and time (the id decides)."""
    return bool(((scores[1:] == scores[:-1]) & (created[1:] == created[:-1])).any())


def ranked_by_backend(
    store: object,
    scope: Scope,
    query: str,
    k: int,
    view: TemporalView,
    cache: dict[str, tuple[str, ...]] | None = None,
) -> Ranked | None:
    """What ``rescore_pool`` makes of the ``k``-row pool and its terms, from a backend that
    scores the pool itself (``ScoresPool``; None: it does not), ordered with numpy, as
    columns (``Ranked``: ids and scores, best first) without an object per row: the lane
    and lane completion read no row's time. The rows' texts are not read; the terms it
    read on the way go to ``cache``."""
    got = _ordered_by_backend(store, scope, query, k, view, cache)
    if got is None:
        return None
    ids, created, scores = got
    if _tied(created, scores):  # rare: equal score and time, the id decides (``rescore_pool``)
        rows = text_scores(ids, created.tolist(), scores.tolist())
        rows.sort(key=_best_first)
        return Ranked.of(rows)
    return Ranked(ids, scores.tolist())


def text_scores(
    ids: Iterable[str], created: Iterable[int], scores: Iterable[float]
) -> list[TextScore]:
    """``TextScore(id, t_created, score)`` of each triple, made as ``TextScore._make`` makes
    them (``tuple.__new__``) without the named tuple's Python-level ``__new__`` per row:
    half the time of 200 rows a recall (the pool's scored rows)."""
    return list(map(tuple.__new__, repeat(TextScore), zip(ids, created, scores, strict=True)))


def raw_scores(
    pool: Sequence[TextHit],
    query: str,
    k1: float = bm25.K1,
    b: float = bm25.B,
    held: Mapping[str, tuple[str, ...]] | None = None,
) -> list[tuple[TextHit, tuple[str, ...], float]]:
    """Each pool row holding a query term (once, at its first place), with its terms and its
    BM25 score before rounding; statistics from the pool alone."""
    q = list(dict.fromkeys(terms(query)))
    if not q or not pool:
        return []
    # an index that kept each row's terms hands them over; otherwise tokenise here
    held = held or {}
    docs = {t.id: held[t.id] if t.id in held else terms(t.content) for t in pool}
    n = len(docs)
    avgdl = sum(map(len, docs.values())) / n or 1.0
    # each row's query terms with their counts, in order of first occurrence in the row
    # (the order the score below sums in). Counted per query term (tuple.count runs in
    # C), not per word of the row: a pool of 200 rows has ~3,000 words and ~5 query terms
    counts: dict[str, list[tuple[str, int]]] = {}
    df = dict.fromkeys(q, 0)
    for i, toks in docs.items():
        tf = [(w, f) for w in q if (f := toks.count(w))]
        if len(tf) > 2:  # two terms sum alike in either order; three may not
            tf.sort(key=lambda wf: toks.index(wf[0]))
        counts[i] = tf
        for w, _ in tf:
            df[w] += 1
    idf = {w: bm25.idf(n, c) for w, c in df.items() if c}
    out: list[tuple[TextHit, tuple[str, ...], float]] = []
    seen: set[str] = set()
    for t in pool:
        if t.id in seen:
            continue
        seen.add(t.id)
        tf = counts[t.id]
        if not tf:
            continue
        toks = docs[t.id]
        length_norm = bm25.length_norm(len(toks), avgdl, k1, b)
        score = 0.0
        for w, f in tf:
            score += bm25.term_score(idf[w], f, length_norm, k1)
        out.append((t, toks, score))
    return out


def text_lane(
    store: Store,
    scope: Scope,
    query: str,
    view: TemporalView,
    config: RetrievalConfig,
    known: Mapping[str, Memory],
    terms_cache: dict[str, tuple[str, ...]] | None = None,
) -> tuple[Lane, Sequence[TextHit | TextScore] | Ranked]:
    """BM25 over the view: a light pool re-scored; whole rows read only for the rows kept.

    ``known`` holds memories another lane already read, so they are not read twice;
    ``terms_cache`` is the recall's scoring terms read so far (``stored_terms``).
    Also returns the re-scored pool below the cut (light rows, for lane completion).
    """
    if not config.bm25_rescore:
        return decoded(store, scope, store.text_pool(scope, query, config.text_k, view), known), []
    fetch = max(config.text_k, config.text_fetch_k)
    return rescored_text(
        store, scope, query, view, fetch, config.text_k, known, terms_cache=terms_cache
    )


def rescored_text(
    store: Store,
    scope: Scope,
    query: str,
    view: TemporalView,
    fetch: int,
    keep: int,
    known: Mapping[str, Memory],
    *,
    terms_cache: dict[str, tuple[str, ...]] | None = None,
) -> tuple[Lane, Ranked]:
    """The ``keep`` best of a ``fetch``-row text pool by view-local BM25 (a lane), and the
    rest (as columns: ``Ranked``)."""
    ranked = ranked_by_backend(store, scope, query, fetch, view, terms_cache)
    if ranked is None:
        pool, pool_terms = pool_and_terms(store, scope, query, fetch, view, terms_cache)
        ranked = Ranked.of(rescore_pool(pool, query, held=pool_terms))
    ids, scores = ranked
    kept = decoded_ranked(store, scope, ids[:keep], scores[:keep], known)
    return kept, Ranked(ids[keep:], scores[keep:])


def decoded(
    store: MemoryStore,
    scope: Scope,
    pool: Sequence[TextHit | TextScore],
    known: Mapping[str, Memory],
) -> Lane:
    """The pool's rows as a lane of whole memories, reading only those ``known`` lacks."""
    return decoded_ranked(store, scope, [t.id for t in pool], [t.score for t in pool], known)


def decoded_ranked(
    store: MemoryStore,
    scope: Scope,
    ids: Sequence[str],
    scores: Sequence[float],
    known: Mapping[str, Memory],
) -> Lane:
    """``decoded`` of rows given as columns (``ids[j]`` scored ``scores[j]``)."""
    missing = [i for i in ids if i not in known]
    read = store.get_memories(scope, missing) if missing else {}
    memories: list[Memory] = []
    kept: list[float] = []  # their scores
    kept_ids: list[str] = []  # their ids
    for i, score in zip(ids, scores, strict=True):
        memory = known.get(i)
        if memory is None:
            memory = read.get(i)
            if memory is None:
                continue
        memories.append(memory)
        kept.append(score)
        kept_ids.append(i)
    return Lane(memories, kept, kept_ids)
