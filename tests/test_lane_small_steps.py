"""The lanes' small-array steps give what the plainer numpy calls they replaced gave.

Each reference is the call the step made before (``np.linalg.norm``, a positive filter
on every pool, ``take_ids`` of no rows); values are compared bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from attestor_arango.retrieval import text_lane
from attestor_arango.retrieval.rounding import round_array
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.codec import vector_norm
from attestor_arango.store.embedded.rowtable import RowTable
from attestor_arango.store.protocol import PoolScores

SCOPE = Scope("acme", "n")


@pytest.mark.parametrize("seed", range(6))
def test_vector_norm_is_linalg_norm_to_the_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # both overflow alike (the same dot): the warning is not what is compared
    with np.errstate(over="ignore", invalid="ignore"):
        _norms_agree(rng)


def _norms_agree(rng: np.random.Generator) -> None:
    for dim in (1, 2, 7, 64, 384, 1000):
        v = (rng.standard_normal(dim) * 10.0 ** rng.integers(-30, 30)).astype(np.float64)
        for x in (
            v,
            v[::2],
            v[::-1],
            np.asfortranarray(v),
            np.zeros(dim),
            v.astype(np.float32).astype(np.float64),
        ):
            assert vector_norm(x).hex() == float(np.linalg.norm(x)).hex()
    for odd in ([np.inf, 1.0], [np.nan, 1.0], [1e300, 1e300], [5e-324, 0.0]):
        x = np.array(odd)
        assert repr(vector_norm(x)) == repr(float(np.linalg.norm(x)))


class PoolBackend:
    """A backend whose pool scores are given (``text_lane.ScoresPool``)."""

    def __init__(self, got: PoolScores) -> None:
        self.got = got

    def text_pool_scores(self, scope: Scope, query: str, k: int, view: Any) -> PoolScores:
        return self.got


def _reference(got: PoolScores) -> tuple[list[str], list[int], list[str]]:
    """The positive rows, rounded, ordered by score desc then t_created desc (ties on both
    in pool order): the filter every pool went through before."""
    positive = (got.scores > 0).nonzero()[0]
    scores, created = round_array(got.scores[positive], 9), got.t_created[positive]
    order = np.lexsort((-created, -scores))
    ids = [got.ids[p] for p in positive[order].tolist()]
    return ids, created[order].tolist(), [s.hex() for s in scores[order].tolist()]


@pytest.mark.parametrize("seed", range(8))
def test_the_ordered_pool_keeps_only_positive_rows_whether_or_not_all_are(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    values = rng.choice([0.5, 0.25, 1e-12, 3.0, 0.125], n) * rng.random(n) ** (seed % 2)
    if seed % 4 >= 2 and n:  # some rows not positive: zero, negative, NaN
        bad = rng.choice(n, max(1, n // 3), replace=False)
        values[bad] = rng.choice([0.0, -0.0, -1.5, np.nan], bad.size)
    got = PoolScores(
        [f"m{i:02d}" for i in range(n)],
        rng.choice([10, 20, 30], n).astype(np.int64),
        values.astype(np.float64),
        {},
    )
    view = TemporalView(as_of=0)
    out = text_lane._ordered_by_backend(PoolBackend(got), SCOPE, "q", 50, view, None)
    assert out is not None
    ids, created, scores = out
    assert (ids, created.tolist(), [s.hex() for s in scores.tolist()]) == _reference(got)


def test_take_ids_of_no_rows_is_an_empty_list() -> None:
    table = RowTable()
    table.append("a", "n", (1, 2, 3, 4))
    assert table.take_ids([]) == table.take_ids(np.zeros(0, dtype=np.intp)) == []
    assert table.take_ids([0]) == ["a"]
