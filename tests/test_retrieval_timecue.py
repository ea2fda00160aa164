"""Temporal questions favour memories that say when (retrieval/timecue.py), worked by hand."""

from __future__ import annotations

import pytest
from retrieval_fakes import mem

from attestor_arango.retrieval.candidates import Candidate, order
from attestor_arango.retrieval.timecue import apply_time_cue, asks_when, carries_time


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("When did Jon go to the fair?", True),
        ("Since when does Alice work at Acme?", True),
        ("What year did Caroline move?", True),
        ("Which month is the race in?", True),
        ("How long ago was her birthday?", True),
        ("Where does Alice live?", False),
        ("Whenever Bob bakes, what does he make?", False),
        ("How long has she painted?", False),  # a duration, not a point in time
    ],
)
def test_asks_when(query: str, expected: bool) -> None:
    assert asks_when(query) is expected


# the memory's own date in these cases: May 2023
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yesterday I went to a fair", True),
        ("I painted that lake sunrise last year!", True),
        ("We go camping every Saturday", True),
        ("Melanie (8 May 2023): I love pottery", False),  # only its own date
        ("Melanie (8 May 2023): we went camping in June", True),  # another month
        ("Back in 2022 I adopted a dog", True),  # another year
        ("It happened in 2023", False),  # its own year
        ("I may go hiking", False),  # "may" the verb
        ("See you on 3 March", True),  # "march" beside a number
        ("Let's march on", False),
        ("I have been thinking about the past few days", False),
    ],
)
def test_carries_time_beyond_its_own_date(text: str, expected: bool) -> None:
    assert carries_time(text, 2023, 5) is expected


def cand(mid: str, content: str, rrf_norm: float) -> Candidate:
    c = Candidate(memory=mem(mid, content, day=1))  # valid_from 2026-01-02
    c.rrf_norm = rrf_norm
    c.compute_relevance()
    return c


def pool() -> list[Candidate]:
    return [
        cand("a", "Jon went to the fair with his studio", 0.80),
        cand("b", "Yesterday Jon showed his studio at a fair", 0.75),
        cand("c", "Jon loves fairs, he went in 2026", 0.70),  # its own year: no cue
        cand("d", "Jon went to a fair last month", 0.60),
    ]


def test_a_when_query_lifts_candidates_that_say_when() -> None:
    cands = pool()
    apply_time_cue(cands, "When did Jon go to a fair?", 0.1)
    by = {c.id: c for c in cands}
    assert [by[i].time_cue for i in "abcd"] == [0.0, 0.1, 0.0, 0.1]
    # b 0.75 + 0.1 = 0.85 > a 0.80 > c 0.70 = d 0.60 + 0.1 (tie: t_created equal, id asc)
    assert [c.id for c in order(cands)] == ["b", "a", "c", "d"]
    assert by["b"].relevance == pytest.approx(0.85)
    assert by["b"].breakdown().time_cue == pytest.approx(0.1)


def test_other_queries_and_zero_weight_leave_the_order_alone() -> None:
    for query, weight in (("Where did Jon show his studio?", 0.1), ("When did Jon go?", 0.0)):
        cands = pool()
        apply_time_cue(cands, query, weight)
        assert [c.time_cue for c in cands] == [0.0] * 4
        assert [c.id for c in order(cands)] == ["a", "b", "c", "d"]
