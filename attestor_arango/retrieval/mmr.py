"""Maximal marginal relevance: relevant, but not five copies of one fact.

Every candidate is ranked (there is no hidden cap on how many come out). At
each step the pick maximises ``lambda * relevance - (1 - lambda) * max cosine to
the already picked``; since that penalty can only grow, the picked values are
non-increasing, so the MMR value is a score whose order is the MMR order.
A candidate without a vector has similarity 0 to everything.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

import numpy as np

from .candidates import Candidate, tie_key


def unit_rows(cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    """The candidates' vectors as unit-length float64 rows (zeros where a vector is missing)."""
    n = len(cands)
    dim = next((len(v) for v in vectors.values()), 0)
    if n == 0 or not dim:
        return np.zeros((n, 1), dtype=np.float64)
    zero = np.zeros(dim, dtype=np.float32)
    mat = np.array([vectors.get(c.id, zero) for c in cands], dtype=np.float64)
    norms = np.sqrt((mat * mat).sum(axis=1))
    norms[norms == 0] = 1.0
    mat /= norms[:, np.newaxis]
    return mat


def similarity_matrix(cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    if not cands:
        return np.zeros((0, 0), dtype=np.float64)
    mat = unit_rows(cands, vectors)
    return np.round(mat @ mat.T, 9)  # rounded: stable across BLAS summation orders


def mmr_rerank(
    cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray], lam: float
) -> list[Candidate]:
    """All candidates in MMR order, each with ``mmr`` and ``final`` set."""
    items = list(cands)
    n = len(items)
    if n == 0:
        return []
    sims = similarity_matrix(items, vectors).tolist()
    # the tie rule as a precomputed position: t_created desc, then id asc
    tie_pos = [0] * n
    for pos, i in enumerate(sorted(range(n), key=lambda i: tie_key(0.0, items[i]))):
        tie_pos[i] = pos
    weight = 1.0 - lam
    base = [lam * c.relevance for c in items]
    # Lazy greedy: a candidate's value only falls as picks accrue, so a heap of values
    # computed earlier holds upper bounds. The top entry, brought up to date, is the
    # next pick if it still beats the next entry's bound; else it goes back in. Same
    # picks as recomputing every value at every step, at a fraction of the cost.
    max_sim = [0.0] * n
    seen = [0] * n  # how many picks max_sim[i] accounts for
    heap = [(-round12(base[i]), tie_pos[i], i) for i in range(n)]
    heapq.heapify(heap)
    picks: list[int] = []
    out: list[Candidate] = []
    while heap:
        neg, pos, i = heapq.heappop(heap)
        if seen[i] < len(picks):
            m = max_sim[i]
            for p in picks[seen[i] :]:
                if sims[p][i] > m:
                    m = sims[p][i]
            max_sim[i], seen[i] = m, len(picks)
            neg = -round12(base[i] - weight * m)
            if heap and (neg, pos) > heap[0][:2]:
                heapq.heappush(heap, (neg, pos, i))
                continue
        chosen = items[i]
        chosen.mmr = chosen.final = -neg
        out.append(chosen)
        picks.append(i)
    return out


def round12(x: float) -> float:
    """``numpy.round(x, 12)`` for one float, bit for bit (the sign of a zero included)."""
    r = round(x * 1e12)
    return r / 1e12 if r else math.copysign(0.0, x)
