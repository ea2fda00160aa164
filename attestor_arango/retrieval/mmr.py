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

from attestor_arango.retrieval.candidates import Candidate, tie_key


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
    # Rows in tie order (t_created desc, then id asc), so that argmax, which returns the
    # first of equal values, applies the tie rule. Each step updates every value at once:
    # a handful of array operations instead of a Python loop over candidates.
    tie_order = sorted(range(n), key=lambda i: tie_key(0.0, items[i]))
    ranked = [items[i] for i in tie_order]
    sims = similarity_matrix(ranked, vectors)
    base = np.array([lam * c.relevance for c in ranked], dtype=np.float64)
    weight = 1.0 - lam
    max_sim = np.zeros(n, dtype=np.float64)  # similarity to the picks so far, never below 0
    values = np.empty(n, dtype=np.float64)
    out: list[Candidate] = []
    # the arrays' own methods: numpy's np.round / np.argmax wrappers cost more in Python
    # than the operation on ~100 values (a third of this loop); the same arithmetic
    for _ in range(n):
        np.multiply(max_sim, weight, out=values)
        np.subtract(base, values, out=values)
        values.round(12, out=values)
        j = int(values.argmax())
        chosen = ranked[j]
        chosen.mmr = chosen.final = float(values[j])
        out.append(chosen)
        base[j] = -np.inf  # picked: never the maximum again
        np.maximum(max_sim, sims[j], out=max_sim)
    return out
