"""Maximal marginal relevance: relevant, but not five copies of one fact.

Every candidate is ranked (there is no hidden cap on how many come out). At
each step the pick maximises ``lambda * relevance - (1 - lambda) * max cosine to
the already picked``; since that penalty can only grow, the picked values are
non-increasing, so the MMR value is a score whose order is the MMR order.
A candidate without a vector has similarity 0 to everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .candidates import Candidate, tie_key


def similarity_matrix(cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    n = len(cands)
    if n == 0:
        return np.zeros((0, 0), dtype=np.float64)
    dim = next((len(v) for v in vectors.values()), 0)
    mat = np.zeros((n, max(dim, 1)), dtype=np.float64)
    for i, c in enumerate(cands):
        v = vectors.get(c.id)
        if v is not None and dim:
            vec = np.asarray(v, dtype=np.float64)
            norm = float(np.linalg.norm(vec))
            if norm > 0:
                mat[i] = vec / norm
    sims = mat @ mat.T
    return np.round(sims, 9)  # stable across BLAS summation orders


def mmr_rerank(
    cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray], lam: float
) -> list[Candidate]:
    """All candidates in MMR order, each with ``mmr`` and ``final`` set."""
    items = list(cands)
    n = len(items)
    if n == 0:
        return []
    sims = similarity_matrix(items, vectors)
    max_sim = np.full(n, -np.inf)
    remaining = list(range(n))
    out: list[Candidate] = []
    while remaining:
        best_i = -1
        best_key: tuple[float, int, str] | None = None
        best_val = 0.0
        for i in remaining:
            penalty = 0.0 if not out else max(float(max_sim[i]), 0.0)
            val = round(lam * items[i].relevance - (1.0 - lam) * penalty, 12)
            key = tie_key(val, items[i])
            if best_key is None or key < best_key:
                best_i, best_key, best_val = i, key, val
        remaining.remove(best_i)
        chosen = items[best_i]
        chosen.mmr = best_val
        chosen.final = best_val
        out.append(chosen)
        max_sim = np.maximum(max_sim, sims[best_i])
    return out
