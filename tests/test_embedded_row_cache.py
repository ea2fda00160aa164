"""The embedded store's decoded-memory cache (store/embedded/rowcache.py) never changes
what ``get_memories`` answers: a warm read equals a cold read of the committed rows,
after closes, purges, rolled-back transactions and another connection's writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attestor_arango.clock import from_us
from attestor_arango.models import Memory, MemoryStatus, Provenance, content_hash
from attestor_arango.scope import Scope
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import EmbeddingSpace

T0 = 1_767_225_600_000_000
ACME = Scope("acme", "n")


def _memory(i: int, namespace: str = "n", tenant: str = "acme", **extra: object) -> Memory:
    text = f"memory number {i} about topic {i % 7}"
    return Memory(
        id=f"m{i:04d}",
        tenant=tenant,
        namespace=namespace,
        content=text,
        tags=("t",) if i % 3 == 0 else (),
        valid_from=from_us(T0 + i),
        t_created=from_us(T0 + i),
        provenance=Provenance(agent_id="a", role="planner", session_id=f"s{i % 4}"),
        content_hash=content_hash(text),
        metadata={"turn": {"replies_to": f"m{i - 1:04d}"}} if i % 2 else {},
        **extra,  # type: ignore[arg-type]
    )


def _store(path: Path, n: int = 40) -> SQLiteStore:
    store = SQLiteStore(path)
    store.set_embedding_space(ACME, EmbeddingSpace("h", 4))
    for i in range(n):
        ns = "other" if i % 5 == 4 else "n"
        store.insert_memory(Scope("acme", ns), _memory(i, ns), np.ones(4, dtype=np.float32))
    store.insert_memory(Scope("beta", "n"), _memory(900, tenant="beta"), None)
    return store


def _cold(path: Path, scope: Scope, ids: list[str]) -> dict[str, Memory]:
    fresh = SQLiteStore(path)
    try:
        return fresh.get_memories(scope, ids)
    finally:
        fresh.close()


def _dumped(found: dict[str, Memory]) -> list[tuple[str, dict[str, object]]]:
    return [(i, m.model_dump()) for i, m in found.items()]


IDS = [f"m{i:04d}" for i in range(45)] + ["m0900"]


@pytest.mark.parametrize("scope", [ACME, Scope("acme", "other"), Scope("acme"), Scope("beta")])
def test_a_warm_read_equals_a_cold_read(tmp_path: Path, scope: Scope) -> None:
    store = _store(tmp_path / "m.db")
    store.get_memories(Scope("acme"), IDS)  # every acme row cached, of every namespace
    assert store.caches.rows.held("acme") == 40
    warm = store.get_memories(scope, IDS[::-1])
    cold = _cold(tmp_path / "m.db", scope, IDS[::-1])
    assert list(warm) == list(cold)  # the same ids, in the order asked
    assert _dumped(warm) == _dumped(cold)
    assert all(warm[i] == cold[i] for i in warm)
    # built in place (rowcache's loop) as a model pydantic made: the same class, slots, set
    # of fields given and no extra or private values; each its own fields and metadata
    again = store.get_memories(scope, IDS)
    for i, memory in warm.items():
        assert type(memory) is Memory and memory.model_fields_set == cold[i].model_fields_set
        assert memory.__pydantic_extra__ is None and memory.__pydantic_private__ is None
        assert vars(memory) == vars(cold[i]) and vars(memory) is not vars(again[i])
        assert memory.metadata is not again[i].metadata
        assert memory.model_copy(update={"content": "x"}).content == "x"
    store.close()


def test_a_closed_row_is_read_again(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    before = store.get_memories(ACME, ["m0001", "m0002"])
    assert before["m0001"].t_expired is None
    store.close_memory(ACME, "m0001", T0 + 10_000, "superseded", "m0002")
    after = store.get_memories(ACME, ["m0001", "m0002"])
    assert after["m0001"].status is MemoryStatus.SUPERSEDED
    assert after["m0001"].superseded_by == "m0002"
    assert _dumped(after) == _dumped(_cold(tmp_path / "m.db", ACME, ["m0001", "m0002"]))
    store.close()


def test_another_connections_close_is_seen(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    store.get_memories(ACME, ["m0003"])
    other = SQLiteStore(tmp_path / "m.db")
    other.close_memory(ACME, "m0003", T0 + 10_000, "archived", None)
    other.close()
    assert store.get_memories(ACME, ["m0003"])["m0003"].status is MemoryStatus.ARCHIVED
    store.close()


def test_inside_a_transaction_the_cache_is_neither_read_nor_filled(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    store.get_memories(ACME, ["m0005"])
    with pytest.raises(RuntimeError), store.transaction():
        store.close_memory(ACME, "m0005", T0 + 10_000, "archived", None)
        # the transaction sees its own close, not the cached open row
        assert store.get_memories(ACME, ["m0005"])["m0005"].status is MemoryStatus.ARCHIVED
        raise RuntimeError("roll back")
    # rolled back: the row is open again, and the cache never held the closed version
    assert store.get_memories(ACME, ["m0005"])["m0005"].status is MemoryStatus.ACTIVE
    store.close()


def test_a_result_changed_by_its_caller_does_not_change_the_next_read(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    first = store.get_memories(ACME, ["m0001"])["m0001"]
    first.metadata["turn"]["replies_to"] = "tampered"
    first.metadata["extra"] = 1
    again = store.get_memories(ACME, ["m0001"])["m0001"]
    assert again.metadata == {"turn": {"replies_to": "m0000"}}
    assert again is not first
    store.close()


def test_purge_empties_the_memory_cache(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    store.get_memories(ACME, IDS)
    assert store.tenant_residue(ACME)["memory_cache"] > 0
    store.purge_tenant(Scope("acme"))
    assert store.tenant_residue(ACME)["memory_cache"] == 0
    assert store.get_memories(ACME, IDS) == {}
    store.close()


def test_the_cache_holds_at_most_its_limit(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    store.caches.rows.limit = 8
    found = store.get_memories(Scope("acme"), IDS)
    assert len(store.caches.rows) == 8
    assert _dumped(store.get_memories(Scope("acme"), IDS)) == _dumped(found)
    store.close()


def test_the_cache_holds_at_most_its_bytes(tmp_path: Path) -> None:
    """Rows may be long (up to 32,000 characters), so the cache is bounded by the bytes
    its rows hold too; its count follows every put, close, purge and clear."""
    from attestor_arango.store.embedded.rowcache import row_bytes

    store = _store(tmp_path / "m.db")
    rows = store.caches.rows
    one = row_bytes(store.get_memories(ACME, ["m0001"])["m0001"], '{"turn": 1}')
    rows.max_bytes = 5 * one
    found = store.get_memories(Scope("acme"), IDS)
    assert 0 < len(rows) <= 5
    assert rows.bytes <= rows.max_bytes
    assert _dumped(store.get_memories(Scope("acme"), IDS)) == _dumped(found)
    kept = list(rows._rows.values())
    # each entry: the memory's fields, its metadata as stored, its row_bytes
    assert rows.bytes == sum(size for _, _, _, size in kept)
    # each entry: the memory's tenant, its fields, its metadata as stored, its row_bytes
    entries = rows._rows.items()
    assert all(t == "acme" and f == found[i].__dict__ for i, (t, f, _, _) in entries)
    assert all(size == row_bytes(found[i], meta) for i, (_, _, meta, size) in entries)
    last = next(reversed(rows._rows))
    store.close_memory(ACME, last, T0 + 10_000, "archived", None)  # discarded from the cache
    assert last not in rows._rows
    assert rows.bytes == sum(size for _, _, _, size in rows._rows.values())
    store.purge_tenant(Scope("acme"))
    assert len(rows) == 0 and rows.bytes == 0
    store.close()


def test_one_id_in_two_tenants_is_read_as_each_tenants_own(tmp_path: Path) -> None:
    """The cache is keyed by id, each entry holding its tenant: a row another tenant keeps
    under the same id (an import keeps ids) is never handed out, and closing or purging
    one tenant's row leaves the other's entry alone."""
    store = _store(tmp_path / "m.db")
    beta = Scope("beta", "n")
    store.set_embedding_space(beta, EmbeddingSpace("h", 4))
    twin = _memory(1, tenant="beta").model_copy(update={"content": "beta's own words"})
    store.insert_memory(beta, twin, None)
    for first, second in ((ACME, beta), (beta, ACME), (ACME, beta)):
        store.get_memories(first, ["m0001"])  # cached as the first tenant's
        got = store.get_memories(second, ["m0001"])
        assert _dumped(got) == _dumped(_cold(tmp_path / "m.db", second, ["m0001"]))
        assert got["m0001"].tenant == second.tenant
    assert store.get_memories(beta, ["m0001"])["m0001"].content == "beta's own words"
    store.close_memory(ACME, "m0001", T0 + 10_000, "archived", None)  # acme's, not beta's
    assert store.caches.rows.held("beta") == 1  # its m0001, still kept
    assert store.get_memories(ACME, ["m0001"])["m0001"].status is MemoryStatus.ARCHIVED
    store.get_memories(beta, ["m0001"])
    store.purge_tenant(Scope("acme"))  # drops acme's entries only
    assert store.caches.rows.held("beta") == 1 and store.caches.rows.held("acme") == 0
    assert store.get_memories(beta, ["m0001"])["m0001"].status is MemoryStatus.ACTIVE
    store.close()
