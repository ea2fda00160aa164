"""ArangoStore's erasure steps beyond the row deletes, without a server: what the embedded
backend does on a row delete (the entities only the deleted rows named go with them) and
after an erasure (the data files rewritten), the ArangoDB backend does too.

The queries' answers are scripted here (``_run`` replaced): these tests check what our code
sends, in which order and transaction, and what it makes of the rows a server returns; the
AQL itself runs in the live contract suite (tests/contract, with ARANGO_URL).
"""

from __future__ import annotations

from typing import Any

import pytest
from arango.exceptions import CollectionCompactError
from arango.request import Request
from arango.response import Response

from attestor_arango.scope import Scope
from tests.test_arango_store_unit import RecordingDB, make_store

ACME = Scope("acme")


def _scripted(store: Any, named: list[tuple[str, str]], still: dict[str, list[str]]) -> list[Any]:
    """Answers ``entity_names_of_memories`` with ``named`` (namespace, name) and
    ``entity_names_in_namespace`` with ``still[namespace]``; records every call with
    whether it ran inside the store's transaction."""
    calls: list[Any] = []

    def run(name: str, scope: Scope, params: dict[str, Any]) -> list[dict[str, Any]]:
        calls.append((name, scope, dict(params), store.in_transaction))
        if name == "entity_names_of_memories":
            return [{"tenant": "acme", "namespace": ns, "name": n} for ns, n in named]
        if name == "entity_names_in_namespace":
            ns = scope.namespace
            return [{"tenant": "acme", "namespace": ns, "name": n} for n in still[str(ns)]]
        if name == "memory_delete_many":
            return [{"tenant": "acme", "namespace": "ns1"} for _ in params["ids"]]
        return []

    store._run = run
    return calls


def test_delete_memories_drops_the_entities_only_the_deleted_rows_named() -> None:
    db = RecordingDB()
    store = make_store(db)
    named = [("ns1", "Zed  Q"), ("ns1", "yan"), ("ns2", "Kept"), ("ns2", "gone")]
    calls = _scripted(store, named, {"ns1": ["Yan"], "ns2": ["kept"]})

    assert store.delete_memories(ACME, ["m1", "m2"]) == 2

    assert [c[0] for c in calls] == [
        "entity_names_of_memories",  # read before the rows go
        "relation_delete_for_memories",
        "memory_delete_many",
        "entity_names_in_namespace",
        "entity_delete_keys",
        "graph_node_delete_keys",
        "entity_names_in_namespace",
        "entity_delete_keys",
        "graph_node_delete_keys",
    ]
    dropped = [(c[0], c[1].namespace, c[2]["keys"]) for c in calls if "keys" in c[2]]
    assert dropped == [
        ("entity_delete_keys", "ns1", ["zed q"]),  # normalised; 'yan' is still named
        ("graph_node_delete_keys", "ns1", ["zed q"]),
        ("entity_delete_keys", "ns2", ["gone"]),
        ("graph_node_delete_keys", "ns2", ["gone"]),
    ]
    assert all(inside for *_, inside in calls) and len(db.txns) == 1 and db.txns[0].committed


def test_nothing_is_dropped_while_every_named_entity_is_still_named() -> None:
    db = RecordingDB()
    store = make_store(db)
    calls = _scripted(store, [("ns1", "alice")], {"ns1": ["Alice", "bob"]})
    store.delete_memories(ACME, ["m1"])
    assert [c[0] for c in calls][-1] == "entity_names_in_namespace"


def test_a_failed_entity_drop_aborts_the_row_delete_with_it() -> None:
    db = RecordingDB()
    store = make_store(db)
    calls = _scripted(store, [("ns1", "zed")], {"ns1": []})
    scripted = store._run

    def failing(name: str, scope: Scope, params: dict[str, Any]) -> list[dict[str, Any]]:
        if name == "graph_node_delete_keys":
            raise RuntimeError("server gone")
        return scripted(name, scope, params)

    store._run = failing
    with pytest.raises(RuntimeError):
        store.delete_memories(ACME, ["m1"])
    assert "memory_delete_many" in [c[0] for c in calls]
    assert len(db.txns) == 1 and db.txns[0].aborted and not db.txns[0].committed


class _Collection:
    def __init__(self, db: CompactingDB, name: str) -> None:
        self.db, self.name = db, name

    def compact(self) -> dict[str, Any]:
        self.db.compacted.append(self.name)
        if self.name in self.db.refuse:
            raise CollectionCompactError(_response(403), Request("put", "/_api/collection"))
        return {"name": self.name}


def _response(status: int) -> Response:
    resp = Response("put", "http://127.0.0.1:8529/_api/collection/x/compact", {}, status, "", "")
    resp.error_code, resp.error_message = 11, "simulated: not authorised"
    return resp


class CompactingDB(RecordingDB):
    """RecordingDB plus python-arango's collection handle, recording compactions."""

    def __init__(self, *refuse: str) -> None:
        super().__init__()
        self.refuse = set(refuse)
        self.compacted: list[str] = []

    def collection(self, name: str) -> _Collection:
        return _Collection(self, name)


def test_an_erasure_rewrites_the_data_files_of_every_erased_collection() -> None:
    db = CompactingDB()
    store = make_store(db)
    assert store.flush_erasure() == 0
    assert db.compacted == list(store.purge_collections())
    assert "audit" not in db.compacted  # the chain is kept, nothing of it was removed


def test_a_collection_that_cannot_be_rewritten_is_counted_and_the_rest_still_are() -> None:
    db = CompactingDB("memories")
    store = make_store(db)
    assert store.flush_erasure() == 1
    assert db.compacted == list(store.purge_collections())


def test_nothing_is_rewritten_inside_a_transaction() -> None:
    db = CompactingDB()
    store = make_store(db)
    with store.transaction():
        assert store.flush_erasure() == -1
    assert db.compacted == []
