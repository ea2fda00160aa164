"""Freshness reads the lanes' union matrix as it was kept, unsplit, and ranks as before.

The recall's ``VectorCache`` keeps the matrix the lanes read whole; freshness used to get
it split into ~85 row arrays (``cached_vectors``) and join them again. ``StoredRows``
hands it over as one matrix with each id's row: ``unit_rows`` gathers the rows it needs in
one step. The unit rows, and so every cosine and the whole step, must be what the rows one
by one gave, bit for bit; and the pipeline takes that path only when the matrix holds
every candidate and the cache nothing else, without a store read. When lane completion
widened that very matrix to float64 and took its rows' norms (``VectorCache.wide``),
freshness divides those instead of computing them again: the same floats, bit for bit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest
from retrieval_fakes import FakeStore, mem
from test_freshness_few import _case

from attestor_arango.retrieval import pipeline
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.completion import VectorCache, cosines, keep_rows
from attestor_arango.retrieval.freshness import StoredRows, apply_freshness, unit_rows
from attestor_arango.scope import Scope
from attestor_arango.store.codec import row_norms


def _stored(vectors: dict[str, np.ndarray], rng: random.Random) -> StoredRows:
    """The same vectors as rows of one float32 matrix, in a shuffled order, with a few rows
    of ids no candidate has."""
    ids = list(vectors) + [f"other{k}" for k in range(rng.randint(0, 3))]
    rng.shuffle(ids)
    dim = len(next(iter(vectors.values())))
    extra = np.full(dim, 7.0, dtype=np.float32)
    return StoredRows(ids, np.stack([vectors.get(i, extra) for i in ids]))


def _state(cands: Sequence[Candidate]) -> list[tuple[str, str, str]]:
    return [(c.id, c.freshness.hex(), c.relevance.hex()) for c in cands]


@pytest.mark.parametrize("seed", range(150))
def test_freshness_over_the_kept_matrix_equals_the_rows_one_by_one(seed: int) -> None:
    got, vectors, config, asked = _case(seed, quick=seed % 2 == 1)
    want, _, _, _ = _case(seed, quick=seed % 2 == 1)
    if not vectors:
        return
    stored = _stored(vectors, random.Random(seed))
    apply_freshness(got, stored, config, asked)
    apply_freshness(want, vectors, config, asked)
    assert _state(got) == _state(want)
    # the unit rows themselves, bit for bit, also with candidates the matrix lacks
    held = [c for c in got if c.id in vectors]
    assert unit_rows(held, stored).tobytes() == unit_rows(held, vectors).tobytes()
    assert unit_rows(got, stored).tobytes() == unit_rows(got, vectors).tobytes()


class _NoReads(FakeStore):
    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        raise AssertionError("the kept matrix holds every vector: nothing to read")


def test_the_pipeline_hands_over_the_kept_matrix_without_a_read() -> None:
    rng = np.random.default_rng(3)
    ids = [f"m{k:02d}" for k in range(12)]
    matrix = rng.standard_normal((12, 5)).astype(np.float32)
    cache = VectorCache()
    keep_rows(cache, ids, matrix)
    cands = [Candidate(memory=mem(i, f"text of {i}")) for i in ids[:9]]
    got = pipeline._vectors(_NoReads(), Scope("t", "ns"), cands, {}, cache)
    assert isinstance(got, StoredRows)
    plain: dict[str, np.ndarray] = {}
    keep_rows(plain, ids, matrix)  # a plain dict takes the rows at once
    want = pipeline._vectors(_NoReads(), Scope("t", "ns"), cands, {}, plain)
    assert not isinstance(want, StoredRows)
    assert sorted(want) == [c.id for c in cands]
    assert all(np.array_equal(got[i], want[i]) for i in want)


def test_without_every_vector_in_the_one_matrix_the_cache_answers() -> None:
    rng = np.random.default_rng(4)
    ids = [f"m{k:02d}" for k in range(6)]
    matrix = rng.standard_normal((6, 3)).astype(np.float32)
    cands = [Candidate(memory=mem(i, f"text of {i}")) for i in [*ids, "m99"]]  # m99: not kept
    cache = VectorCache()
    keep_rows(cache, ids, matrix)
    assert pipeline._kept_matrix(cache, [c.id for c in cands]) is None
    assert pipeline._kept_matrix(cache, ids) is not None
    cache["m99"] = np.zeros(3, dtype=np.float32)  # a row read apart: the dict answers
    assert pipeline._kept_matrix(cache, ids) is None
    two = VectorCache()
    keep_rows(two, ids[:3], matrix[:3])
    keep_rows(two, ids[3:], matrix[3:])
    assert pipeline._kept_matrix(two, ids) is None


def _widened(stored: StoredRows, per_row: bool) -> StoredRows:
    """``stored`` with its matrix widened to float64 and its rows' norms given, as lane
    completion computed them: over the whole matrix, or row by row (as the embedded index
    keeps them, each computed the first time its row is gathered)."""
    m = stored.matrix
    norms = np.concatenate([row_norms(m[k : k + 1]) for k in range(len(m))]) if per_row else None
    return StoredRows(
        list(stored.place), m, (m.astype(np.float64), row_norms(m) if norms is None else norms)
    )


@pytest.mark.parametrize("seed", range(150))
def test_freshness_over_completions_float64_rows_equals_widening_them_again(seed: int) -> None:
    got, vectors, config, asked = _case(seed, quick=seed % 2 == 1)
    want, _, _, _ = _case(seed, quick=seed % 2 == 1)
    if not vectors:
        return
    plain = _stored(vectors, random.Random(seed))
    stored = _widened(plain, per_row=seed % 3 == 0)
    apply_freshness(got, stored, config, asked)
    apply_freshness(want, plain, config, asked)
    assert _state(got) == _state(want)
    held = [c for c in got if c.id in vectors]
    assert unit_rows(held, stored).tobytes() == unit_rows(held, plain).tobytes()
    assert unit_rows(got, stored).tobytes() == unit_rows(got, vectors).tobytes()


@pytest.mark.parametrize("dim", [1, 7, 8, 9, 128, 384, 385, 768])
def test_unit_rows_from_kept_norms_are_bit_identical_at_real_widths(dim: int) -> None:
    """Pairwise summation blocks rows by 8 and 128 values: the norms taken over the whole
    matrix, or one row at a time, must be those of the gathered rows at any width."""
    rng = np.random.default_rng(dim)
    n = 90
    ids = [f"m{k:03d}" for k in range(n)]
    matrix = (rng.standard_normal((n, dim)) * rng.choice([1e-3, 1.0, 30.0], (n, 1))).astype(
        np.float32
    )
    matrix[[5, 40]] = 0.0  # a zero row stays zero
    cands = [Candidate(memory=mem(i, f"text of {i}")) for i in rng.permutation(ids)[:70]]
    plain = StoredRows(ids, matrix)
    for per_row in (False, True):
        got = unit_rows(cands, _widened(plain, per_row))
        assert got.tobytes() == unit_rows(cands, plain).tobytes()


class _Normed(FakeStore):
    """A backend that hands the union over as one matrix with its rows' norms."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.kept = vectors

    def vector_matrix_normed(
        self, scope: Scope, ids: Sequence[str]
    ) -> tuple[list[str], np.ndarray, np.ndarray, None]:
        have = [i for i in ids if i in self.kept]
        rows = np.stack([self.kept[i] for i in have])
        return have, rows, row_norms(rows), None

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {i: self.kept[i] for i in ids if i in self.kept}


