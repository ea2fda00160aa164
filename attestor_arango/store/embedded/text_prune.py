"""Exact early termination of the text index's match (MaxScore bounds).

The index scores every visible row holding a query term, then keeps the best ``k``
(text_index.py). At a million rows a common word's postings dominate that work: the
``s`` of a possessive ("Caroline's") is held by 376k rows, while the pool keeps 200
(issue 21: those queries were the 1M recall tail). A row holding only such terms
scores at most the sum of their bounds, and a term's part of a score is below
``idf * (k1 + 1)`` whatever the row (``tf / (tf + norm) < 1``). The rarest terms' parts
alone give a lower bound ``floor`` on the ``k``-th best score (a full score only adds
positive parts); then every row whose terms' bounds sum below ``floor`` can neither
reach the cut nor tie with it, and is never scored.

``candidates`` returns the rows that can (every row holding one of the other terms)
with their scores, made as the full match makes them: each term's parts computed
elementwise from the same numbers, the parts of a row summed in query order from 0.0
(``bincount`` over the kept rows' places, as ``text_rank.sum_per_row`` sums over every
row's: one add per part, in input order). So the rows kept, their floats and their order
are those of the full match; None when the bounds prune too little to pay (the caller
then scores every row). ``tests/test_text_prune.py`` compares both paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attestor_arango.store.embedded import text_rank
from attestor_arango.text import bm25

# prune only when the skipped terms hold at least this share of the query's postings:
# below it, looking the candidates up in the skipped postings costs about what it saves
MIN_SKIPPED = 0.5
# try pruning only from this many postings in the query's terms (seen by the view) up: below
# it the bounds' own pass (scoring the rarest terms, a partition, then the kept rows again)
# costs more numpy calls than scoring every hit once, whether or not it prunes. At 1k rows
# no query of the benchmark pruned (totals up to ~1.1k) while ~45 % paid the seed pass
# (8.81M -> 8.75M instructions a recall); at 10k the smallest total pruned was ~3.6k
MIN_HITS = 2048
# a float sum of a few parts, each rounded: the bound is widened by far more than that
_SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class TermHits:
    """One query term's visible postings (rows ascending, frequencies) and its idf."""

    rows: np.ndarray
    tf: np.ndarray
    weight: float

    @property
    def bound(self) -> float:
        """Above any row's part of this term: weight * tf * (k1 + 1) / (tf + norm), norm > 0."""
        return self.weight * (bm25.K1 + 1.0)


NormOf = Callable[[np.ndarray], np.ndarray]  # rows -> their BM25 length parts


def parts(term: TermHits, rows: np.ndarray, tf: np.ndarray, norm_of: NormOf) -> np.ndarray:
    """The term's parts of some of its rows' scores (the full match's floats)."""
    return bm25.term_score(term.weight, tf.astype(np.float64), norm_of(rows))


def score_all(terms: Sequence[TermHits], norm_of: NormOf, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every row holding a term, ascending, with its score (the full match). Every term's
    parts in one pass over their hits joined: each part is ``parts``' float (the same
    elementwise arithmetic, a term's weight repeated for its hits), for ~6 numpy calls in
    all instead of ~6 a term (a call on a small array costs several thousand instructions)."""
    hits = np.concatenate([t.rows for t in terms])
    tf = np.concatenate([t.tf for t in terms], dtype=np.float64)
    weights = np.repeat([t.weight for t in terms], [t.rows.size for t in terms])
    return text_rank.sum_per_row(hits, bm25.term_score(weights, tf, norm_of(hits)), n)


def score_rows(
    terms: Sequence[TermHits], whole: set[int], marked: np.ndarray, norm_of: NormOf, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``marked`` (a bool per row of the index), ascending, with their scores summed
    as ``score_all`` sums them (each row's parts in query order, from 0.0: ``bincount`` adds
    in input order); ``whole``: the places of terms all of whose rows are marked."""
    rows = np.flatnonzero(marked)
    hits: list[np.ndarray] = []
    found: list[np.ndarray] = []
    for j, term in enumerate(terms):  # query order: the order a row's parts are summed in
        if j in whole:
            held, tf = term.rows, term.tf
        else:  # one byte read per posting: cheaper than the part it spares
            at = np.flatnonzero(marked[term.rows])  # taking places beats a mask on strided rows
            held, tf = term.rows[at], term.tf[at]
        hits.append(held)
        found.append(parts(term, held, tf, norm_of))
    # each hit's place among ``rows``: only the marked rows' slots are written, and read
    place = np.empty(n, dtype=np.int32)
    place[rows] = np.arange(rows.size, dtype=np.int32)
    at = place[np.concatenate(hits)]
    return rows, np.bincount(at, weights=np.concatenate(found), minlength=rows.size)


def _marked(terms: Sequence[TermHits], places: Sequence[int], n: int) -> np.ndarray:
    rows = np.zeros(n, dtype=bool)
    for j in places:
        rows[terms[j].rows] = True
    return rows


def _kth(scores: np.ndarray, k: int) -> float:
    return float(np.partition(scores, scores.size - k)[scores.size - k])


def candidates(
    terms: Sequence[TermHits], k: int, norm_of: NormOf, n: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """Every row that can be among the ``k`` best or tie with the ``k``-th, ascending, with
    its score; None when pruning does not pay (or cannot start: fewer than ``k`` rows)."""
    if len(terms) < 2 or k <= 0:
        return None
    sizes = [t.rows.size for t in terms]
    total = sum(sizes)
    if total < MIN_HITS:
        return None
    rarest = sorted(range(len(terms)), key=lambda j: (sizes[j], j))
    # a lower bound on the k-th best score from the rarest terms' rows
    seed: list[int] = []
    seen = 0
    for j in rarest[:-1]:
        seed.append(j)
        seen += sizes[j]
        if seen >= k:
            break
    if seen < k or total - seen < MIN_SKIPPED * total:
        return None
    # the seed terms' parts alone: a row's full score (more positive parts added in query
    # order) is never below them, rounding included, so neither is the k-th best
    seeds = [terms[j] for j in sorted(seed)]
    held, scores = score_all(seeds, norm_of, n)
    if held.size < k:
        return None
    floor = _kth(scores, k)
    # the commonest terms, while their bounds sum below the floor: a row holding no other
    # term scores below every row of the k best
    skipped: set[int] = set()
    reach = 0.0
    for j in reversed(rarest):
        if (reach + terms[j].bound) * (1 + _SLACK) >= floor:
            break
        reach += terms[j].bound
        skipped.add(j)
    if sum(sizes[j] for j in skipped) < MIN_SKIPPED * total:
        return None
    kept = [j for j in range(len(terms)) if j not in skipped]
    return score_rows(terms, set(kept), _marked(terms, kept, n), norm_of, n)
