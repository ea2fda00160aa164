"""The same words said again without a valid_from: news again only after something else was
said about the subject.

``add(text)`` of words already stored returns the stored row (dedup). After "A", "B", "A
again" written seconds apart, that made the middle "B" the newest statement about the
subject. Now a repeat whose nearest other memory was said after the stored row (and is at
least ``freshness_cue_similarity`` close) is a new version of that row, as a repeat with a
later ``valid_from`` always was; a repeat of what was last said stays the same memory.
"""

from __future__ import annotations

from attestor_arango.clock import ManualClock
from attestor_arango.memory import AgentMemory
from attestor_arango.models import MemoryStatus

A = "My laptop is a Dell XPS."
B = "My laptop is a Lenovo Yoga."


def _say(mem: AgentMemory, clock: ManualClock, text: str) -> str:
    clock.advance(seconds=1)
    return mem.add(text).id


def test_a_repeat_after_a_differing_statement_is_said_again(
    mem: AgentMemory, clock: ManualClock
) -> None:
    first = _say(mem, clock, A)
    _say(mem, clock, B)
    again = _say(mem, clock, A)
    assert again != first
    row = mem.get(again)
    assert row.supersedes == first and row.content == A
    assert mem.get(first).status == MemoryStatus.SUPERSEDED
    clock.advance(seconds=1)
    assert mem.recall("Which laptop do I have?").results[0].memory.id == again


def test_a_plain_repeat_stays_the_same_memory(mem: AgentMemory, clock: ManualClock) -> None:
    first = _say(mem, clock, A)
    assert _say(mem, clock, A) == first
    # something unrelated said since is not about the subject: still the same memory
    _say(mem, clock, "Our standup is at half past nine.")
    assert _say(mem, clock, A) == first
    # ... nor is a statement said before it
    _say(mem, clock, B)
    second = _say(mem, clock, A)
    assert second != first
    assert _say(mem, clock, A) == second
    assert len(mem.list(status="all")) == 4


def test_replay_before_the_repeat_is_unchanged(mem: AgentMemory, clock: ManualClock) -> None:
    first = _say(mem, clock, A)
    _say(mem, clock, B)
    clock.advance(seconds=1)
    before = mem.recall("Which laptop do I have?")
    listed = [m.id for m in mem.list()]
    _say(mem, clock, A)
    replay = mem.recall("Which laptop do I have?", as_of=before.as_of)
    assert [r.memory.id for r in replay.results] == [r.memory.id for r in before.results]
    assert [r.score for r in replay.results] == [r.score for r in before.results]
    assert [m.id for m in mem.list(as_of=before.as_of)] == listed
    assert first in listed
