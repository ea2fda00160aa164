"""Temporal questions favour memories that say when (retrieval/timecue.py), worked by hand."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from retrieval_fakes import mem

from attestor_arango.retrieval.candidates import Candidate, order, update_relevance
from attestor_arango.retrieval.timecue import apply_time_cue, asks_when, carries_time, query_dates


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
    apply_time_cue(cands, "When did Jon go to a fair?", 0.1, 0.0)
    update_relevance(cands)  # the sum the pipeline's decay step makes after it
    by = {c.id: c for c in cands}
    assert [by[i].time_cue for i in "abcd"] == [0.0, 0.1, 0.0, 0.1]
    # b 0.75 + 0.1 = 0.85 > a 0.80 > c 0.70 = d 0.60 + 0.1 (tie: t_created equal, id asc)
    assert [c.id for c in order(cands)] == ["b", "a", "c", "d"]
    assert by["b"].relevance == pytest.approx(0.85)
    assert by["b"].breakdown().time_cue == pytest.approx(0.1)


def test_other_queries_and_zero_weight_leave_the_order_alone() -> None:
    for query, weight in (("Where did Jon show his studio?", 0.1), ("When did Jon go?", 0.0)):
        cands = pool()
        apply_time_cue(cands, query, weight, 0.0)
        assert [c.time_cue for c in cands] == [0.0] * 4
        assert [c.id for c in order(cands)] == ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Melanie show on October 13, 2023?", [(2023, 10, 13)]),
        ("What did Gina find on 1 February, 2023?", [(2023, 2, 1)]),
        ("What did Mel paint in July 2023?", [(2023, 7, None)]),
        ("When did Melanie go camping in June?", [(None, 6, None)]),
        ("How often did she swim in 2023?", [(2023, None, None)]),
        ("What may she paint next?", []),  # no "in/during/of" before a lone month
        ("Where does Alice live?", []),
    ],
)
def test_query_dates_at_the_most_specific_form(query: str, expected: list[object]) -> None:
    assert query_dates(query) == expected


def dated(mid: str, when: str, rrf_norm: float, content: str | None = None) -> Candidate:
    y, m, d = (int(x) for x in when.split("-"))
    c = Candidate(
        memory=mem(mid, content or f"memory {mid}").model_copy(
            update={"valid_from": datetime(y, m, d, 12, tzinfo=UTC)}
        )
    )
    c.rrf_norm = rrf_norm
    c.compute_relevance()
    return c


def test_a_named_date_lifts_the_candidates_whose_event_time_falls_in_it() -> None:
    def run(query: str) -> list[tuple[str, float]]:
        cands = [
            dated("a", "2023-10-12", 0.80),
            dated("b", "2023-10-13", 0.75),
            dated("c", "2022-10-13", 0.72),
            dated("d", "2023-07-02", 0.70),
        ]
        apply_time_cue(cands, query, 0.0, 0.1)
        update_relevance(cands)  # the sum the pipeline's decay step makes after it
        return [(c.id, c.time_cue) for c in order(cands)]

    # only b is on that day: b 0.85 > a 0.80 > c 0.72 > d 0.70
    assert run("What did she show on October 13, 2023?") == [
        ("b", 0.1),
        ("a", 0.0),
        ("c", 0.0),
        ("d", 0.0),
    ]
    # a month of a year: a and b 0.1 up -> b 0.85 < a 0.90; c (2022) and d stay
    assert run("What did she paint in October 2023?") == [
        ("a", 0.1),
        ("b", 0.1),
        ("c", 0.0),
        ("d", 0.0),
    ]
    # a lone month matches any year: a 0.90, b 0.85, c 0.82, d 0.70
    assert run("What did she paint in October?") == [("a", 0.1), ("b", 0.1), ("c", 0.1), ("d", 0.0)]
    # a year: a 0.90, b 0.85, d 0.80 > c 0.72 (2022 stays)
    assert run("What did she paint in 2023?") == [("a", 0.1), ("b", 0.1), ("d", 0.1), ("c", 0.0)]


def test_a_when_question_naming_a_date_adds_both_cues() -> None:
    # a candidate reads its memory's fields when made (candidates.py): made with the text
    c = dated("a", "2023-06-27", 0.5, "We went camping last week")
    apply_time_cue([c], "When did Melanie go camping in June?", 0.1, 0.1)
    assert c.relevance == pytest.approx(0.5)  # the cue alone: the sum comes after
    update_relevance([c])
    assert c.time_cue == pytest.approx(0.2)
    assert c.relevance == pytest.approx(0.7)


def _query_dates_scanning_every_form(query: str) -> list[tuple[int | None, ...]]:
    """``query_dates`` as it was before it looked for a month first: every form scanned."""
    from attestor_arango.retrieval import timecue as t

    q = t._norm(query)
    out: list[tuple[int | None, ...]] = [
        (int(m.group(3)), t._month(m.group(2)), int(m.group(1)))
        for m in t._DAY_MONTH_YEAR.finditer(q)
    ]
    out += [
        (int(m.group(3)), t._month(m.group(1)), int(m.group(2)))
        for m in t._MONTH_DAY_YEAR.finditer(q)
    ]
    if not out:
        out = [(int(m.group(2)), t._month(m.group(1)), None) for m in t._MONTH_YEAR.finditer(q)]
    if not out:
        out = [(None, t._month(m.group(1)), None) for m in t._IN_MONTH.finditer(q)]
        out += [(int(m.group(1)), None, None) for m in t._IN_YEAR.finditer(q)]
    return out


@pytest.mark.parametrize(
    "query",
    [
        "What did she paint in 2023?",
        "What happened during 1999 and in 2024?",
        "Where was Mayweather in 2021?",  # a month's letters inside a word are no month
        "What did Jon do on 13 October 2023?",
        "What happened on October 13, 2023 and 3 May, 2022?",
        "What did she paint in October 2023?",
        "What did she paint in OCTOBER?",  # folded to lower case first
        "Who was marching in 2023, in march?",
        "Did they meet in 12 junes 2023?",
        "Where does Alice live?",
        "What happened in the 2023rd week?",
    ],
)
def test_query_dates_without_a_month_word_scans_only_for_a_year(query: str) -> None:
    """A query naming no month as a word is matched for a lone year only (every other form
    names a month): the same dates as scanning every form, with and without months."""
    assert query_dates(query) == _query_dates_scanning_every_form(query)


def test_time_cues_over_many_candidates_equal_one_at_a_time_bit_for_bit() -> None:
    """``apply_time_cue`` reads the memory's fields by key, the memo's known rows by lookup,
    and sets the cues alone: each candidate's time cue, and its relevance summed after
    (``update_relevance``, as the pipeline's decay step does), are those the one-at-a-time
    form gave (``round(bonus, 12)``, ``compute_relevance``), bit for bit, rows seen before
    and new ones alike."""
    import copy
    import random

    from attestor_arango.retrieval.timecue import _carries

    rng = random.Random(3)
    texts = ["We went camping last week", "I love pottery", "Back in 2022 I adopted a dog"]
    texts += ["we met in June", "Melanie (8 May 2023): I love pottery", "see you tomorrow"]
    cands = []
    for i in range(60):
        day = f"{rng.choice([2022, 2023])}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        c = dated(f"m{i}", day, rng.random(), f"{rng.choice(texts)} #{rng.randint(0, 9)}")
        c.decay, c.boost = rng.random(), rng.random() * 0.01
        cands.append(c)
    _carries.clear()
    apply_time_cue(cands[:10], "When did she go?", 0.1, 0.1)  # a few rows seen before
    for query, cue, date in [
        ("When did Melanie go camping in June 2023?", 0.1234567890123, 0.0456789012345),
        ("When did she paint?", 0.1000000000004, 0.0),
        ("What did she do in 2023?", 0.0, 1),  # an int weight: the bonus is still a float
    ]:
        fast, slow = copy.deepcopy(cands), copy.deepcopy(cands)
        apply_time_cue(fast, query, cue, date)
        update_relevance(fast)
        for c in slow:  # the one-at-a-time form
            when = c.memory.valid_from
            bonus = 0.0
            if cue and asks_when(query) and carries_time(c.memory.content, when.year, when.month):
                bonus += cue
            y, m, d = when.year, when.month, when.day
            if date and any(
                (py is None or py == y) and (pm is None or pm == m) and (pd is None or pd == d)
                for py, pm, pd in query_dates(query)
            ):
                bonus += date
            if bonus:
                c.time_cue = round(bonus, 12)
            c.compute_relevance()
        got = [(c.time_cue.hex(), c.relevance.hex()) for c in fast]
        assert got == [(float(c.time_cue).hex(), c.relevance.hex()) for c in slow]
        assert [type(c.time_cue) for c in fast] == [float] * len(fast)
        assert any(c.time_cue for c in fast) and not all(c.time_cue for c in fast)
