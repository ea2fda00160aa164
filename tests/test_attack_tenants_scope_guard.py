"""Every Store method refuses a scope that is not a ``Scope`` with the typed error.

A tenant name as a string, a dict, an ``AgentContext`` or None used to reach the
backends and fail deep inside with ``AttributeError`` (or, for an object that happens
to carry a ``tenant`` attribute, run). Both backends must fail closed at their boundary
before any I/O: the embedded store on a real file (nothing written), ArangoDB offline on
the recording double (no query sent).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango import AgentContext
from attestor_arango.errors import TenantRequiredError
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import (
    EmbeddingSpace,
    MemoryFilter,
    Store,
    require_scope,
)
from tests.test_arango_store_unit import VIEW, RecordingDB, make_store, memory

GOOD = Scope("acme", "ns1")
BAD_SCOPES: list[Any] = [
    None,
    "acme",
    {"tenant": "acme", "namespace": "ns1"},
    AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="ns1"),
    ("acme", "ns1"),
]


def scoped_methods() -> list[str]:
    """Every method of the Store protocol (all its roles) whose first argument is a scope."""
    names = []
    for name in sorted(dir(Store)):
        if name.startswith("_"):
            continue
        fn = getattr(Store, name)
        if not callable(fn):
            continue
        params = list(inspect.signature(fn).parameters)
        if len(params) >= 2 and params[1] == "scope":
            names.append(name)
    return names


def arguments(name: str) -> list[Any]:
    """Plausible arguments after the scope: the guard must refuse before looking at them."""
    vec = np.ones(4, dtype=np.float32)
    space = EmbeddingSpace("t", 4)
    table: dict[str, list[Any]] = {
        "get_embedding_space": [],
        "set_embedding_space": [space],
        "hold_embedding_space": [space],
        "replace_vectors": [space, []],
        "insert_memory": [memory(GOOD), vec],
        "get_memory": ["m1"],
        "get_memories": [["m1"]],
        "memory_ids_matching": ["abc", 5],
        "get_vectors": [["m1"]],
        "close_memory": ["m1", 1, "superseded", None],
        "find_active": ["ann", "drink", VIEW],
        "latest_in_session": ["s1", "turn", VIEW, 10, 5],
        "list_memories": [MemoryFilter(), VIEW, 10],
        "count_memories": [MemoryFilter(), VIEW],
        "count_rows": [],
        "vector_candidates": [vec, 5, VIEW],
        "text_pool": ["tea", 5, VIEW],
        "upsert_entity": [None],
        "list_entities": [],
        "known_entities": [],
        "add_relation": [None],
        "relations_touching": [["ann"], VIEW],
        "relations_backed": [["ann"], VIEW, [], 5],
        "hops": [["ann"], 2, VIEW],
        "put_episode": [None],
        "get_episode": ["e1"],
        "list_episodes": [10],
        "last_audit": [],
        "append_audit": [None],
        "read_audit": [10],
        "read_audit_actions": [["forget"], 10],
        "audit_head": [],
        "get_quota": [],
        "set_quota": [5],
        "count_writes": ["2026-12-05"],
        "add_writes": ["2026-12-05", 1],
        "get_recall_key": [],
        "put_recall_key": ["ab" * 32],
        "purge_tenant": [],
        "purge_collection": ["memories"],
        "tenant_residue": [],
        "delete_memories": [["m1"]],
    }
    return table[name]


METHODS = scoped_methods()


def test_the_walk_covers_every_role() -> None:
    """The walk is driven by the protocol itself; a method added later is walked too
    (and fails ``arguments`` until someone gives it arguments)."""
    assert {"insert_memory", "read_audit", "purge_tenant", "hops", "text_pool"} <= set(METHODS)
    assert all(arguments(name) is not None for name in METHODS)


@pytest.mark.parametrize("name", METHODS)
def test_embedded_store_refuses_a_non_scope(tmp_path: Path, name: str) -> None:
    store = SQLiteStore(tmp_path / "m.db", persist_indexes=False)
    try:
        for bad in BAD_SCOPES:
            with pytest.raises(TenantRequiredError):
                getattr(store, name)(bad, *arguments(name))
        assert store.count_rows(GOOD)["total"] == 0
    finally:
        store.close()


@pytest.mark.parametrize("name", METHODS)
def test_arango_store_refuses_a_non_scope_before_any_query(name: str) -> None:
    db = RecordingDB()
    store = make_store(db)
    for bad in BAD_SCOPES:
        with pytest.raises(TenantRequiredError):
            getattr(store, name)(bad, *arguments(name))
    assert db.log == [] and db.txns == []


def test_a_scope_still_passes_and_a_subclass_is_guarded_too(tmp_path: Path) -> None:
    class Sub(SQLiteStore):
        def get_memory(self, scope: Scope, memory_id: str) -> Any:
            return super().get_memory(scope, memory_id)

    store = Sub(tmp_path / "m.db", persist_indexes=False)
    try:
        assert store.get_memory(GOOD, "nope") is None
        assert store.list_memories(GOOD, MemoryFilter(), TemporalView(as_of=1), 5) == []
        with pytest.raises(TenantRequiredError):
            store.get_memory("acme", "nope")  # type: ignore[arg-type]
        with pytest.raises(TenantRequiredError):  # the scope given by keyword
            store.count_rows(scope=None)  # type: ignore[arg-type]
    finally:
        store.close()
    assert require_scope(GOOD, "x") is GOOD
