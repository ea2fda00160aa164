"""``max_writes_per_agent`` holds for threads of one process sharing a context's usage.

The limit was checked inside the write's transaction but counted after it ended, so a
second writer (a REST request for the same key and agent on another worker thread) that
checked between the first's commit and its count saw the old count and wrote too: two
writes under a limit of one. The interleaving is forced here, not timed: the first
writer is held just after its transaction ends until the second has made its check.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import QuotaExceededError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

GUARD = 30.0  # a deadlock guard only: every wait is released by the other writer's step


class HeldAfterCommit:
    """The store, but the ``first`` thread's transaction, once ended, waits until the
    second writer has made its quota check (reached ``get_quota``) or given up."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.first: threading.Thread | None = None
        self.second_checked = threading.Event()
        self.first_inside = threading.Event()
        self.depth = 0  # of the first thread's transactions (the audit chain nests one)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.depth += threading.current_thread() is self.first
        try:
            with self.inner.transaction():
                if threading.current_thread() is self.first:
                    self.first_inside.set()
                yield
        finally:
            self.depth -= threading.current_thread() is self.first
        if threading.current_thread() is self.first and not self.depth:  # the outermost
            assert self.second_checked.wait(GUARD), "the second writer never checked"

    def get_quota(self, scope: Scope) -> int | None:
        if threading.current_thread() is not self.first:
            self.second_checked.set()
        return self.inner.get_quota(scope)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_two_threads_of_one_agent_cannot_write_past_its_limit(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    ctx = AgentContext(agent_id="bot", role="executor", tenant="acme", max_writes_per_agent=1)
    held = HeldAfterCommit(mem.store)
    mem.store = held  # type: ignore[assignment]
    outcome: dict[str, object] = {}

    def write(name: str, content: str) -> None:
        try:
            outcome[name] = mem.add(content, context=ctx).id
        except QuotaExceededError as exc:
            outcome[name] = exc
        finally:
            if name == "second":
                held.second_checked.set()  # refused before its check: let the first go

    first = threading.Thread(target=write, args=("first", "Ann likes tea"))
    held.first = first
    first.start()
    # the second writer starts once the first is inside its transaction: the store's lock
    # orders the second's after it, the hold puts the second's check before the first's
    # count would have been made
    assert held.first_inside.wait(GUARD)
    second = threading.Thread(target=write, args=("second", "Bob likes coffee"))
    second.start()
    first.join(GUARD)
    second.join(GUARD)
    assert not first.is_alive() and not second.is_alive()
    mem.store = held.inner
    stored = mem.list(context=ctx)
    refused = [v for v in outcome.values() if isinstance(v, QuotaExceededError)]
    assert len(stored) == 1, f"two writes under a limit of one: {outcome}"
    assert len(refused) == 1 and ctx.writes_made == 1
    mem.close()


def test_a_write_that_fails_after_its_check_gives_its_count_back(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    ctx = AgentContext(agent_id="bot", role="executor", tenant="acme", max_writes_per_agent=1)
    inner = mem.store

    class Failing:
        def insert_memory(self, *args: Any) -> None:
            raise RuntimeError("injected: the insert fails after the check")

        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

    mem.store = Failing()  # type: ignore[assignment]
    with pytest.raises(RuntimeError):
        mem.add("Ann likes tea", context=ctx)
    mem.store = inner
    assert ctx.writes_made == 0 and mem.list(context=ctx) == []
    mem.add("Ann likes tea", context=ctx)  # the limit's one write is still there
    assert ctx.writes_made == 1
    mem.close()
