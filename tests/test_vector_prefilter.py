"""The prefilter's Hamming stage (store/embedded/prefilter.py) against a brute force.

The stage keeps the rows at most the keep-th nearest's Hamming distance (of the int8
codes' signs) from the query's; its word columns, its popcount and its two-step selection
are checked against distances counted here sign by sign, with ties at the keep-th and a
first guess that falls short.
"""

from __future__ import annotations

import numpy as np
import pytest

from attestor_arango.store.embedded import prefilter
from attestor_arango.store.embedded.prefilter import SignBits, nearest, sign_words


def _want(codes: np.ndarray, q: np.ndarray, idx: np.ndarray | None, keep: int) -> np.ndarray:
    rows = np.arange(len(codes)) if idx is None else idx
    far = ((codes[rows] > 0) != (q > 0)).sum(axis=1)
    reach = np.sort(far)[min(keep, rows.size) - 1]
    return rows[far <= reach]


@pytest.mark.parametrize("dim", [7, 64, 130, 384])
def test_nearest_keeps_the_rows_within_the_keep_th_distance(dim: int) -> None:
    """Any width (padding bits add nothing), every row or some, keep from 1 to past all."""
    rng = np.random.default_rng(dim)
    codes = rng.integers(-127, 128, size=(3000, dim), dtype=np.int8)
    codes[:1000] = codes[rng.integers(0, 20, 1000)]  # many exact ties
    columns = SignBits().of([codes[:1700], codes[1700:]], 4000, dim)
    some = np.sort(rng.choice(3000, 1200, replace=False))
    for keep in (1, 10, 299, 2999, 5000):
        for idx in (None, some):
            q = rng.integers(-127, 128, size=dim, dtype=np.int8)
            assert np.array_equal(nearest(columns, q, idx, keep), _want(codes, q, idx, keep))


def test_a_first_guess_that_falls_short_counts_every_distance() -> None:
    """Every 16th row at distance 0 and the rest far: the sample sees only the near rows,
    its bound keeps too few, and the answer still holds the keep-th nearest's ties (fails
    when the short guess is taken as it is)."""
    dim = 64
    codes = np.full((1600, dim), 5, dtype=np.int8)
    codes[np.arange(1600) % 16 != 0] = -5  # every sign flipped: distance 64
    codes[17] = 5
    codes[17, :3] = -5  # distance 3
    q = np.full(dim, 5, dtype=np.int8)
    columns = SignBits().of([codes], 1600, dim)
    for keep in (100, 101, 500):
        got = nearest(columns, q, None, keep)
        assert np.array_equal(got, _want(codes, q, None, keep))
    assert nearest(columns, q, None, 101).size == 101  # the 100 at 0 and the one at 3


def test_the_byte_table_popcount_equals_numpys(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy < 2 has no bitwise_count: the table fallback gives the same distances."""
    rng = np.random.default_rng(3)
    words = rng.integers(0, 2**63, size=5000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    want = np.array([bin(int(w)).count("1") for w in words])
    assert np.array_equal(prefilter._bytes_popcount(words), want)
    monkeypatch.setattr(prefilter, "_popcount", prefilter._bytes_popcount)
    codes = rng.integers(-127, 128, size=(2000, 40), dtype=np.int8)
    q = rng.integers(-127, 128, size=40, dtype=np.int8)
    columns = SignBits().of([codes], 2000, 40)
    assert np.array_equal(nearest(columns, q, None, 50), _want(codes, q, None, 50))


def test_sign_words_pack_like_packbits() -> None:
    """A row's words are its packbits bytes, zero-padded to a multiple of 8 bytes."""
    codes = np.random.default_rng(4).integers(-127, 128, size=(9, 70), dtype=np.int8)
    packed = np.packbits(codes > 0, axis=1)
    got = sign_words(codes).view(np.uint8)
    assert np.array_equal(got[:, : packed.shape[1]], packed)
    assert not got[:, packed.shape[1] :].any()
