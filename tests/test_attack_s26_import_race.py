"""Adversarial finding (session 26): an import checked that its tenant held no data, then
embedded every memory, then wrote, and the write did not check again. Two imports of one
export into the same empty tenant (a retried request, two operators, a double click on
the board), or an agent's write landing meanwhile, both passed the check: the tenant then
held every memory twice (a copy into another tenant gets new ids, so nothing collided),
against "import only into an empty tenant".

The interleaving is forced, not timed: the first import stops as it opens its write
transaction until the second import has finished. The second import into the tenant is
now refused (``ConflictError``) by a check made inside the write's transaction, and it
stores nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ConflictError
from attestor_arango.memory import AgentMemory

GUARD = 30.0  # a deadlock guard only: the wait ends when the other call has returned
SOURCE = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")
TARGET = AgentContext(agent_id="orch", role="orchestrator", tenant="copy")


class HeldAtWrite:
    """The store, but the ``first`` thread's outermost transaction opens only once
    ``other`` has returned."""

    def __init__(self, inner: Any, other: Callable[[], None]) -> None:
        self.inner = inner
        self.other = other
        self.first: threading.Thread | None = None
        self.done = threading.Event()
        self.depth = 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        mine = threading.current_thread() is self.first
        if mine and not self.depth and not self.done.is_set():
            runner = threading.Thread(target=self.other)
            runner.start()
            runner.join(GUARD)
            assert not runner.is_alive(), "the other call did not return"
            self.done.set()
        self.depth += mine
        try:
            with self.inner.transaction():
                yield
        finally:
            self.depth -= mine

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _race(tmp_path: Path, other: Callable[[AgentMemory, dict[str, Any]], object]) -> Any:
    """The export of acme imported into tenant copy while ``other`` runs; returns the
    memory, the outcomes (first import, other call) and the export."""
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    for fact in ("Ann likes tea", "Ann lives in Lyon", "Bob likes coffee"):
        mem.add(fact, context=SOURCE)
    data = mem.export_user("acme", context=SOURCE)
    outcome: dict[str, object] = {}

    def run(name: str, call: Callable[[], object]) -> None:
        try:
            outcome[name] = call()
        except ConflictError as exc:
            outcome[name] = exc

    inner = mem.store
    held = HeldAtWrite(inner, lambda: run("other", lambda: other(mem, data)))
    mem.store = held  # type: ignore[assignment]
    first = threading.Thread(
        target=run, args=("first", lambda: mem.import_user(data, context=TARGET))
    )
    held.first = first
    first.start()
    first.join(GUARD)
    assert not first.is_alive()
    mem.store = inner
    return mem, outcome, data


def test_two_imports_into_one_empty_tenant_store_it_once(tmp_path: Path) -> None:
    mem, outcome, data = _race(tmp_path, lambda m, d: m.import_user(d, context=TARGET))
    refused = [v for v in outcome.values() if isinstance(v, ConflictError)]
    assert len(refused) == 1, f"both imports were stored: {outcome}"
    held = mem.list(status="all", context=TARGET)
    assert sorted(m.content for m in held) == sorted(m["content"] for m in data["memories"])
    assert mem.verify_audit_chain("copy", context=TARGET).ok
    mem.close()


def test_an_import_into_a_tenant_written_meanwhile_is_refused(tmp_path: Path) -> None:
    mem, outcome, _ = _race(tmp_path, lambda m, d: m.add("Cy likes mint", context=TARGET))
    assert isinstance(outcome["first"], ConflictError), outcome
    assert [m.content for m in mem.list(status="all", context=TARGET)] == ["Cy likes mint"]
    mem.close()
