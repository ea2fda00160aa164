"""A write's same-words check reads the open rows of its content hash, not every version.

Before each write the path asks for the oldest row with the same content hash the view
sees (``list_memories(content_hash=...)``: the same words again are the same memory or a
new version of it). The index held (tenant, content_hash) only, so SQLite read every row
ever written with those words, closed versions included, to keep the open ones: a tenant
whose users said "ok" 10,000 times paid for all 10,000 rows on the next "ok" (one
add_turns call of 10,000 "ok" turns took 32.8 s against 3.1 s for 2,000). Schema 11
adds t_expired to the index, so the view's open-row bound is sought.
"""

from __future__ import annotations

from pathlib import Path

from attestor_arango.clock import OPEN
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded import sql
from attestor_arango.store.embedded.store import SQLiteStore

T0 = 1_800_000_000_000_000


def test_the_same_words_lookup_seeks_open_rows(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    params = {"tenant": "acme", "namespace": "ns1", "content_hash": "h", "entity": None,
              "category": None, "tags": None, "status": None, "as_of": T0,
              "expired_after": T0, "w_start": -1, "w_end": OPEN + 1, "limit": 1,
              "offset": 0}  # fmt: skip
    with store.db.lock:
        plan = store.db.execute("EXPLAIN QUERY PLAN " + sql.LIST_BY_HASH, params).fetchall()
    store.close()
    steps = [str(r[3]) for r in plan if str(r[3]).startswith("SEARCH memories")]
    assert steps and "tenant=? AND content_hash=? AND t_expired>?" in steps[0], plan


def _steps_of_one_more(mem: AgentMemory, text: str) -> int:
    """SQLite VM steps of one more turn saying ``text`` (no timing: a count of work)."""
    conn = mem.store.db.conn  # type: ignore[attr-defined]
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn.set_progress_handler(count, 100)
    try:
        mem.add_turns([{"speaker": "user", "text": text, "session_id": "last"}])
    finally:
        conn.set_progress_handler(None, 0)
    return steps


def test_the_next_ok_costs_the_same_after_many(tmp_path: Path) -> None:
    costs = []
    for n in (50, 800):
        mem = AgentMemory(tmp_path / f"m{n}.db", embedder=HashingEmbedder(64))
        try:
            mem.add_turns([{"speaker": "user", "text": "ok", "session_id": f"s{i}"}
                           for i in range(n)])  # fmt: skip
            assert mem.stats().superseded == n - 1  # each "ok" is a new version of the last
            costs.append(_steps_of_one_more(mem, "ok"))
        finally:
            mem.close()
    assert costs[1] < 2 * costs[0], costs  # grew with the 800 closed versions before
