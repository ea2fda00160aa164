"""Freshness's searches walk the rows in Python; they must pick what the numpy masks picked.

The reference (``freshness_masks``, the step until session 25) builds a mask over every
row (said later or earlier than the anchor, not in its conversation) and takes the best
row left (``np.argmax``, first row on a tie), passed over while its query words say
another subject than the anchor's. Random times with many ties, sessions, values with
many ties (and NaN values, which argmax ranks first and a sort last) and word sets must
give the same row or the same None. The first places of the candidates (``first_places``)
must be ``heapq.nsmallest``'s, ties, NaN and infinities included.
"""

from __future__ import annotations

import heapq
import math
import random

import numpy as np
import pytest
from freshness_masks import earlier_mask, later_mask, nearest, same_conversation, session_codes
from retrieval_fakes import mem

from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.freshness_search import Rows, desc_order, first_places


class Words:
    """The part of ``AskedWords`` the searches read: a row's query-term set."""

    def __init__(self, bits: list[int]) -> None:
        self.bits = bits

    def row(self, k: int) -> int:
        return self.bits[k]


def _items(rng: random.Random, n: int) -> list[Candidate]:
    """Candidates on few days (ties of valid_from and t_created are common), some written
    as they were said (valid_from = t_created), some with a session."""
    days = [rng.choice([0.0, 0.5, 1.0, 1.2, 3.0]) for _ in range(n)]
    return [
        Candidate(
            memory=mem(
                f"m{k:03d}",
                day=day,
                created_day=rng.choice([day, day, 4.0, 5.0]),
                session=rng.choice([None, None, "s1", "s2"]),
            )
        )
        for k, day in enumerate(days)
    ]


def _values(rng: random.Random, n: int, nan: bool) -> list[float]:
    levels = [round(rng.uniform(-1, 1), 2) for _ in range(rng.randint(1, 6))]
    values = [rng.choice(levels) for _ in range(n)]
    if nan:
        values[rng.randrange(n)] = math.nan
    return values


@pytest.mark.parametrize("seed", range(60))
def test_the_row_walk_picks_the_row_the_masks_picked(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    items = _items(rng, n)
    whens = np.array([(c.valid_from, c.t_created) for c in items], dtype=np.int64)
    sessions = session_codes(items)
    for _ in range(20):
        values = _values(rng, n, nan=seed % 5 == 0)
        words = rng.choice([None, Words([rng.randint(0, 2) for _ in range(n)])])
        anchor, later = rng.randrange(n), rng.random() < 0.5
        t = (int(whens[anchor, 0]), int(whens[anchor, 1]))
        conv = same_conversation(sessions, anchor, whens, words)  # type: ignore[arg-type]
        mask = (later_mask if later else earlier_mask)(whens, t) & ~conv
        want = nearest(np.array(values), mask, anchor, words, later)  # type: ignore[arg-type]
        got = Rows(items, words).nearest(np.array(values), anchor, later)  # type: ignore[arg-type]
        assert got == want


def test_the_cases_reach_every_outcome() -> None:
    # not vacuous: the walk finds a row, finds none, and tells conversations apart
    found = none = 0
    for seed in range(60):
        rng = random.Random(seed)
        items = _items(rng, 12)
        rows = Rows(items, None)
        for anchor in range(12):
            got = rows.nearest(np.array(_values(rng, 12, nan=False)), anchor)
            found += got is not None
            none += got is None
    assert found > 50 and none > 50


@pytest.mark.parametrize("seed", range(40))
def test_desc_is_the_order_argmax_takes_the_rows_in(seed: int) -> None:
    rng = random.Random(seed)
    values = _values(rng, rng.randint(1, 30), nan=seed % 3 == 0)
    if seed % 4 == 0:
        values[0] = math.inf
    left = np.array(values)
    mask = np.ones(len(values), dtype=bool)
    want = []
    while mask.any():
        k = int(np.argmax(np.where(mask, left, -np.inf)))
        want.append(k)
        mask[k] = False
    assert desc_order(left) == want


@pytest.mark.parametrize("seed", range(60))
def test_first_places_are_heapq_nsmallest(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    items = [
        Candidate(memory=mem(f"m{rng.randrange(1000):03d}{k}", day=rng.choice([0.0, 1.0])))
        for k in range(n)
    ]
    levels = [rng.random() for _ in range(rng.randint(1, 5))]
    before = [rng.choice(levels) for _ in range(n)]
    if seed % 6 == 1:
        before[rng.randrange(n)] = math.nan
    if seed % 6 == 2:
        before[rng.randrange(n)] = rng.choice([math.inf, -math.inf])
    places = rng.randint(1, 12)
    keys = [(-r, -c.t_created, c.id) for r, c in zip(before, items, strict=True)]
    want = heapq.nsmallest(places, range(n), key=keys.__getitem__)
    assert first_places(items, before, places) == want


class _Counting(Rows):
    def __init__(self, items: list[Candidate], words: Words | None) -> None:
        super().__init__(items, words)  # type: ignore[arg-type]
        self.tested: list[int] = []

    def same_conversation(self, j: int, r: int) -> bool:
        self.tested.append(r)
        return super().same_conversation(j, r)


def test_the_conversation_test_runs_only_for_rows_whose_words_may_match() -> None:
    """The whole conversation test (sessions and dates) runs only for rows that passed the
    time, own-session and word tests: a row whose query words say another subject is
    passed over without it, and the row found is the one the masks pick."""
    rng = random.Random(5)
    for _ in range(200):
        n = rng.randint(3, 30)
        items = _items(rng, n)
        bits = [rng.choice([1, 2, 3]) for _ in range(n)]
        words = Words(bits)
        values = np.array(_values(rng, n, nan=False))
        anchor, later = rng.randrange(n), rng.random() < 0.5
        rows = _Counting(items, words)
        got = rows.nearest(values, anchor, later)
        assert got == Rows(items, words).nearest(values, anchor, later)  # type: ignore[arg-type]
        mine, own = bits[anchor], items[anchor].memory.provenance.session_id
        for r in rows.tested:
            assert bits[r] == mine  # one_subject: the same non-empty set
            assert own is None or items[r].memory.provenance.session_id != own
        assert got is None or got in rows.tested
