"""One recall asks SQLite once whether another connection committed (``PRAGMA
data_version``, store/embedded/caches.py ``reading``), and stays exact about what
other connections and processes wrote: a commit that finished before a recall began is
always seen by it, other threads and write transactions check as before."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from attestor_arango.store.embedded.store import SQLiteStore

CTX = AgentContext(agent_id="a", tenant="acme", namespace="n")
WORDS = ["harbour", "lantern", "violin", "orchard", "glacier", "saddle"]


def _mem(path: Path, clock: ManualClock, seed: int = 7) -> AgentMemory:
    return AgentMemory(path, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(seed))


@contextmanager
def _checks(store: SQLiteStore) -> Iterator[list[str]]:
    """The ``PRAGMA data_version`` statements the store's connection runs meanwhile."""
    seen: list[str] = []
    store.db.conn.set_trace_callback(
        lambda sql: seen.append(sql) if "data_version" in sql else None
    )
    try:
        yield seen
    finally:
        store.db.conn.set_trace_callback(None)


def _filled(path: Path, clock: ManualClock) -> AgentMemory:
    mem = _mem(path, clock)
    for i in range(30):
        clock.advance(seconds=1)
        mem.add(f"{WORDS[i % 6]} note {i} about the {WORDS[(i + 1) % 6]}", context=CTX)
    return mem


def test_a_recall_checks_for_other_writers_once(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _filled(tmp_path / "m.db", clock)
    mem.recall("violin orchard", context=CTX)  # caches loaded
    assert isinstance(mem.store, SQLiteStore)
    with _checks(mem.store) as seen:
        found = mem.recall("lantern harbour note", context=CTX)
    assert found.results
    assert len(seen) == 1  # was one per store call: seven
    mem.close()


def test_a_commit_of_another_connection_before_a_recall_is_seen(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _filled(tmp_path / "m.db", clock)
    first = mem.recall("glacier saddle", context=CTX)
    gone = first.results[0].memory.id
    other = _mem(tmp_path / "m.db", clock, seed=8)
    other.forget(gone, context=CTX)
    added = other.add("glacier saddle glacier saddle written elsewhere", context=CTX).id
    other.close()
    again = [r.memory.id for r in mem.recall("glacier saddle", context=CTX).results]
    assert gone not in again
    assert again[0] == added
    mem.close()


def test_inside_one_request_other_threads_still_check(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _filled(tmp_path / "m.db", clock)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ids = [r.memory.id for r in mem.recall("violin", context=CTX).results]
    scope = Scope("acme", "n")
    with store.reads_together(), _checks(store) as seen:
        store.get_memories(scope, ids)  # this thread: checked as the request began
        assert seen == []
        worker = threading.Thread(target=store.get_memories, args=(scope, ids))
        worker.start()
        worker.join()
        assert len(seen) == 1  # the other thread checked
    with _checks(store) as seen:
        store.get_memories(scope, ids)  # the request ended: checked again
    assert len(seen) == 1
    mem.close()


def test_a_write_inside_one_request_still_sees_other_commits(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _filled(tmp_path / "m.db", clock)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    scope = Scope("acme", "n")
    target = mem.recall("orchard", context=CTX).results[0].memory.id
    with store.reads_together():
        other = SQLiteStore(tmp_path / "m.db")
        other.close_memory(scope, target, clock.now_us(), "archived", None)
        other.close()
        with store.transaction():  # under the write lock: the other commit is seen
            pass
        assert store.get_memories(scope, [target])[target].status == "archived"
    mem.close()
