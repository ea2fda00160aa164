"""``_nearest`` walks the rows once in value order; it must pick what the argmax loop did.

The reference is the search as it was: the best row left (``np.argmax``, first row on a
tie), passed over while its query words say another subject than the anchor's (not the
same set, unless the later of the two holds none of the query's words). Random values
with many ties, masks and word sets (and NaN values, which argmax ranks first and a sort
last) must give the same row or the same None.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from attestor_arango.retrieval.freshness import _nearest


class Words:
    """The part of ``AskedWords`` that ``_nearest`` reads: a row's query-term set."""

    def __init__(self, bits: list[int]) -> None:
        self.bits = bits

    def row(self, k: int) -> int:
        return self.bits[k]


def argmax_reference(
    values: np.ndarray,
    mask: np.ndarray,
    anchor: int,
    words: Words,
    later: bool,
) -> int | None:
    mask = mask.copy()
    while mask.any():
        k = int(np.argmax(np.where(mask, values, -np.inf)))
        mine, theirs = words.row(anchor), words.row(k)
        newer, older = (theirs, mine) if later else (mine, theirs)
        if mine == theirs or (newer == 0 and older != 0):
            return k
        mask[k] = False
    return None


@pytest.mark.parametrize("seed", range(40))
def test_nearest_picks_the_row_the_argmax_loop_picked(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    # few distinct values, so ties are common; sometimes a NaN among them
    levels = [round(rng.uniform(-1, 1), 2) for _ in range(rng.randint(1, 6))]
    values = np.array([rng.choice(levels) for _ in range(n)], dtype=np.float64)
    if seed % 5 == 0:
        values[rng.randrange(n)] = np.nan
    for _ in range(20):
        mask = np.array([rng.random() < 0.7 for _ in range(n)])
        words = Words([rng.randint(0, 2) for _ in range(n)])
        anchor = rng.randrange(n)
        later = rng.random() < 0.5
        want = argmax_reference(values, mask, anchor, words, later)
        got = _nearest(values, mask, anchor, words, later)  # type: ignore[arg-type]
        assert got == want


def test_without_words_it_is_the_best_row_or_none() -> None:
    values = np.array([0.2, 0.9, 0.9, 0.1])
    assert _nearest(values, np.array([True, True, True, True]), 0, None) == 1
    assert _nearest(values, np.zeros(4, dtype=bool), 0, None) is None
