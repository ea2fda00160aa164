"""What every write reads (embedding space, quota, audit head) is kept between writes, and
never outlives a change: another connection's commit, this connection's rollback, a purge."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import QuotaExceededError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import EmbeddingSpace

ORCH = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="p1")
OTHER = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="beta", namespace="p1")


def _open(path: Path, seed: int) -> AgentMemory:
    return AgentMemory(
        path, embedder=HashingEmbedder(), clock=ManualClock(), ids=SeededIdSource(seed)
    )


def _statements(mem: AgentMemory, text: str) -> list[str]:
    seen: list[str] = []
    conn = mem.store.db.conn  # type: ignore[attr-defined]
    conn.set_trace_callback(seen.append)
    try:
        mem.add(text, context=ORCH)
    finally:
        conn.set_trace_callback(None)
    return [" ".join(s.split()) for s in seen if not s.startswith("--")]


def test_a_steady_add_does_not_read_the_space_quota_or_audit_head_again(tmp_path: Path) -> None:
    mem = _open(tmp_path / "s.db", 1)
    mem.set_quota("acme", daily_writes=100, context=ORCH)
    mem.add("the first fact", context=ORCH)  # records the space: the tenant's caches reset
    mem.add("the second fact", context=ORCH)
    statements = _statements(mem, "the third fact")
    reads = [s for s in statements if s.startswith("SELECT")]
    assert not [s for s in reads if "embedding_spaces" in s or "FROM quotas" in s], reads
    assert not [s for s in reads if "FROM audit " in s], reads
    assert mem.verify_audit_chain(context=ORCH).ok
    mem.close()


def test_another_connections_quota_and_chain_are_seen_by_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    one, two = _open(path, 1), _open(path, 2)
    one.add("fact one", context=ORCH)
    two.set_quota("acme", daily_writes=3, context=ORCH)  # another connection, same file
    two.add("fact two", context=ORCH)
    one.add("fact three", context=ORCH)  # its chain head moved: the link must follow it
    with pytest.raises(QuotaExceededError):
        one.add("fact four", context=ORCH)
    report = one.verify_audit_chain(context=ORCH)
    assert report.ok, report
    one.close()
    two.close()


def test_a_rolled_back_change_leaves_the_committed_values(tmp_path: Path) -> None:
    mem = _open(tmp_path / "s.db", 1)
    mem.add("fact one", context=ORCH)
    store, scope = mem.store, Scope("acme")
    head = store.last_audit(scope)
    with pytest.raises(RuntimeError), store.transaction():
        store.set_quota(scope, 0)
        store.set_embedding_space(scope, EmbeddingSpace("other", 3))
        assert store.get_quota(scope) == 0  # the transaction sees its own change
        assert store.get_embedding_space(scope) == EmbeddingSpace("other", 3)
        raise RuntimeError("abandoned")
    assert store.get_quota(scope) is None
    assert store.get_embedding_space(scope) == EmbeddingSpace(
        HashingEmbedder().name, HashingEmbedder().dimension
    )
    assert store.last_audit(scope) == head
    mem.add("fact two", context=ORCH)  # not refused by the rolled-back quota of 0
    assert mem.verify_audit_chain(context=ORCH).ok
    mem.close()


def test_kept_values_are_per_tenant_and_go_with_a_purge(tmp_path: Path) -> None:
    mem = _open(tmp_path / "s.db", 1)
    mem.set_quota("acme", daily_writes=2, context=ORCH)
    mem.add("acme fact", context=ORCH)
    mem.add("beta fact", context=OTHER)
    mem.add("beta fact two", context=OTHER)
    mem.add("beta fact three", context=OTHER)  # acme's quota does not apply to beta
    store = mem.store
    for collection in store.purge_collections():
        store.purge_collection(Scope("acme"), collection)
    assert store.get_quota(Scope("acme")) == 2  # the operator's limit outlives a purge
    assert store.get_embedding_space(Scope("acme")) is None
    assert store.last_audit(Scope("beta")).seq == 3  # type: ignore[union-attr]
    mem.close()


def test_a_direct_edit_of_the_file_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    mem = _open(path, 1)
    mem.add("fact one", context=ORCH)
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO quotas (tenant, daily_writes) VALUES ('acme', 1)")
    raw.commit()
    raw.close()
    with pytest.raises(QuotaExceededError):
        mem.add("fact two", context=ORCH)
    mem.close()


def test_another_threads_open_transaction_is_waited_for_not_read(tmp_path: Path) -> None:
    mem = _open(tmp_path / "s.db", 1)
    mem.add("fact one", context=ORCH)
    store, scope = mem.store, Scope("acme")
    assert store.get_quota(scope) is None
    started, go = threading.Event(), threading.Event()
    seen: list[int | None] = []

    def writer() -> None:
        with contextlib.suppress(RuntimeError), store.transaction():
            store.set_quota(scope, 0)
            started.set()
            go.wait(timeout=1.0)  # a reader that does not wait for us sets it
            raise RuntimeError("abandoned")

    def reader() -> None:
        seen.append(store.get_quota(scope))
        go.set()

    one = threading.Thread(target=writer)
    one.start()
    started.wait(timeout=5)
    two = threading.Thread(target=reader)
    two.start()
    one.join()
    two.join()
    assert seen == [None]  # never the other thread's uncommitted (then rolled back) 0
    mem.close()
