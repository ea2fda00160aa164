"""Session 19 attack battery: a ``list_page`` cursor digested ``as_of`` (and ``time_window``)
as the caller spelled it.

Two spellings of one instant (``...Z`` and ``...+00:00``, a datetime, epoch seconds) named
the same view, yet a cursor made with one was refused with the other as "made for other
filters": a client that formats times its own way could not page a replay. The digest now
holds each time as the microseconds it means; other filters still refuse the cursor.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="inbox")
AT = datetime(2026, 1, 1, 0, 0, 5, tzinfo=UTC)
SPELLINGS = ("2026-01-01T00:00:05Z", "2026-01-01T00:00:05+00:00", AT, AT.timestamp())
WINDOW = ("2025-01-01T00:00:00Z", "2027-01-01T00:00:00Z")
WINDOWS = (WINDOW, ("2025-01-01T00:00:00+00:00", datetime(2027, 1, 1, tzinfo=UTC)))


def _seeded(folder: Path) -> AgentMemory:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    mem = AgentMemory(folder / "m.db", embedder=HashingEmbedder(64), clock=clock)
    for i in range(4):
        clock.advance(seconds=1)
        mem.add(f"fact number {i}", context=CTX)
    clock.advance(seconds=10)
    mem.add("a fact after the replay's instant", context=CTX)
    return mem


@pytest.mark.parametrize("first", SPELLINGS)
@pytest.mark.parametrize("then", SPELLINGS)
def test_any_spelling_of_the_same_as_of_pages_on(
    tmp_path: Path, first: str | datetime | float, then: str | datetime | float
) -> None:
    mem = _seeded(tmp_path)
    page = mem.list_page(limit=2, as_of=first, context=CTX)
    assert page.next_cursor is not None
    rest = mem.list_page(limit=2, as_of=then, cursor=page.next_cursor, context=CTX)
    assert [m.content for m in page.memories + rest.memories] == [
        f"fact number {i}" for i in range(4)
    ]
    mem.close()


@pytest.mark.parametrize("then", WINDOWS)
def test_any_spelling_of_the_same_window_pages_on(
    tmp_path: Path, then: tuple[object, object]
) -> None:
    mem = _seeded(tmp_path)
    page = mem.list_page(limit=2, time_window=WINDOW, context=CTX)
    assert page.next_cursor is not None
    rest = mem.list_page(limit=3, time_window=then, cursor=page.next_cursor, context=CTX)  # type: ignore[arg-type]
    assert len(page.memories + rest.memories) == 5
    mem.close()


def test_another_instant_still_refuses_the_cursor(tmp_path: Path) -> None:
    mem = _seeded(tmp_path)
    page = mem.list_page(limit=2, as_of=AT, context=CTX)
    assert page.next_cursor is not None
    with pytest.raises(ValidationError, match="other filters"):
        mem.list_page(limit=2, as_of="2026-01-01T00:00:04Z", cursor=page.next_cursor, context=CTX)
    with pytest.raises(ValidationError, match="other filters"):
        mem.list_page(limit=2, cursor=page.next_cursor, context=CTX)  # no as_of: now
    mem.close()