def test_completion_leaves_its_float64_rows_for_freshness() -> None:
    rng = np.random.default_rng(5)
    ids = [f"m{k:02d}" for k in range(20)]
    vectors = {i: rng.standard_normal(384).astype(np.float32) for i in ids}
    store, scope = _Normed(vectors), Scope("t", "ns")
    cache = VectorCache()
    cosines(store, scope, rng.standard_normal(384), ids, cache)
    cands = [Candidate(memory=mem(i, f"text of {i}")) for i in ids[3:17]]
    got = pipeline._vectors(store, scope, cands, {}, cache)
    assert isinstance(got, StoredRows) and got.wide is not None
    assert got.wide[0].dtype == np.float64
    want = unit_rows(cands, {i: vectors[i] for i in ids})
    assert unit_rows(cands, got).tobytes() == want.tobytes()
    # a later read from the cache splits the kept matrix: the widening left is of other rows
    cosines(store, scope, rng.standard_normal(384), ids[:4], cache)
    assert cache.wide is not None and len(cache.wide[1]) == 4
    assert pipeline._kept_matrix(cache, [c.id for c in cands]) is None


def test_widened_rows_of_another_matrix_are_not_taken() -> None:
    rng = np.random.default_rng(6)
    ids = [f"m{k:02d}" for k in range(6)]
    matrix = rng.standard_normal((6, 4)).astype(np.float32)
    other = matrix.copy()
    cache = VectorCache()
    keep_rows(cache, ids, matrix)
    cache.wide = (other, other.astype(np.float64) * 2, row_norms(other))
    kept = pipeline._kept_matrix(cache, ids)
    assert kept is not None and kept.wide is None
    cache.wide = (matrix, matrix.astype(np.float64), row_norms(matrix))
    kept = pipeline._kept_matrix(cache, ids)
    assert kept is not None and kept.wide is not None


