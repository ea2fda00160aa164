"""consolidate and reflect read only the newest episodes they look at, not the whole scope.

``recent_episodes`` read every episode of the scope (pages of 500 by offset, texts and all,
kept in one list) to keep the last ``limit``: ``consolidate(limit=1)`` or a read-only
``reflect(store=False)`` (default 500) on a scope of 100,000 rounds loaded all of them for
each call. The store now returns the newest ``limit`` episodes itself
(``list_episodes(..., newest_first=True)``); the answer (oldest first) is unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.ingest.consolidation import recent_episodes
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope


def rounds(mem: AgentMemory, n: int, **kw: Any) -> None:
    for i in range(n):
        mem.ingest_round({"user": f"I visited town number {i} today.", "assistant": "Nice."}, **kw)


@pytest.fixture
def episodes_read(mem: AgentMemory, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    original = mem.store.list_episodes

    def counting(scope: Scope, limit: int, offset: int = 0, **kw: Any) -> list[Any]:
        out = original(scope, limit, offset, **kw)
        read.extend(e.id for e in out)
        return out

    monkeypatch.setattr(mem.store, "list_episodes", counting)
    return read


def test_consolidate_reads_only_the_episodes_it_rereads(
    mem: AgentMemory, episodes_read: list[str]
) -> None:
    rounds(mem, 12)
    every = [e.id for e in mem.store.list_episodes(mem.default_context.scope, 100)]
    episodes_read.clear()
    report = mem.consolidate(limit=2)
    assert report.episodes == 2
    assert episodes_read == every[-2:][::-1]  # newest first, two rows; was all 12


def test_recent_episodes_are_the_newest_oldest_first(mem: AgentMemory) -> None:
    rounds(mem, 10)
    scope = mem.default_context.scope
    every = mem.store.list_episodes(scope, 100)
    assert len(every) == 10
    for limit in (1, 3, 4, 10, 50):
        got, cut = recent_episodes(mem.runtime, scope, limit)
        assert [e.id for e in got] == [e.id for e in every[-limit:]] and not cut


def test_reflect_reads_at_most_its_limit_of_episodes(
    mem: AgentMemory, episodes_read: list[str]
) -> None:
    from attestor_arango.ingest.reflection import reflect

    rounds(mem, 9)
    episodes_read.clear()
    own = mem.default_context
    reader = AgentContext(agent_id="r", role=AgentRole.REVIEWER, tenant=own.tenant,
                          namespace=own.namespace)  # fmt: skip
    result = reflect(mem.runtime, mem.auditor, mem.writer, reader, limit=4, store=False)
    assert result.episodes == 4
    assert len(episodes_read) == 4  # was 9


def test_newest_first_stays_in_the_namespace_and_tenant(mem: AgentMemory) -> None:
    a = AgentContext(agent_id="a", tenant="acme", namespace="crm")
    b = AgentContext(agent_id="b", tenant="acme", namespace="hr")
    g = AgentContext(agent_id="g", tenant="globex", namespace="crm")
    rounds(mem, 2, context=a)
    rounds(mem, 3, context=b)
    rounds(mem, 1, context=g)
    got = mem.store.list_episodes(a.scope, 10, newest_first=True)
    assert len(got) == 2 and {(e.tenant, e.namespace) for e in got} == {("acme", "crm")}
    whole = mem.store.list_episodes(Scope("acme"), 10, newest_first=True)
    assert len(whole) == 5 and {e.tenant for e in whole} == {"acme"}


def test_the_arango_store_sends_the_newest_first_query_with_the_scope() -> None:
    from tests.test_arango_store_unit import RecordingDB, Sent, make_store

    db = RecordingDB()
    store = make_store(db)
    for newest, name in ((True, "episode_list_newest"), (False, "episode_list")):
        with pytest.raises(Sent):
            store.list_episodes(Scope("acme", "ns1"), 4, 2, newest_first=newest)
        assert db.log[-1][1:] == (
            name,
            {"tenant": "acme", "namespace": "ns1", "offset": 2, "limit": 4},
        )
