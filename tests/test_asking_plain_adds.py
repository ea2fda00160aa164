"""A memory stored with plain ``add`` whose words end by asking yields like a turn does.

A chat written one ``add()`` per turn has no reply links, but its questions hold the
query's words and no answer all the same (retrieval/neighbours.py ``asking_words``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import RetrievalConfig

T0 = datetime(2025, 5, 8, 13, 56, tzinfo=UTC)
LINES = [
    "Marta (8 May 2025): I heard there was a party at your place. What did you cook for it?",
    "Jonas (8 May 2025): For the party I cooked a big spinach lasagna; everyone took seconds.",
    "Marta (8 May 2025): Sounds lovely. My week was quiet.",
    "Jonas (8 May 2025): Quiet weeks are good too.",
]


def _store(mem: AgentMemory) -> list[str]:
    return [
        mem.add(text, valid_from=T0 + timedelta(seconds=30 * i)).id for i, text in enumerate(LINES)
    ]


def _first(mem: AgentMemory, query: str) -> str:
    return next(r.memory.id for r in mem.recall(query).results if not r.breakdown.synthetic)


def test_a_plain_memory_that_asks_yields_to_the_one_that_answers(mem: AgentMemory) -> None:
    asked, answer = _store(mem)[:2]
    assert _first(mem, "What was cooked for the party?") == answer
    # the question held the query's words: without the step it ranked first
    mem.retrieval_config = RetrievalConfig(asking_weight=0.0)
    assert _first(mem, "What was cooked for the party?") == asked


def test_a_query_about_what_was_asked_keeps_the_question_first(mem: AgentMemory) -> None:
    asked = _store(mem)[0]
    assert _first(mem, "What did Marta ask about the party?") == asked


def test_only_the_memory_that_asks_loses_the_weight(mem: AgentMemory) -> None:
    ids = _store(mem)
    why = {r.memory.id: r.breakdown for r in mem.recall("party lasagna quiet week").results}
    assert why[ids[0]].session == -RetrievalConfig().asking_weight
    others = [why[i].session for i in ids[1:] if i in why]
    assert others and all(s == 0.0 for s in others)
