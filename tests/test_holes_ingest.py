"""Concurrent ingest of one subject (issue 16, finding 9): rounds are decided under the
write lock, so a single-valued fact ends with exactly one current value."""

from __future__ import annotations

import threading
from pathlib import Path

from attestor_arango.clock import OPEN, SystemClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")
CITIES = ["Paris", "Lyon", "Berlin", "Madrid", "Oslo", "Rome", "Vienna", "Prague"]


def test_concurrent_rounds_leave_one_current_home(tmp_path: Path) -> None:
    mems = [
        AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64), clock=SystemClock())
        for _ in range(2)
    ]
    start = threading.Barrier(len(CITIES))
    errors: list[BaseException] = []

    def ingest(i: int) -> None:
        start.wait()
        try:
            mems[i % 2].ingest_round({"user": f"I live in {CITIES[i]}."}, context=CTX)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ingest, args=(i,)) for i in range(len(CITIES))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    current = [m for m in mems[0].current_facts(context=CTX) if "live in" in m.content]
    view = TemporalView(as_of=OPEN - 1, include_closed=True)
    rows = mems[0].store.list_memories(Scope("acme"), MemoryFilter(), view, 1000, 0)
    history = [m for m in rows if "live in" in m.content]
    for mem in mems:
        mem.close()
    assert len(history) == len(CITIES)  # every round was applied
    assert len(current) == 1, [m.content for m in current]
