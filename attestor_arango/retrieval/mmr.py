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
            mat[i] = v
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    mat /= norms
    return np.round(mat @ mat.T, 9)  # rounded: stable across BLAS summation orders


def mmr_rerank(
    cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray], lam: float
) -> list[Candidate]:
    """All candidates in MMR order, each with ``mmr`` and ``final`` set."""
    items = list(cands)
    n = len(items)
    if n == 0:
        return []
    sims = similarity_matrix(items, vectors)
    rel = np.array([c.relevance for c in items], dtype=np.float64)
    # the tie rule as a precomputed position: t_created desc, then id asc
    tie_pos = np.empty(n, dtype=np.int64)
    for pos, i in enumerate(sorted(range(n), key=lambda i: tie_key(0.0, items[i]))):
        tie_pos[i] = pos
    max_sim = np.zeros(n, dtype=np.float64)
    alive = np.ones(n, dtype=bool)
    out: list[Candidate] = []
    for step in range(n):
        penalty = np.maximum(max_sim, 0.0) if step else np.zeros(n)
        values = np.round(lam * rel - (1.0 - lam) * penalty, 12)
        values[~alive] = -np.inf
        best = values.max()
        tied = np.flatnonzero(values == best)
        pick = int(tied[np.argmin(tie_pos[tied])]) if len(tied) > 1 else int(tied[0])
        alive[pick] = False
        chosen = items[pick]
        chosen.mmr = float(best)
        chosen.final = float(best)
        out.append(chosen)
        max_sim = np.maximum(max_sim, sims[pick])
    return out
