"""Adversarial finding (session 26): verification and export read a tenant's rows and its
audit chain one after the other, so an agent's write landing between the two reads made
them disagree though nothing was tampered with.

- ``verify_audit_chain`` (the CLI's ``verify``, REST ``/audit/verify``, the Evidence
  Board) walked the chain, then read the rows: a memory added in between was reported as
  "written by no entry of this chain: inserted or moved here", one forgotten in between as
  "closed in the store but the chain never closed it": a tamper alarm for a normal write;
- ``export_user`` read the rows, then the chain: the export of a tenant an agent wrote to
  meanwhile held a chain entry for a row it lacked (or a close of a row it held open), and
  its own import refused it as "changed after it was exported".

The interleaving is forced, not timed: the reading thread stops at a chosen store call
until another thread's whole write (an add, or a forget) has committed. The reads now
agree with one state of the tenant: verification says ok and the export imports.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

GUARD = 30.0  # a deadlock guard only: every wait is released by the writer's commit
CTX = AgentContext(agent_id="bot", role="orchestrator", tenant="acme")


class WriteDuring:
    """The store, but each of the reading thread's ``method`` calls after the first ``skip``
    waits until ``write`` has run to its commit in another thread (inside a transaction of
    the reader the write cannot commit before the reader's end, so it is only started)."""

    def __init__(self, inner: Any, method: str, write: Callable[[], None], skip: int) -> None:
        self.inner = inner
        self.method = method
        self.write = write
        self.skip = skip
        self.reader = threading.current_thread()
        self.writers: list[threading.Thread] = []
        self.inside = 0  # the reader's open store transactions
        self.waited = 0  # writes started while the reader held a transaction

    @contextmanager
    def transaction(self) -> Iterator[None]:
        reader = threading.current_thread() is self.reader
        self.inside += reader
        try:
            with self.inner.transaction():
                yield
        finally:
            self.inside -= reader

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name != self.method or threading.current_thread() is not self.reader:
            return attr

        def held(*args: Any, **kwargs: Any) -> Any:
            self.skip -= 1
            if self.skip >= 0:
                return attr(*args, **kwargs)
            writer = threading.Thread(target=self.write)
            self.writers.append(writer)
            writer.start()
            self.waited += bool(self.inside)
            if not self.inside:
                writer.join(GUARD)
                assert not writer.is_alive(), "the write did not commit"
            return attr(*args, **kwargs)

        return held

    def finish(self) -> None:
        for writer in self.writers:
            writer.join(GUARD)
            assert not writer.is_alive()


def _memory(tmp_path: Path) -> tuple[AgentMemory, str]:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    first = mem.add("Ann likes tea", context=CTX)
    return mem, first.id


def _write(mem: AgentMemory, first: str, kind: str) -> Callable[[], None]:
    """Another agent's write: a new memory each time, or the first memory forgotten (once:
    a forget of a forgotten memory is refused and changes nothing)."""
    counter = iter(range(1000))

    def write() -> None:
        if kind == "add":
            mem.add(f"Bob likes coffee {next(counter)}", context=CTX)
        elif mem.get(first, context=CTX).t_expired is None:
            mem.forget(first, reason="done with it", context=CTX)

    return write


# where the write lands: at verification's second read of the chain head (between the
# walk and the rows) and every later one; at the export's read of the entities (between
# its rows and its chain)
@pytest.mark.parametrize("write", ["add", "forget"])
def test_a_write_during_verification_is_no_tampering(tmp_path: Path, write: str) -> None:
    mem, first = _memory(tmp_path)
    inner = mem.store
    hold = WriteDuring(inner, "audit_head", _write(mem, first, write), skip=1)
    mem.store = hold  # type: ignore[assignment]
    try:
        report = mem.verify_audit_chain("acme", context=CTX)
    finally:
        mem.store = inner
    hold.finish()
    assert report.ok, [p.message for p in report.problems]
    if write == "add":  # a write at every read of the head: the reads ended in one transaction
        assert hold.waited
    assert mem.verify_audit_chain("acme", context=CTX).ok
    mem.close()


@pytest.mark.parametrize("write", ["add", "forget"])
def test_an_export_taken_during_a_write_imports(tmp_path: Path, write: str) -> None:
    mem, first = _memory(tmp_path)
    inner = mem.store
    hold = WriteDuring(inner, "list_entities", _write(mem, first, write), skip=0)
    mem.store = hold  # type: ignore[assignment]
    try:
        data = mem.export_user("acme", context=CTX)
    finally:
        mem.store = inner
    hold.finish()
    exported = {m["id"]: m["status"] for m in data["memories"]}
    assert mem.purge_user("acme", reason="moving the tenant", context=CTX).ok
    counts = mem.import_user(data, context=CTX)
    assert counts["memories"] == len(exported)
    restored = mem.list(status="all", context=CTX)
    assert {m.id: m.status.value for m in restored} == exported
    assert mem.verify_audit_chain("acme", context=CTX).ok
    mem.close()


def test_a_write_while_the_audit_page_is_read_is_no_tampering(tmp_path: Path) -> None:
    """The newest audit page (REST /audit/page, the Evidence Board) read the head record,
    then the newest entry: an entry appended in between was reported as "the chain holds
    entries up to seq 2 that its head record (1) never recorded"."""
    mem, first = _memory(tmp_path)
    inner = mem.store
    hold = WriteDuring(inner, "last_audit", _write(mem, first, "add"), skip=0)
    mem.store = hold  # type: ignore[assignment]
    try:
        page = mem.audit_page(context=CTX)
    finally:
        mem.store = inner
    hold.finish()
    assert page.problems == [], [p.message for p in page.problems]
    assert [e.seq for e in page.entries] == sorted((e.seq for e in page.entries), reverse=True)
    mem.close()
