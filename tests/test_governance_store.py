"""Store primitives the governance layer relies on, run against every backend."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from attestor_arango.clock import from_us, to_us
from attestor_arango.errors import ValidationError
from attestor_arango.models import Memory, Provenance, Relation, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import EmbeddingSpace, MemoryFilter, Store

T0 = to_us(datetime(2026, 1, 1, tzinfo=UTC))
DIM = 4


def _memory(tenant: str, mid: str, content: str, namespace: str = "inbox", t: int = T0) -> Memory:
    return Memory(
        id=mid,
        tenant=tenant,
        namespace=namespace,
        content=content,
        valid_from=from_us(t),
        t_created=from_us(t),
        provenance=Provenance(agent_id="a", role="executor"),
        content_hash=content_hash(content),
    )


def _seed(store: Store, tenant: str, n: int = 3) -> list[str]:
    scope = Scope(tenant, "inbox")
    store.set_embedding_space(scope, EmbeddingSpace("test", DIM))
    ids = []
    for i in range(n):
        mid = f"{tenant}-m{i}"
        vec = np.eye(DIM, dtype=np.float32)[i % DIM]
        store.insert_memory(scope, _memory(tenant, mid, f"{tenant} fact {i}", t=T0 + i), vec)
        ids.append(mid)
    store.add_relation(
        scope,
        Relation(
            id=f"{tenant}-r0",
            tenant=tenant,
            namespace="inbox",
            source="x",
            relation="knows",
            target="y",
            memory_id=ids[0],
            t_created=from_us(T0),
        ),
    )
    store.set_quota(scope, 10)
    store.add_writes(scope, "2026-01-01", 3)
    return ids


def test_purge_collection_is_stepwise_and_idempotent(store: Store) -> None:
    _seed(store, "alice")
    _seed(store, "bob")
    scope = Scope("alice")
    # load the vector cache so the residue must report it
    view = TemporalView(as_of=T0 + 100)
    assert store.vector_candidates(scope, np.eye(DIM, dtype=np.float32)[0], 5, view)
    before = store.tenant_residue(scope)
    assert before["memories"] == 3 and before["vectors"] == 3 and before["relations"] == 1
    assert before["write_counts"] == 1 and "quotas" not in before  # the operator's limit
    bob_before = store.tenant_residue(Scope("bob"))
    removed = {}
    for name in store.purge_collections():
        with store.transaction():
            removed[name] = store.purge_collection(scope, name)
    assert removed["memories"] == 3 and removed["relations"] == 1
    assert not any(store.tenant_residue(scope).values())
    assert store.tenant_residue(Scope("bob")) == bob_before
    with store.transaction():
        again = [store.purge_collection(scope, n) for n in store.purge_collections()]
    assert again == [0] * len(again)
    assert store.vector_candidates(Scope("bob"), np.eye(DIM, dtype=np.float32)[0], 5, view)
    with pytest.raises(ValidationError):
        store.purge_collection(scope, "audit")


def test_delete_memories_removes_rows_vectors_text_and_derived_edges(store: Store) -> None:
    ids = _seed(store, "alice")
    scope = Scope("alice")
    view = TemporalView(as_of=T0 + 100)
    store.vector_candidates(scope, np.eye(DIM, dtype=np.float32)[0], 5, view)
    assert store.delete_memories(scope, [ids[0], "not-there"]) == 1
    left = store.list_memories(scope, MemoryFilter(), view, 10)
    assert [m.id for m in left] == ids[1:]
    hits = store.vector_candidates(scope, np.eye(DIM, dtype=np.float32)[0], 5, view)
    assert ids[0] not in {h.memory.id for h in hits}
    assert all(t.id != ids[0] for t in store.text_pool(scope, "fact", 10, view))
    assert store.tenant_residue(scope)["relations"] == 0
    # another tenant's ids are out of reach
    bob = _seed(store, "bob")
    assert store.delete_memories(scope, bob) == 0
    assert store.tenant_residue(Scope("bob"))["memories"] == 3


def test_chain_head_is_backfilled_when_an_old_file_migrates(tmp_path: Path) -> None:
    """A file written before the audit_heads table existed gets its heads on open."""
    from attestor_arango.core import audit as audit_log
    from attestor_arango.store.embedded.migrate import _statements
    from attestor_arango.store.embedded.schema import MIGRATIONS
    from attestor_arango.store.embedded.store import SQLiteStore

    path = tmp_path / "old.db"
    conn = sqlite3.connect(str(path), isolation_level=None)
    for statement in _statements(MIGRATIONS[0][1]):
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {MIGRATIONS[0][0]}")
    prev = audit_log.GENESIS
    for seq in (1, 2):
        fields = {
            "tenant": "acme",
            "seq": seq,
            "id": f"e{seq}",
            "ts": T0 + seq,
            "agent_id": "a",
            "role": "orchestrator",
            "action": "forget",
            "target": None,
            "details": {},
            "prev_hash": prev,
        }
        prev = audit_log.entry_hash(fields)
        conn.execute(
            "INSERT INTO audit (tenant, seq, id, ts, agent_id, role, action, target, details, "
            "prev_hash, hash) VALUES (:tenant, :seq, :id, :ts, :agent_id, :role, :action, "
            ":target, '{}', :prev_hash, :hash)",
            {**fields, "hash": prev},
        )
    conn.close()
    store = SQLiteStore(path)
    try:
        assert store.audit_head(Scope("acme")) == (2, prev)
        assert store.audit_head(Scope("beta")) is None
    finally:
        store.close()
