"""A near twin about another subject is not an update.

"Melanie: I'm a fan of Bach" and, later, "Jordan: I'm a fan of Bach" are near twins
(cosine at or above ``freshness_similarity``), so freshness used to take the later one
for an update of the earlier and lift it above it, even when the question names
Melanie. A store that holds many people's statements (a shared memory, or the copies
of one sentence under other names in the latency benchmark's corpus) then answers a
question about one person with another's words. The twin must still hold every word
of the question the earlier one holds, unless it announces a change ("now", "moved").
"""

from __future__ import annotations

import numpy as np
from retrieval_fakes import mem

from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.freshness import apply_freshness
from attestor_arango.text.stemming import scoring_terms

CFG = RetrievalConfig()

# the earlier statement, its later twin (cosine 0.96: above freshness_similarity) and a
# far third candidate
VECTORS = {
    "old": np.array([1.0, 0.0, 0.0]),
    "new": np.array([0.96, 0.28, 0.0]),
    "third": np.array([0.0, 0.0, 1.0]),
}


def _cands(old: str, new: str, new_day: float = 40.0) -> list[Candidate]:
    out = []
    for mid, text, relevance, day in (
        ("old", old, 0.8, 0.0),
        ("new", new, 0.75, new_day),
        ("third", "Lunch is at noon on Fridays", 0.3, 1.0),
    ):
        c = Candidate(memory=mem(mid, text, day=day))
        c.rrf_norm = relevance
        c.compute_relevance()
        out.append(c)
    return out


def test_the_fixture_pair_is_a_near_twin() -> None:
    cos = float(VECTORS["old"] @ VECTORS["new"])
    assert cos >= CFG.freshness_similarity


def test_a_twin_that_drops_the_asked_name_does_not_take_over() -> None:
    cands = _cands(
        "Melanie: I'm a fan of Bach and Mozart.", "Jordan: I'm a fan of Bach and Mozart."
    )
    apply_freshness(cands, VECTORS, CFG, scoring_terms("Which composers does Melanie enjoy?"))
    assert [c.freshness for c in cands] == [0.0, 0.0, 0.0]
    assert cands[0].relevance > cands[1].relevance


def test_a_twin_that_keeps_the_asked_words_is_still_an_update() -> None:
    cands = _cands("My bike is a road bike.", "My bike is a gravel bike.")
    apply_freshness(cands, VECTORS, CFG, scoring_terms("What kind of bike do I ride?"))
    assert cands[0].freshness == -CFG.freshness_penalty
    assert cands[1].relevance > cands[0].relevance


def test_a_twin_that_announces_a_change_is_an_update_without_the_word() -> None:
    # "now" is a change cue: the change is said, so the dropped word does not decide
    cands = _cands("Melanie's bike is a road bike.", "The bike is now a gravel bike.")
    apply_freshness(cands, VECTORS, CFG, scoring_terms("What bike does Melanie ride?"))
    assert cands[0].freshness == -CFG.freshness_penalty


def test_without_the_query_words_a_twin_is_an_update_as_before() -> None:
    # callers that pass no query terms keep the similarity rule alone
    cands = _cands(
        "Melanie: I'm a fan of Bach and Mozart.", "Jordan: I'm a fan of Bach and Mozart."
    )
    apply_freshness(cands, VECTORS, CFG)
    assert cands[0].freshness == -CFG.freshness_penalty
