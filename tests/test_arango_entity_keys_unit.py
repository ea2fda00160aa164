"""ArangoDB's folding of entity keys stored before they were NFKC (store/arango/entity_keys.py),
without a server.

The store runs through its real executor (bind parameters checked against each aql/ file's
header, every returned row checked against the Scope) and its real ``transaction()``. The
answers come from ``Graph``: a few lines per query that apply what the query's file says
(entity_keys_unfolded, relation_ends_unfolded, relation_fold_ends, entity_upsert,
entity_delete_keys, graph_node_upsert, graph_node_delete_keys, admin_entity_key_tenants)
to a handful of documents of two tenants. Whether the AQL does what its file says is the
live suite's job (tests/test_arango_live.py, with ARANGO_URL).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from attestor_arango.config import load_config
from attestor_arango.errors import TenantRequiredError
from attestor_arango.scope import Scope
from attestor_arango.store.arango import connect
from attestor_arango.store.arango.registry import Registry
from attestor_arango.store.arango.store import ArangoStore
from attestor_arango.validation import entity_key

REGISTRY = Registry.load()
ACME, OTHER = Scope("acme"), Scope("other")
CAFE_OLD = "cafe\u0301"  # a decomposed "café", as the key was stored before NFKC
ANN_OLD = "\uff41\uff4e\uff4e"  # full-width "ａｎｎ", lower-cased by the old entity_key
OUTSIDE_ASCII = re.compile(r"[^ -~]")  # the pattern the queries use
ENDS = ("key", "source", "target")


class Graph:
    """Documents of entities, graph_nodes and relations, keyed by ``_key`` (a counter, as
    ArangoDB's traditional key generator gives: increasing numbers as strings)."""

    def __init__(self) -> None:
        self.docs: dict[str, dict[str, dict[str, Any]]] = {
            "entities": {},
            "graph_nodes": {},
            "relations": {},
        }
        self.next_key = 100
        self.calls: list[tuple[str, str | None, str, dict[str, Any]]] = []

    def add(self, collection: str, doc: dict[str, Any]) -> str:
        key = str(self.next_key)
        self.next_key += 1
        handle = f"{collection}/{key}"
        self.docs[collection][key] = {**doc, "_key": key, "_id": handle, "_rev": "r"}
        return handle

    def vertex(self, tenant: str, namespace: str, key: str) -> str:
        for doc in self.docs["graph_nodes"].values():
            if (doc["tenant"], doc["namespace"], doc["key"]) == (tenant, namespace, key):
                return str(doc["_id"])
        return self.add("graph_nodes", {"tenant": tenant, "namespace": namespace, "key": key})

    def relate(self, tenant: str, namespace: str, source: str, target: str) -> None:
        self.add(
            "relations",
            {
                "tenant": tenant,
                "namespace": namespace,
                "id": f"r{self.next_key}",
                "source": source,
                "target": target,
                "relation": "knows",
                "_from": self.vertex(tenant, namespace, source),
                "_to": self.vertex(tenant, namespace, target),
            },
        )

    def entity(self, tenant: str, key: str, name: str, aliases: list[str]) -> None:
        doc = {"tenant": tenant, "namespace": "ns1", "key": key, "name": name}
        self.add("entities", {**doc, "kind": None, "aliases": aliases})

    def snapshot(self, tenant: str) -> dict[str, list[dict[str, Any]]]:
        return {
            name: sorted(
                (copy.deepcopy(d) for d in docs.values() if d["tenant"] == tenant),
                key=lambda d: d["_key"],
            )
            for name, docs in self.docs.items()
        }

    # what each query's file says ----------------------------------------------------------
    def answer(self, name: str, bind: dict[str, Any], owner: str | None) -> list[Any]:
        self.calls.append((owner or "", name, bind.get("tenant", ""), dict(bind)))
        if name == "admin_entity_key_tenants":
            return sorted(
                {
                    d["tenant"]
                    for docs in self.docs.values()
                    for d in docs.values()
                    if any(
                        OUTSIDE_ASCII.search(d.get(f) or "") for f in ("key", "source", "target")
                    )
                }
            )
        tenant = bind["tenant"]
        if name in ("entity_keys_unfolded", "relation_ends_unfolded"):
            collection = bind.get("@collection", "relations")
            fields = ("key",) if name == "entity_keys_unfolded" else ("source", "target")
            rows = [
                d
                for k, d in sorted(self.docs[collection].items())
                if d["tenant"] == tenant
                and k > bind["after"]
                and any(OUTSIDE_ASCII.search(d[f]) for f in fields)
            ][: bind["batch"]]
            if name == "relation_ends_unfolded":
                return [{f: d[f] for f in ("tenant", "namespace", "_key", *fields)} for d in rows]
            return [{k: v for k, v in d.items() if k not in ("_id", "_rev")} for d in rows]
        if name == "relation_fold_ends":
            d = self.docs["relations"][bind["edge"]]
            assert d["tenant"] == tenant
            d.update(
                source=bind["source"],
                target=bind["target"],
                _from=bind["from_vertex"],
                _to=bind["to_vertex"],
            )
            return [{"tenant": tenant, "namespace": d["namespace"]}]
        if name == "graph_node_upsert":
            handle = self.vertex(tenant, bind["namespace"], bind["key"])
            doc = self.docs["graph_nodes"][handle.split("/")[1]]
            return [{**{k: doc[k] for k in ("tenant", "namespace", "key")}, "vertex": handle}]
        if name in ("graph_node_delete_keys", "entity_delete_keys"):
            collection = "graph_nodes" if name == "graph_node_delete_keys" else "entities"
            gone = [
                k
                for k, d in self.docs[collection].items()
                if d["tenant"] == tenant
                and d["namespace"] == bind["namespace"]
                and d["key"] in bind["keys"]
            ]
            return [self._pop(collection, k) for k in gone]
        if name == "entity_upsert":
            ns, key, doc = bind["namespace"], bind["key"], bind["doc"]
            for d in self.docs["entities"].values():
                if (d["tenant"], d["namespace"], d["key"]) == (tenant, ns, key):
                    d["kind"] = d["kind"] if doc["kind"] is None else doc["kind"]
                    d["aliases"] = sorted(set(d["aliases"]) | set(doc["aliases"]))
                    break
            else:
                self.add("entities", {**doc, "tenant": tenant, "namespace": ns, "key": key})
            return [{"tenant": tenant, "namespace": ns, "key": key}]
        raise AssertionError(f"unexpected query {name}")

    def _pop(self, collection: str, key: str) -> dict[str, Any]:
        doc = self.docs[collection].pop(key)
        return {"tenant": doc["tenant"], "namespace": doc["namespace"], "key": doc["key"]}


class _AQL:
    def __init__(self, graph: Graph, owner: str | None) -> None:
        self.graph, self.owner = graph, owner

    def execute(self, query: str, bind_vars: dict[str, Any] | None = None, **_: Any) -> Any:
        name = REGISTRY.name_of(query)
        assert name is not None, "only registered query text reaches the server"
        return iter(self.graph.answer(name, dict(bind_vars or {}), self.owner))


class _Txn:
    def __init__(self, graph: Graph, number: int) -> None:
        self.aql = _AQL(graph, f"txn{number}")

    def commit_transaction(self) -> bool:
        return True

    def abort_transaction(self) -> bool:
        return True


class GraphDB:
    """python-arango's database, as far as the store's executor and transaction use it."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.aql = _AQL(graph, None)
        self.txns = 0

    def begin_transaction(self, **_: Any) -> _Txn:
        self.txns += 1
        return _Txn(self.graph, self.txns)


def old_graph() -> Graph:
    """Two tenants holding the same keys stored before NFKC, plus acme's already folded
    "café" (an entity written after the change) that the old one must merge into."""
    graph = Graph()
    for tenant in ("acme", "other"):
        graph.entity(tenant, CAFE_OLD, "Cafe\u0301", ["the old cafe"])
        graph.entity(tenant, ANN_OLD, "\uff21\uff4e\uff4e", [])
        graph.entity(tenant, "bob", "Bob", [])
        graph.relate(tenant, "ns1", CAFE_OLD, ANN_OLD)
        graph.relate(tenant, "ns1", "bob", CAFE_OLD)
    graph.entity("acme", "café", "Café", ["the new café"])
    graph.relate("acme", "ns1", "café", "bob")
    return graph


def store_on(graph: Graph) -> tuple[ArangoStore, GraphDB]:
    db = GraphDB(graph)
    return ArangoStore(db), db  # type: ignore[arg-type]


def keys(graph: Graph, collection: str, tenant: str) -> list[str]:
    return sorted(d["key"] for d in graph.docs[collection].values() if d["tenant"] == tenant)


def test_old_keys_are_folded_merged_and_the_edges_follow_them() -> None:
    graph = old_graph()
    other_before = graph.snapshot("other")
    store, _ = store_on(graph)
    counts = store.fold_entity_keys(ACME)
    assert counts == {"relations": 2, "graph_nodes": 2, "entities": 2}
    assert keys(graph, "entities", "acme") == ["ann", "bob", "café"]
    cafe = next(
        d for d in graph.docs["entities"].values() if (d["tenant"], d["key"]) == ("acme", "café")
    )
    assert cafe["name"] == "Café" and cafe["aliases"] == ["the new café", "the old cafe"]
    assert keys(graph, "graph_nodes", "acme") == ["ann", "bob", "café"]
    vertex_of = {
        d["_id"]: d["key"] for d in graph.docs["graph_nodes"].values() if d["tenant"] == "acme"
    }
    ends = set()
    for edge in graph.docs["relations"].values():
        if edge["tenant"] == "acme":  # every edge ends at the vertices of its own end keys
            assert (vertex_of[edge["_from"]], vertex_of[edge["_to"]]) == (
                edge["source"],
                edge["target"],
            )
            ends.add((edge["source"], edge["target"]))
    assert ends == {("café", "ann"), ("bob", "café"), ("café", "bob")}
    # the same reads the store makes now meet what was stored before
    assert all(entity_key(k) == k for k in keys(graph, "entities", "acme"))
    assert graph.snapshot("other") == other_before  # another tenant's documents untouched
    assert {tenant for _, _, tenant, _ in graph.calls} == {"acme"}


def test_folding_again_changes_nothing() -> None:
    graph = old_graph()
    store, _ = store_on(graph)
    store.fold_entity_keys(ACME)
    after_first = graph.snapshot("acme")
    assert store.fold_entity_keys(ACME) == {"relations": 0, "graph_nodes": 0, "entities": 0}
    assert graph.snapshot("acme") == after_first


def test_every_page_is_bounded_and_its_own_transaction() -> None:
    graph = Graph()
    for i in range(7):
        graph.entity("acme", f"cafe\u0301 {i}", f"Cafe\u0301 {i}", [])
    store, db = store_on(graph)
    assert store.fold_entity_keys(ACME, batch=3)["entities"] == 7
    paging = ("entity_keys_unfolded", "relation_ends_unfolded")
    reads = [(owner, b) for owner, name, _, b in graph.calls if name in paging]
    assert all(b["batch"] == 3 for _, b in reads)
    assert all(owner.startswith("txn") for owner, _, _, _ in graph.calls)
    # one transaction per page (the folded records a page inserts are read again later,
    # already folded, and skipped), each page's writes in its own transaction
    pages = [owner for owner, _ in reads]
    assert len(set(pages)) == len(pages) == db.txns
    writes = [o for o, name, _, _ in graph.calls if name == "entity_delete_keys"]
    assert all(o in pages for o in writes)
    assert keys(graph, "entities", "acme") == sorted(f"café {i}" for i in range(7))


def test_init_folds_every_tenant_under_its_own_scope() -> None:
    graph = old_graph()
    store, _ = store_on(graph)
    report = connect.fold_stored_entity_keys(store)
    assert sorted(report) == ["acme", "other"]
    assert report["other"] == {"relations": 2, "graph_nodes": 2, "entities": 2}
    for tenant in ("acme", "other"):
        assert keys(graph, "entities", tenant) == ["ann", "bob", "café"]
    assert connect.fold_stored_entity_keys(store) == {}


def test_init_runs_the_folding_after_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[str] = []

    class Client:
        def close(self) -> None:
            steps.append("close")

    monkeypatch.setattr(connect, "make_client", lambda settings, **kw: Client())
    monkeypatch.setattr(connect, "_connect", lambda settings, client, create: (object(), False))
    monkeypatch.setattr(connect, "check_server_version", lambda db: "3.12.7")
    monkeypatch.setattr(connect, "apply_schema", lambda db: steps.append("schema") or {})
    monkeypatch.setattr(connect, "ArangoStore", lambda db: "store")

    def fold(store: Any) -> dict[str, Any]:
        steps.append(f"fold {store}")
        return {"acme": {"entities": 1}}

    monkeypatch.setattr(connect, "fold_stored_entity_keys", fold)
    monkeypatch.setattr(connect, "ensure_vector_index", lambda *a, **k: {"status": "deferred"})
    config = load_config(env={}, backend="arangodb", arango={"url": "http://127.0.0.1:1"})
    report = connect.init_arango(config)
    assert steps == ["schema", "fold store", "close"]
    assert report["entity_keys"] == {"acme": {"entities": 1}}


def test_folding_needs_a_scope_and_a_positive_batch() -> None:
    store, _ = store_on(old_graph())
    with pytest.raises(TenantRequiredError):
        store.fold_entity_keys("acme")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch"):
        store.fold_entity_keys(ACME, batch=0)
