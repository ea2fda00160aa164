"""Freshness reads the lanes' union matrix as it was kept, unsplit, and ranks as before.

The recall's ``VectorCache`` keeps the matrix the lanes read whole; freshness used to get
it split into ~85 row arrays (``cached_vectors``) and join them again. ``StoredRows``
hands it over as one matrix with each id's row: ``unit_rows`` gathers the rows it needs in
one step. The unit rows, and so every cosine and the whole step, must be what the rows one
by one gave, bit for bit; and the pipeline takes that path only when the matrix holds
every candidate and the cache nothing else, without a store read.
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
from attestor_arango.retrieval.completion import VectorCache, keep_rows
from attestor_arango.retrieval.freshness import StoredRows, apply_freshness, unit_rows
from attestor_arango.scope import Scope


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