@pytest.mark.parametrize("widened", [False, True])
def test_unit_rows_of_candidates_the_matrix_lacks_equal_the_rows_one_by_one(widened: bool) -> None:
    """A candidate the kept matrix does not hold sends ``unit_rows`` to the rows one by one
    (a zero row for it), whatever its place; the rows the matrix holds are gathered in the
    candidates' order, bit for bit as the rows one by one give them."""
    rng = np.random.default_rng(8)
    ids = [f"m{k:02d}" for k in range(30)]
    matrix = rng.standard_normal((30, 384)).astype(np.float32)
    vectors = dict(zip(ids, matrix, strict=True))
    stored = StoredRows(ids, matrix)
    if widened:
        stored = _widened(stored, per_row=False)
    for trial in range(20):
        picked = [str(i) for i in rng.permutation(ids)[: 5 + trial]]
        cands = [Candidate(memory=mem(i, f"text of {i}")) for i in picked]
        assert unit_rows(cands, stored).tobytes() == unit_rows(cands, vectors).tobytes()
        lacking = [*cands]
        lacking.insert(trial % len(cands), Candidate(memory=mem("zz", "not kept")))
        got = unit_rows(lacking, stored)
        assert got.tobytes() == unit_rows(lacking, vectors).tobytes()
        assert not got[trial % len(cands)].any()


class _Recording(FakeStore):
    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.kept = vectors
        self.asked: list[list[str]] = []

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self.asked.append(list(ids))
        return {i: self.kept[i] for i in ids if i in self.kept}


def test_vectors_the_kept_matrix_cannot_give_are_read_in_id_order() -> None:
    """The candidates' ids go unsorted to the kept-matrix test (its answer does not depend
    on their order); when it cannot answer, the store is read in id order, as before."""
    rng = np.random.default_rng(9)
    ids = [f"m{k:02d}" for k in range(8)]
    matrix = rng.standard_normal((8, 4)).astype(np.float32)
    vectors = dict(zip(ids, matrix, strict=True))
    vectors["m99"] = rng.standard_normal(4).astype(np.float32)
    order = ["m05", "m99", "m01", "m07", "m03"]
    cands = [Candidate(memory=mem(i, f"text of {i}")) for i in order]
    cache = VectorCache()
    keep_rows(cache, ids, matrix)
    store = _Recording(vectors)
    got = pipeline._vectors(store, Scope("t", "ns"), cands, {}, cache)
    assert store.asked == [["m99"]] and sorted(got) == sorted(order)
    kept_only = [c for c in cands if c.id != "m99"][::-1]
    store = _Recording(vectors)
    got = pipeline._vectors(store, Scope("t", "ns"), kept_only, {}, VectorCache())
    assert store.asked == [sorted(c.id for c in kept_only)]  # nothing kept: all read
    cache = VectorCache()
    keep_rows(cache, ids, matrix)
    kept = pipeline._vectors(store, Scope("t", "ns"), kept_only, {}, cache)
    assert isinstance(kept, StoredRows) and len(store.asked) == 1  # no read
