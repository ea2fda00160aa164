"""AgentMemory.count (the totals of list) and get_episode (evidence read back verbatim)."""

from __future__ import annotations

import pytest

from attestor_arango.clock import ManualClock, iso
from attestor_arango.context import AgentContext
from attestor_arango.errors import AccessDenied, NotFoundError, ValidationError
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="p1", role="planner", tenant="acme")
B = AgentContext(agent_id="p1", role="planner", tenant="beta")


def test_count_is_the_total_list_pages_through(mem: AgentMemory, clock: ManualClock) -> None:
    for i in range(7):
        mem.add(f"fact {i}", entity="e" if i % 2 else "f", category=f"c{i}", context=A)
        clock.advance(seconds=1)
    middle = iso(clock.now_us())
    clock.advance(seconds=1)
    mem.add("fact new", entity="e", category="c1", context=A)  # supersedes "fact 1"
    mem.add("beta only", entity="e", context=B)
    for kwargs in ({}, {"entity": "e"}, {"status": "all"}, {"status": "superseded"}):
        listed = mem.list(limit=1000, context=A, **kwargs)  # type: ignore[arg-type]
        assert mem.count(context=A, **kwargs) == len(listed), kwargs  # type: ignore[arg-type]
    assert mem.count(context=A) == 7
    assert mem.count(status="all", context=A) == 8
    assert mem.count(as_of=middle, context=A) == 7
    assert mem.count(status="superseded", as_of=middle, context=A) == 0
    assert mem.count(context=B) == 1
    assert mem.count(namespace="elsewhere", context=A) == 0
    with pytest.raises(ValidationError):
        mem.count(status="gone", context=A)


def test_get_episode_returns_the_round_verbatim_inside_its_scope(mem: AgentMemory) -> None:
    said = "My name is Bob and I work at Initech; <b>not markup</b>"
    result = mem.ingest_round({"user": said, "assistant": "Noted."}, context=A)
    episode = mem.get_episode(result.episode.id, context=A)
    assert (episode.user_text, episode.assistant_text) == (said, "Noted.")
    assert any(m.provenance.source_episode_id == episode.id for m in result.memories)
    with pytest.raises(NotFoundError):
        mem.get_episode(result.episode.id, context=B)
    other_ns = AgentContext(agent_id="p1", role="planner", tenant="acme", namespace="other")
    with pytest.raises(NotFoundError):
        mem.get_episode(result.episode.id, context=other_ns)
    with pytest.raises(ValidationError):
        mem.get_episode("", context=A)


def test_reads_need_a_context_that_may_read(mem: AgentMemory) -> None:
    nobody = AgentContext(agent_id="m", role="monitor", tenant="acme")
    assert mem.count(context=nobody) == 0  # monitors read
    with pytest.raises((AccessDenied, NotFoundError)):
        mem.get_episode("x", context=nobody)
