"""Every read takes the same temporal arguments: time_window on get, timeline and
current_facts as on list, search and recall (in the library and over REST)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from interface_support import running_server

from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import NotFoundError
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="n")
SPRING = ("2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z")
WINTER = ("2025-12-01T00:00:00Z", "2026-02-01T00:00:00Z")


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[AgentMemory]:
    memory = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(), context=CTX)
    yield memory
    memory.close()


def fill(mem: AgentMemory) -> tuple[str, str]:
    lisbon = mem.add(
        "Ana lives in Lisbon",
        entity="Ana",
        category="city",
        valid_from="2025-11-01T00:00:00Z",
        valid_until="2026-02-15T00:00:00Z",
    )
    porto = mem.add(
        "Ana works in Porto",
        entity="Ana",
        category="work",
        valid_from="2026-02-15T00:00:00Z",
    )
    return lisbon.id, porto.id


def test_get_timeline_and_current_facts_take_a_time_window(mem: AgentMemory) -> None:
    lisbon, porto = fill(mem)
    assert mem.get(lisbon, time_window=WINTER).id == lisbon
    with pytest.raises(NotFoundError, match="time_window"):
        mem.get(lisbon, time_window=SPRING)
    assert [m.id for m in mem.timeline("Ana", time_window=SPRING)] == [porto]
    assert [m.id for m in mem.timeline("Ana", time_window=WINTER)] == [lisbon]
    assert [m.id for m in mem.current_facts(entity="Ana", time_window=SPRING)] == [porto]
    assert [m.id for m in mem.current_facts(entity="Ana", time_window=WINTER)] == [lisbon]
    # the same window means the same thing to list
    assert [m.id for m in mem.list(entity="Ana", time_window=SPRING)] == [porto]


def test_time_window_over_rest(mem: AgentMemory) -> None:
    lisbon, porto = fill(mem)
    with running_server(mem, None) as url, MemoryClient(url, context=CTX) as client:
        assert client.get(lisbon, time_window=WINTER).id == lisbon
        with pytest.raises(NotFoundError):
            client.get(lisbon, time_window=SPRING)
        assert [m.id for m in client.timeline("Ana", time_window=SPRING)] == [porto]
        assert [m.id for m in client.current_facts(entity="Ana", time_window=WINTER)] == [lisbon]
