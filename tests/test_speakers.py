"""The question's speaker (retrieval/speakers.py): what a named person said is in their turns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import RetrievalConfig
from attestor_arango.retrieval.speakers import query_subject

T0 = datetime(2025, 5, 8, 13, 56, tzinfo=UTC)
SPEAKERS = {"gina", "jon", "mary jane"}


@pytest.mark.parametrize(
    ("query", "subject"),
    [
        ("What does Gina say to Jon about the opening?", "gina"),
        ("What did Jon say about Gina's progress with her store?", "jon"),  # owner, not speaker
        ("What do Gina's kids like?", "gina"),  # only a possessive: the owner tells it
        ("How do Jon and Gina both like to destress?", None),  # a pair: no single subject
        ("What have Gina or Jon painted?", None),
        ("What did Mary Jane bring to the party?", "mary jane"),  # a two-word name
        ("What did the plumber say?", None),  # no speaker named
    ],
)
def test_the_subject_is_the_first_speaker_named_who_is_not_an_owner(
    query: str, subject: str | None
) -> None:
    assert query_subject(query, SPEAKERS) == subject


def test_a_name_that_is_not_a_speaker_is_never_the_subject() -> None:
    assert query_subject("What did Jon tell Gina?", {"gina"}) == "gina"


def _turns(mem: AgentMemory) -> list:
    # both say the same words about the trip, so the lanes cannot tell them apart
    lines = [
        ("Gina", "Hi Jon, did you hear about the trip to the coast?"),
        ("Jon", "Gina, the trip to the coast sounds lovely, I would bring my camera."),
        ("Gina", "Jon, the trip to the coast sounds lovely, I would bring my camera."),
        ("Jon", "See you there!"),
    ]
    turns = [
        {"speaker": who, "text": text, "session_id": "S1",
         "timestamp": T0 + timedelta(seconds=30 * i)}
        for i, (who, text) in enumerate(lines)
    ]  # fmt: skip
    return mem.add_turns(turns)


def test_turns_of_the_person_asked_about_rank_above_the_other_speakers(mem: AgentMemory) -> None:
    turns = _turns(mem)
    jon, gina = turns[1], turns[2]
    for query, want, other in (
        ("What would Gina tell Jon to bring to the coast trip?", gina, jon),
        ("What would Jon tell Gina to bring to the coast trip?", jon, gina),
    ):
        ranked = [r.memory.id for r in mem.recall(query).results]
        assert ranked.index(want.id) < ranked.index(other.id), query
    # switched off, the subject gains nothing
    mem.retrieval_config = RetrievalConfig(speaker_weight=0.0)
    off = {r.memory.id: r.breakdown for r in mem.recall("What would Gina bring?").results}
    on_cfg = RetrievalConfig()
    mem.retrieval_config = on_cfg
    on = {r.memory.id: r.breakdown for r in mem.recall("What would Gina bring?").results}
    assert on[gina.id].graph_bonus == pytest.approx(
        off[gina.id].graph_bonus + on_cfg.speaker_weight
    )
    assert on[jon.id].graph_bonus == off[jon.id].graph_bonus


def test_plain_memories_are_untouched(mem: AgentMemory) -> None:
    """Only turns have a speaker: a memory whose entity is the subject gains nothing more."""
    mem.add("Gina would bring her camera to the coast trip.", entity="Gina")
    mem.add("Jon would bring his camera to the coast trip.", entity="Jon")
    query = "What would Gina bring to the coast trip?"
    on = [(r.memory.id, r.score) for r in mem.recall(query).results]
    mem.retrieval_config = RetrievalConfig(speaker_weight=0.0)
    off = [(r.memory.id, r.score) for r in mem.recall(query).results]
    assert on == off
