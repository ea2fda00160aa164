"""list_page: a total and a cursor that pins the view, in the library and over REST."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from interface_support import keyring, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

ACME = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")
BETA = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="beta")


def seeded(tmp_path: Path) -> tuple[AgentMemory, ManualClock]:
    clock = ManualClock()
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=clock)
    for i in range(5):
        clock.advance(seconds=1)
        mem.add(f"fact number {i}", entity=f"e{i}", category="c", context=ACME)
    return mem, clock


def test_pages_add_up_and_writes_between_pages_do_not_shift_them(tmp_path: Path) -> None:
    mem, clock = seeded(tmp_path)
    everything = [m.id for m in mem.list(context=ACME)]
    first = mem.list_page(limit=2, context=ACME)
    assert first.total == 5 and len(first.memories) == 2 and first.next_cursor

    clock.advance(seconds=1)  # writes after the first page: new rows, one closed
    for i in range(3):
        mem.add(f"later fact {i}", entity=f"late{i}", category="c", context=ACME)
    mem.forget(everything[3], context=ACME)

    seen = [m.id for m in first.memories]
    page = first
    while page.next_cursor:
        page = mem.list_page(limit=2, cursor=page.next_cursor, context=ACME)
        assert page.total == 5 and page.as_of == first.as_of
        seen += [m.id for m in page.memories]
    assert seen == everything  # nothing shifted, repeated or skipped
    fresh = mem.list_page(limit=100, context=ACME)
    assert fresh.total == 7 and fresh.next_cursor is None  # a new listing sees the writes
    mem.close()


def test_cursor_refuses_other_filters_and_damage(tmp_path: Path) -> None:
    mem, _ = seeded(tmp_path)
    cursor = mem.list_page(limit=2, context=ACME).next_cursor
    assert cursor is not None
    with pytest.raises(ValidationError, match="other filters"):
        mem.list_page(limit=2, cursor=cursor, category="other", context=ACME)
    with pytest.raises(ValidationError, match="damaged"):
        mem.list_page(cursor=cursor[:-3] + "AAA", context=ACME)
    with pytest.raises(ValidationError, match="damaged"):
        mem.list_page(cursor="not a cursor!", context=ACME)
    # a cursor carries no data, and another tenant cannot page with it either (a foreign
    # cursor: tests/test_attack_tenants_cursors.py)
    with pytest.raises(ValidationError, match="another tenant"):
        mem.list_page(limit=2, cursor=cursor, context=BETA)
    mem.close()


def test_list_page_over_rest(tmp_path: Path) -> None:
    mem, _ = seeded(tmp_path)
    ring, plain = keyring()
    with running_server(mem, ring) as base:
        client = MemoryClient(base, plain["acme-orchestrator"], context=ACME)
        pages = [client.list_page(limit=3)]
        while pages[-1].next_cursor:
            pages.append(client.list_page(limit=3, cursor=pages[-1].next_cursor))
        assert [len(p.memories) for p in pages] == [3, 2]
        assert {p.total for p in pages} == {5}
        assert [m.id for p in pages for m in p.memories] == [m.id for m in client.list()]
        bad = httpx.post(
            base + "/v1/memories/page",
            json={"cursor": "garbage"},
            headers={"Authorization": f"Bearer {plain['acme-orchestrator']}"},
        )
        assert bad.status_code == 422 and "cursor" in bad.json()["message"]
    mem.close()
