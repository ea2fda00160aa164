"""Updates written seconds apart, without sessions: told from a neighbouring fact by the
query's words.

A script or an agent stores facts with plain ``add(text)``, a second apart. Two such
statements used to count as one conversation (within a day, no session) and so never as
an update of each other. Now they are one conversation only when their query words say
two subjects: "My bike is a road bike" then "My bike is a gravel bike", asked "What kind
of bike do I ride?", both hold "bike" (an update); "The payments service is written in
Go" then "The search service is written in Rust", asked about the payments service,
differ in "payments" (two subjects: the earlier keeps its rank); a later statement that
holds none of the query's words may be a paraphrased update ("My car is a Nissan Leaf",
then "These days I get around in a Hyundai Ioniq", asked "What car do I have?").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from retrieval_fakes import mem

from attestor_arango.clock import ManualClock
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.freshness import apply_freshness
from attestor_arango.text.stemming import scoring_terms

CFG = RetrievalConfig()
SECOND = 1 / 86_400  # in days, as retrieval_fakes.mem counts time


def _cand(
    mid: str, text: str, relevance: float, day: float, created: float | None = None
) -> Candidate:
    c = Candidate(memory=mem(mid, text, day=day, created_day=created))
    c.rrf_norm = relevance
    c.compute_relevance()
    return c


# the earlier fact, the later statement (cosine 0.6 to it: below freshness_similarity,
# no change cue) and a far third candidate, so that "nearest" means something
VECTORS = {
    "old": np.array([1.0, 0.0, 0.0]),
    "new": np.array([0.6, 0.8, 0.0]),
    "third": np.array([0.0, 0.0, 1.0]),
}


def _three(old: str, new: str, new_day: float = 2 * SECOND) -> list[Candidate]:
    """The earlier fact at second 0, the third candidate at second 1, the later statement
    at ``new_day`` (second 2 unless told)."""
    return [
        _cand("old", old, 0.8, 0.0),
        _cand("new", new, 0.5, new_day),
        _cand("third", "Lunch is at noon on Fridays", 0.3, SECOND),
    ]


def test_an_update_written_seconds_later_takes_the_rank() -> None:
    cands = _three("My bike is a road bike.", "My bike is a gravel bike.")
    apply_freshness(cands, VECTORS, CFG, scoring_terms("What kind of bike do I ride?"))
    old, new, _ = cands
    assert old.freshness == -CFG.freshness_penalty
    assert new.relevance > old.relevance


def test_a_paraphrased_update_without_the_query_words_takes_the_rank() -> None:
    # the later statement names the subject in other words: it holds none of the query's
    # words, the earlier one holds "car"; it can be an update (it is the mutual nearest)
    cands = _three("My car is a Nissan Leaf.", "These days I get around in a Hyundai Ioniq.")
    apply_freshness(cands, VECTORS, CFG, scoring_terms("What car do I have?"))
    old, new, _ = cands
    assert old.freshness == -CFG.freshness_penalty
    assert new.relevance > old.relevance


def test_without_the_query_words_statements_of_one_day_stay_one_conversation() -> None:
    cands = _three("My bike is a road bike.", "My bike is a gravel bike.")
    apply_freshness(cands, VECTORS, CFG)
    assert [c.freshness for c in cands] == [0.0, 0.0, 0.0]


def test_a_neighbouring_fact_about_another_subject_does_not_take_over() -> None:
    cands = _three(
        "The payments service is written in Go",
        "The search service is written in Rust and uses tantivy",
    )
    asked = scoring_terms("which language is the payments service written in?")
    apply_freshness(cands, VECTORS, CFG, asked)
    assert [c.freshness for c in cands] == [0.0, 0.0, 0.0]
    # the same two said days or a month apart are still two subjects (session 17: the
    # rule held for one day only, and a month-later neighbour took over)
    for day in (2.0, 30.0):
        late = _three(
            "The payments service is written in Go",
            "The search service is written in Rust and uses tantivy",
            new_day=day,
        )
        apply_freshness(late, VECTORS, CFG, asked)
        assert [c.freshness for c in late] == [0.0, 0.0, 0.0]
    # while a month-later restatement of the asked subject still updates it
    late = _three(
        "The payments service is written in Go",
        "The payments service is written in Rust now",
        new_day=30.0,
    )
    apply_freshness(late, VECTORS, CFG, asked)
    assert late[0].freshness == -CFG.freshness_penalty


def test_a_dated_record_of_one_day_stays_one_conversation() -> None:
    # the same two statements imported later with their own times (valid_from before
    # t_created, as a chat loaded turn by turn with its message times): not written as
    # they were said, so the day is one conversation, as before
    cands = [
        _cand("old", "My bike is a road bike.", 0.8, 0.0, created=30.0),
        _cand("new", "My bike is a gravel bike.", 0.5, 2 * SECOND, created=30.0 + SECOND),
        _cand("third", "Lunch is at noon on Fridays", 0.3, SECOND, created=30.0 + 2 * SECOND),
    ]
    apply_freshness(cands, VECTORS, CFG, scoring_terms("What kind of bike do I ride?"))
    assert [c.freshness for c in cands] == [0.0, 0.0, 0.0]


def test_a_later_statement_that_adds_a_query_word_is_another_subject() -> None:
    # the earlier holds none of the query's words, the later one does: different sets
    cands = _three("My dog is a labrador.", "My first pet was a goldfish called Bubbles.")
    apply_freshness(cands, VECTORS, CFG, scoring_terms("What breed is our pet?"))
    assert [c.freshness for c in cands] == [0.0, 0.0, 0.0]


def _state(cands: Sequence[Candidate]) -> list[tuple[str, str, str]]:
    return sorted((c.id, c.freshness.hex(), c.relevance.hex()) for c in cands)


def test_the_rule_is_deterministic_in_any_candidate_order() -> None:
    asked = scoring_terms("What kind of bike do I ride?")
    first = _three("My bike is a road bike.", "My bike is a gravel bike.")
    apply_freshness(first, VECTORS, CFG, asked)
    for order in ([2, 1, 0], [1, 0, 2], [0, 2, 1]):
        again = _three("My bike is a road bike.", "My bike is a gravel bike.")
        apply_freshness([again[k] for k in order], VECTORS, CFG, asked)
        assert _state(again) == _state(first)


def test_recall_ranks_an_update_added_a_second_later_first(
    mem: AgentMemory, clock: ManualClock
) -> None:
    # plain add(), a second apart, no valid_from, no session: the way a script writes
    # (with the 64-dim hashing embedder the two are not similar enough to count as a
    # restatement; they are each other's nearest)
    for text in (
        "I grew up on a farm in Norfolk.",
        "My laptop is a Dell XPS.",
        "I'm scared of heights.",
        "I keep a journal every night.",
        "My laptop is a Lenovo Yoga.",
        "My first concert was Oasis in 1996.",
    ):
        clock.advance(seconds=1)
        mem.add(text)
    clock.advance(seconds=1)
    top = mem.recall("Which laptop do I have?").results[0].memory.content
    assert top == "My laptop is a Lenovo Yoga."


def test_recall_keeps_a_fact_above_its_neighbour_added_a_second_later(
    mem: AgentMemory, clock: ManualClock
) -> None:
    for text in (
        "My sister lives in Leeds.",
        "My brother lives in Glasgow.",
        "Lunch is at noon on Fridays",
    ):
        clock.advance(seconds=1)
        mem.add(text)
    clock.advance(seconds=1)
    top = mem.recall("Where does my sister live?").results[0].memory.content
    assert top == "My sister lives in Leeds."


def test_cosines_of_the_fixture() -> None:
    # the geometry the unit tests above rely on
    assert math.isclose(float(VECTORS["old"] @ VECTORS["new"]), 0.6)
    assert CFG.freshness_cue_similarity < 0.6 < CFG.freshness_similarity


def test_a_chain_of_updates_ends_with_the_latest_first() -> None:
    # red -> green -> black, a second apart: red and green are each other's nearest, the
    # black one is nearer to red than to green. Green updated red, so black, nearest to
    # their chain, updates green too and takes the chain's top rank
    vectors = {
        "red": np.array([1.0, 0.0, 0.0]),
        "green": np.array([0.85, math.sqrt(1 - 0.85**2), 0.0]),
        "black": np.array([0.8, -0.3, math.sqrt(1 - 0.64 - 0.09)]),
    }
    cands = [
        _cand("red", "My phone case is red.", 0.8, 0.0),
        _cand("green", "My phone case is green.", 0.7, SECOND),
        _cand("black", "My phone case is black.", 0.5, 2 * SECOND),
    ]
    apply_freshness(cands, vectors, CFG, scoring_terms("What colour is my phone case?"))
    red, green, black = cands
    assert red.freshness == green.freshness == -CFG.freshness_penalty
    assert black.relevance > max(red.relevance, green.relevance)
    assert black.relevance > 0.8  # above where the chain's first statement stood
