"""The question tests (a "when" question, the dates it names, a question about the past,
one about what was asked) search a pattern only when the question holds the words the
pattern looks for; each answers as the single search of the whole pattern did, on every
question here: hand-made edge cases and thousands drawn from word pools that put the
patterns' words next to, inside and apart from other words."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from attestor_arango.retrieval import freshness, neighbours, timecue
from attestor_arango.retrieval.freshness import CHANGE_CUES, asks_past
from attestor_arango.retrieval.text_lane import terms
from attestor_arango.retrieval.timecue import asks_when, query_dates
from attestor_arango.text.dates import MONTH_NAMES

# the patterns as one search each, as the modules searched them before the word tests
_ASKS_WHEN = re.compile(
    r"^\s*when\b|\bwhen (?:did|does|do|is|was|were|will|has|have|had)\b"
    r"|\b(?:what|which) (?:year|month|date|day|week|time)\b|\bhow long ago\b"
)


def _asks_when_reference(query: str) -> bool:
    return _ASKS_WHEN.search(unicodedata.normalize("NFKC", query).lower()) is not None


def _query_dates_reference(query: str) -> list[tuple[int | None, int | None, int | None]]:
    t, month = timecue, timecue._month
    q = unicodedata.normalize("NFKC", query).lower()
    if t._MONTH.search(q) is None:
        return [(int(m.group(1)), None, None) for m in t._IN_YEAR.finditer(q)]
    out: list[tuple[int | None, int | None, int | None]]
    out = [(int(m[3]), month(m[2]), int(m[1])) for m in t._DAY_MONTH_YEAR.finditer(q)]
    out += [(int(m[3]), month(m[1]), int(m[2])) for m in t._MONTH_DAY_YEAR.finditer(q)]
    if not out:
        out = [(int(m[2]), month(m[1]), None) for m in t._MONTH_YEAR.finditer(q)]
    if not out:
        out = [(None, month(m[1]), None) for m in t._IN_MONTH.finditer(q)]
        out += [(int(m[1]), None, None) for m in t._IN_YEAR.finditer(q)]
    return out


def _asks_past_reference(query: str) -> bool:
    text = query.lower().replace("\u2019", "'")
    if freshness._ASKS_PAST.search(text) is not None:
        return True
    return any(CHANGE_CUES.isdisjoint(terms(m.group(1))) for m in freshness._PERFECT.finditer(text))


def _asks_asked_reference(query: str) -> bool:
    return neighbours._ASKS_WHAT_WAS_ASKED.search(query.lower()) is not None


EDGES = [
    "When did Jon go to the fair?",
    "  when is the party",
    "\u3000When was it",  # an ideographic space: NFKC makes it a space
    "whenever you like",
    "Since when do you run?",
    "So when did it start",
    "What year did she move?",
    "what  year",
    "somewhat year",
    "Which month is it",
    "which monthly plan",
    "How long ago did they meet?",
    "how long  ago",
    "It was long ago",
    "Ｗｈｅｎ did we go",  # full-width letters
    "in 2023",
    "during 1999 and in 2020",
    "of 2100",
    "in 20",
    "in 19999",
    "in May 2023",
    "on 13 October, 2023",
    "October 13, 2023",
    "the mayor in march",
    "In June",
    "did she?",
    "didn't he",
    "Hasn't she painted?",
    "What books has Mel read?",
    "Where have I moved to?",
    "What have you got",
    "haven't they driven",
    "Which car did I use to drive?",
    "She used to run",
    "originally, previously, formerly",
    "at first",
    "what did Jon ask Gina?",
    "the asks and questions",
    "a basket question",
    "Jon\u2019s car was red",
    "",
]

POOL = [
    "when", "what", "which", "how", "long", "ago", "year", "month", "date", "day", "week",
    "time", "did", "does", "do", "is", "was", "were", "will", "has", "have", "had", "hasn't",
    "haven't", "didn't", "wasn't", "weren't", "used", "to", "originally", "previously",
    "formerly", "at", "first", "ask", "asked", "asking", "question", "questions", "basket",
    "mayor", "2023", "1999", "2020", "19", "20", "in", "during", "of", "on", "painted",
    "read", "moved", "got", "been", "the", "a", "somewhat", "whenever", "Jon", "Gina", "?",
    ",", "!", "\u2019s", *MONTH_NAMES,
]  # fmt: skip

PHRASES = [
    "when did", "when", "what year", "which week", "how long ago", "in 2023", "during 1999",
    "in june", "in may 2023", "13 october 2023", "october 13, 2023", "march 2020",
    "has painted", "have read", "has moved", "ask", "questions", "in december",
    "1 december 2022", "in november 2021",
]  # fmt: skip


def _queries(seed: int, n: int = 3_000) -> list[str]:
    rng = random.Random(seed)
    out = list(EDGES)
    for _ in range(n):
        words = rng.choices(POOL, k=rng.randint(1, 9))
        if rng.random() < 0.4:  # a form a pattern looks for, somewhere in the question
            words.insert(rng.randrange(len(words) + 1), rng.choice(PHRASES))
        glue = rng.choice([" ", "  ", "", " \t"])
        q = glue.join(words)
        out.append(q.capitalize() if rng.random() < 0.5 else q)
    return out


@pytest.mark.parametrize("seed", range(2))
def test_the_question_tests_answer_as_one_search_of_each_pattern(seed: int) -> None:
    queries = _queries(seed)
    seen = {"when": 0, "dates": 0, "past": 0, "asked": 0}
    for q in queries:
        want_when = _asks_when_reference(q)
        assert asks_when(q) is want_when, q
        want_dates = _query_dates_reference(q)
        assert query_dates(q) == want_dates, q
        assert asks_past(q) is _asks_past_reference(q), q
        seen["when"] += want_when
        seen["dates"] += bool(want_dates)
        seen["past"] += _asks_past_reference(q)
        seen["asked"] += _asks_asked_reference(q)
    # every pattern does match some questions (and so is tested both ways)
    assert min(seen.values()) > 50, seen
    assert len(queries) - max(seen.values()) > 50, seen


@pytest.mark.parametrize("seed", range(2))
def test_asking_turns_yield_unless_the_question_asks_what_was_asked(seed: int) -> None:
    """``apply_asking`` returns early exactly when the single search finds the words."""
    from retrieval_fakes import mem

    from attestor_arango.retrieval.candidates import Candidate

    for q in _queries(seed, 1_000):
        c = Candidate(memory=mem("m1", "x"))
        c.memory.metadata["turn"] = {"text": "Any tips?"}
        neighbours.apply_asking([c], q, 0.2)
        assert (c.session == 0.0) is _asks_asked_reference(q), q
