"""The exact stage of a vector search: the rows the bounds chose, re-scored and ranked.

The scan (vectors.py) only narrows the index to rows whose score interval can reach the
top k. Those rows are scored again here from their float32 vectors in float64, and the
best k returned by score, ties broken by id. Kept apart from the index so that its module
stays one reading long; nothing here holds rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from attestor_arango.store.codec import row_norms

CHUNK = 2048  # rows re-scored per step (the float64 temporaries stay small)


def exact_scores(
    float_rows: Callable[[np.ndarray], np.ndarray], chosen: np.ndarray, query: np.ndarray
) -> np.ndarray:
    """float64 dot products of the ``chosen`` rows (``float_rows`` reads them as float64)
    with ``query``: an elementwise product summed per row, the same arithmetic for a row
    whatever else was chosen with it (a BLAS kernel may vary with shape); in chunks, so
    that a query tied with every row cannot allocate them all."""
    q64 = np.asarray(query, dtype=np.float64)
    if chosen.size <= CHUNK:
        return (float_rows(chosen) * q64).sum(axis=1)
    exact = np.empty(chosen.size, dtype=np.float64)
    for lo in range(0, chosen.size, CHUNK):
        part = chosen[lo : lo + CHUNK]
        exact[lo : lo + part.size] = (float_rows(part) * q64).sum(axis=1)
    return exact


def ranked(
    take_ids: Callable[[np.ndarray], Sequence[str]],
    chosen: np.ndarray,
    exact: np.ndarray,
    take: int,
) -> list[tuple[str, float]]:
    """The ``take`` best of the re-scored rows: score descending, then id ascending.

    Without a tie among the finite scores the order is the scores' alone: one argsort,
    and only the ``take`` ids returned are looked up (``take_ids``: row -> id). A tie,
    or a score that is not finite, sorts (id, score) pairs of the rows at or above the
    last kept score as Python orders them.
    """
    order = (-exact).argsort(kind="stable")
    scores = exact[order]
    if np.isfinite(scores).all() and not (scores[1:] == scores[:-1]).any():
        top = order[:take]
        return list(zip(take_ids(chosen[top]), scores[:take].tolist(), strict=True))
    if chosen.size > take:  # keep the take best, and every row tied with the last
        kth = np.partition(exact, chosen.size - take)[chosen.size - take]
        keep = exact >= kth
        chosen, exact = chosen[keep], exact[keep]
    pairs = list(zip(take_ids(chosen), exact.tolist(), strict=True))
    pairs.sort(key=lambda p: (-p[1], p[0]))
    return pairs[:take]


def top(
    take_ids: Callable[[np.ndarray], Sequence[str]],
    float_rows: Callable[[np.ndarray], np.ndarray],
    chosen: np.ndarray,
    query: np.ndarray,
    take: int,
    ordered: bool = True,
) -> tuple[list[str], list[float] | None]:
    """``ranked``'s answer over the ``chosen`` rows (``exact_scores``) as two columns, ids and
    scores; or, when not ``ordered`` and exactly ``take`` rows were chosen (every one of
    them is in the answer), their ids in row order and no scores (None): none is scored
    (at 1k rows the bounds choose just the k best on most queries)."""
    if not ordered and chosen.size == take:
        return list(take_ids(chosen)), None
    if take == 0:
        return [], []
    pairs = ranked(take_ids, chosen, exact_scores(float_rows, chosen, query), take)
    return [i for i, _ in pairs], [s for _, s in pairs]


class RowNorms:
    """``codec.row_norms`` of an index's rows, each computed the first time the row is gathered and
    kept (a row's vector never changes while its index lives; NaN: not yet computed). A
    recall scores the lanes' union (~85 rows at 1k) by exact cosine, and most of those rows
    were scored by the recall before."""

    def __init__(self) -> None:
        self.values = np.zeros(0, dtype=np.float64)

    def of(self, rows: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """The norms of ``rows`` (``vectors[j]``: row ``rows[j]``'s float32 vector)."""
        if rows.size == 0:
            return np.zeros(0, dtype=np.float64)
        top = int(rows.max())
        if top >= self.values.size:
            grown = np.full(max(top + 1, self.values.size * 3 // 2, 1024), np.nan)
            grown[: self.values.size] = self.values
            self.values = grown
        got = self.values[rows]
        todo = np.isnan(got).nonzero()[0]
        if todo.size:
            got[todo] = row_norms(vectors[todo])
            self.values[rows[todo]] = got[todo]
        return got


# an index whose rows widened to float64 take at most this many bytes keeps them widened
# (``WideRows``): 2.7k rows of 384 dimensions
WIDE_BYTES = 8 << 20


class WideRows:
    """Every row of a small index widened to float64, once: exact scoring gathers them
    instead of widening each row it reads (~3 instructions a value; at 1k rows a recall
    widens the vector lane's ~50 rows, then the lanes' ~85). Rows added since are widened
    when next read; an index past ``limit`` bytes of them keeps none (its rows are widened
    as they are read, as before). A row's vector never changes while its index lives."""

    def __init__(self, limit: int = WIDE_BYTES) -> None:
        self.limit = limit
        self.values = np.zeros((0, 0), dtype=np.float64)
        self.n = 0  # rows 0..n-1 are widened

    def fits(self, n: int, width: int) -> bool:
        """Whether the rows of an index of ``n`` rows of ``width`` values are kept widened."""
        return n * width * 8 <= self.limit

    def of(
        self, rows: np.ndarray, n: int, width: int, read: Callable[[np.ndarray, type], np.ndarray]
    ) -> np.ndarray | None:
        """The float64 vectors of ``rows`` of an index of ``n`` rows of ``width`` values
        (``read(rows, np.float32)``: some rows' vectors), from the rows kept widened; None
        when the index is too large to keep them."""
        if self.n < n:
            if not self.fits(n, width):
                self.values, self.n = np.zeros((0, 0), dtype=np.float64), 0
                return None
            if len(self.values) < n:  # room for half as many again (as the index grows)
                grown = np.empty((min(n * 3 // 2, self.limit // (width * 8)), width))
                if self.n:
                    grown[: self.n] = self.values[: self.n]
                self.values = grown
            self.values[self.n : n] = read(np.arange(self.n, n), np.float32)
            self.n = n
        return self.values.take(rows, axis=0)  # whole rows at once (``float_rows``)


class UnitRows:
    """Every row of a small index as a float64 unit vector, once: the row widened (``WideRows``)
    divided by its norm (``RowNorms``; a zero norm as 1.0), as freshness divides the rows it
    compares (``freshness.unit_rows``). It divided the lanes' ~85 rows on each run (~180k
    instructions: numpy copies the broadcast norms into buffers); an elementwise division
    gives each row the same floats whenever it runs, so each row is divided once. Kept only
    while the index keeps its rows widened (as many bytes again at most). A row's vector
    never changes while its index lives; rows added since are divided when next read."""

    def __init__(self) -> None:
        self.values = np.zeros((0, 0), dtype=np.float64)
        self.n = 0  # rows 0..n-1 are divided

    def of(
        self, rows: np.ndarray, n: int, width: int, divide: Callable[[np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """The unit vectors of ``rows`` of an index of ``n`` rows of ``width`` values that
        keeps them widened (``WideRows.fits``; ``divide(rows)``: some rows' unit vectors)."""
        if self.n < n:
            if len(self.values) < n:  # room for half as many again (as the index grows)
                grown = np.empty((max(n, min(n * 3 // 2, WIDE_BYTES // (width * 8))), width))
                if self.n:
                    grown[: self.n] = self.values[: self.n]
                self.values = grown
            self.values[self.n : n] = divide(np.arange(self.n, n))
            self.n = n
        return self.values.take(rows, axis=0)
