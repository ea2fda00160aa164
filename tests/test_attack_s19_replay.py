"""Session 19 attack battery: replays (``as_of``) that saw rows written after the instant.

A short id (the start or end of an id a person copied) was resolved against every row of
the scope, whatever the read's ``as_of``: a replay of ``get`` refused a prefix as
ambiguous because of a row created *after* the instant, although at that instant the
prefix named exactly one memory. A replay must see only what existed then.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import NotFoundError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="a", role="orchestrator", tenant="here", namespace="inbox")


def _memory(folder: Path, clock: ManualClock) -> AgentMemory:
    return AgentMemory(
        folder / "m.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3)
    )


def test_a_prefix_unique_at_as_of_resolves_in_the_replay(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _memory(tmp_path, clock)
    first = mem.add("Ann likes green tea", context=CTX)
    at = from_us(mem.clock.now_us())
    clock.advance(seconds=1)
    later = mem.add("Bob likes coffee", context=CTX)
    prefix = first.id[:8]
    assert later.id.startswith(prefix)  # UUIDv7 ids begin with the milliseconds
    got = mem.get(prefix, as_of=at, context=CTX)
    assert (got.id, got.content) == (first.id, "Ann likes green tea")
    mem.close()


def test_a_suffix_of_a_later_row_is_not_found_in_the_replay(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _memory(tmp_path, clock)
    mem.add("Ann likes green tea", context=CTX)
    at = from_us(mem.clock.now_us())
    clock.advance(seconds=1)
    later = mem.add("Bob likes coffee", context=CTX)
    with pytest.raises(NotFoundError) as caught:
        mem.get(later.id[-8:], as_of=at, context=CTX)
    assert later.id not in str(caught.value)  # the replay does not name a row of its future
    assert mem.get(later.id[-8:], context=CTX).id == later.id  # now it exists
    mem.close()
