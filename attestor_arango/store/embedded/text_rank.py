"""The text index's matches for one query, and the order of its best rows.

``TenantText`` scores every visible row holding a query term (BM25 over the view) and
keeps, per term, the visible rows and frequencies it read from the postings
(``Matched``): the pool BM25 that follows (pool_bm25.py) reads its rows' frequencies
from them instead of looking each term's postings up (and checking their file blocks)
a second time.

``best_first`` orders rows as the lane does (score desc, t_created desc, id asc) with
one numpy sort of the two numbers; the ids, which cost a decode each, are read only for
rows that tie on both (rare: the same score at the same microsecond). Ordering Python
tuples of all three for every row above the cut took about a third of the index's
share of a recall. ``sum_per_row`` adds each row's parts of the query terms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from attestor_arango.text import bm25

Postings = tuple[np.ndarray, np.ndarray]  # rows ascending, each one's frequency


class TermSource(Protocol):
    """A column of rows' scoring terms (column.py's)."""

    def take(self, rows: np.ndarray | Sequence[int]) -> list[Any]: ...
    def sizes(self, rows: np.ndarray) -> np.ndarray: ...
    def __len__(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Matched:
    """One query's visible matches: per distinct term looked up, its visible rows and their
    frequencies (None: no visible row holds it); every row holding one, ascending, with
    its BM25 over the view."""

    postings: dict[str, Postings | None]
    rows: np.ndarray
    scores: np.ndarray

    def postings_of(self, term: str, fallback: Callable[[str], Postings | None]) -> Postings | None:
        """The term's visible postings as read for the match; ``fallback`` for a term the
        match did not look up (its rows then include rows the view does not see)."""
        if term in self.postings:
            return self.postings[term]
        return fallback(term)


class KeptTerms:
    """A column of rows' scoring terms whose decoded rows are kept, up to ``limit`` rows
    (then all are forgotten at once, which needs no bookkeeping per read).

    A persisted index decodes a row's terms from its blob on every read (about 1.5 us a
    row, with the file's block check); a recall reads ~100 rows' terms (coverage,
    freshness, the pool's rows of three query terms or more), mostly the same rows from
    one recall to the next in a small store. A row's terms never change. The tuples hold
    only strings, so the collector stops tracking them and, after a collection, the dict.
    """

    def __init__(self, column: TermSource, limit: int = 4096) -> None:
        self.column = column
        self.limit = limit
        self._kept: dict[int, tuple[str, ...]] = {}

    def take(self, rows: np.ndarray | Sequence[int]) -> list[tuple[str, ...]]:
        """``column.take(rows)``: the kept rows from memory, the others decoded (and kept)."""
        at = rows.tolist() if isinstance(rows, np.ndarray) else list(rows)
        kept = self._kept
        out = [kept.get(r) for r in at]
        missing = [j for j, terms in enumerate(out) if terms is None]
        if missing:
            wanted = [at[j] for j in missing]
            if len(kept) + len(wanted) > self.limit:
                kept.clear()
            for j, row, terms in zip(missing, wanted, self.column.take(wanted), strict=True):
                out[j] = kept[row] = terms
        return out  # type: ignore[return-value]  # every None was filled

    def sizes(self, rows: np.ndarray) -> np.ndarray:
        return self.column.sizes(rows)

    def __len__(self) -> int:
        return len(self.column)


class LengthNorms:
    """Every row's BM25 length part for one average length, kept while the rows and the
    average stay: gathered per query term it gives the floats computing it over the term's
    rows gives, for fewer passes over the hits. Not kept (None) when the query's postings are
    too few for a pass over every row to pay (rows added between recalls change the average
    every time)."""

    def __init__(self) -> None:
        self.key: tuple[int, float] = (-1, 0.0)
        self.values = np.zeros(0)

    def get(self, lengths: np.ndarray, avgdl: float, hits: int) -> np.ndarray | None:
        """``bm25.length_norm(lengths, avgdl)``, kept; None when not kept and ``hits`` (the
        query's postings) is under half the rows."""
        key = (lengths.size, avgdl)
        if self.key != key:
            if 2 * hits < lengths.size:
                return None
            self.values = bm25.length_norm(lengths, avgdl)
            self.key = key
        return self.values


def best_first(
    scores: np.ndarray, created: np.ndarray, k: int, ids_of: Callable[[np.ndarray], list[str]]
) -> np.ndarray:
    """The places of the (at most) ``k`` best of some rows, best first: score desc,
    t_created desc, id asc, as ``sorted`` of (-score, -t_created, id) orders them.

    ``ids_of(places)``: the ids of those rows; asked only for rows tied on score and time.
    """
    order = np.lexsort((-created, -scores))  # stable: ties keep their places, fixed below
    s, c = scores[order], created[order]
    tied = (s[1:] == s[:-1]) & (c[1:] == c[:-1])
    if tied.any():
        # each run of equal (score, time) ordered by id; runs are contiguous and in order,
        # so sorting every tied place by (run, id) and putting them back where tied places
        # were orders each run within its own places
        start = np.ones(order.size, dtype=bool)
        start[1:] = ~tied
        run = np.cumsum(start)
        member = np.zeros(order.size, dtype=bool)
        member[1:] |= tied
        member[:-1] |= tied
        at = member.nonzero()[0]
        places = order[at]
        keyed = sorted(zip(run[at].tolist(), ids_of(places), places.tolist(), strict=True))
        order[at] = [p for _, _, p in keyed]
    return order[:k]


# above this many hits per row of the index, per-row sums go through one dense array (two
# passes over n) instead of sorting the hits (at 1M rows, with the hits sorted as runs
# below: 0.38 hits per row 10-30 ms sorted, 25-45 ms dense; 0.5 about even; load ~2)
DENSE_HITS = 0.5


def sum_per_row(rows: np.ndarray, parts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct hit rows (ascending) and each one's sum of its parts.

    Both ways add a row's parts in the order given (``bincount`` walks its input in
    order), so a row's score is the same float whichever way is taken. The hits come
    as one ascending run per query term: a stable sort (timsort) merges the runs,
    where ``np.unique``'s quicksort sorted them from scratch (twice the time at 1M).
    """
    if rows.size >= DENSE_HITS * n:
        hit = np.bincount(rows, minlength=n)
        sums = np.bincount(rows, weights=parts, minlength=n)
        found = hit.nonzero()[0]
        return found, sums[found]
    order = rows.argsort(kind="stable")
    ordered = rows[order]
    first = np.empty(ordered.size, dtype=bool)  # where each distinct row starts
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    where = np.empty(ordered.size, dtype=np.intp)  # each hit's distinct row (unique's inverse)
    where[order] = np.cumsum(first) - 1
    return ordered[first], np.bincount(where, weights=parts)
