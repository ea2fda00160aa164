"""What the first run on a real ArangoDB must tell (issue 15): the plans the server picks,
and the behaviours the offline tests could only reason about.

Runs where ``ARANGO_URL`` is set or Docker answers (``tests/support/arango_server.py``);
otherwise every test skips with that reason. Plans come from ``Executor.explain``, which
sends each registered query with the optimizer rules its file declares, exactly as ``run``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from attestor_arango.clock import OPEN, from_us
from attestor_arango.models import Episode, Memory, Provenance, Relation, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.arango.base import COLLECTIONS
from attestor_arango.store.arango.executor import Executor
from attestor_arango.store.arango.schema import ensure_vector_index, vector_index_state
from attestor_arango.store.arango.store import ArangoStore
from attestor_arango.store.protocol import EmbeddingSpace
from tests.support.arango_server import LiveServer, fresh_store, session_server

pytestmark = pytest.mark.arango
T0 = 1_767_225_600_000_000
A, B = Scope("acme", "ns1"), Scope("beta", "ns1")
DIM = 8
# one legal value per bind parameter name used in aql/ (tenant comes from the Scope)
SAMPLE: dict[str, Any] = {
    "namespace": "ns1", "id": "m-1", "ids": ["m-1"], "keys": ["alice"], "key": "alice",
    "entity": "alice", "category": "fact", "status": None, "content_hash": None, "tags": None,
    "as_of": T0 + 10, "t_expired_after": T0 + 10, "window_start": 0, "window_end": OPEN,
    "open_us": OPEN, "t_expired": T0 + 5, "superseded_by": None, "limit": 10, "offset": 0,
    "k": 5, "day": "2026-01-01", "n": 1, "seq": 1, "hash": "h", "after_seq": 0,
    "daily_writes": 10, "name": "test", "dimension": DIM, "query": "fact",
    "query_vector": [0.5] * DIM, "n_probe": 4, "max_depth": 2, "sources": ["alice"],
    "from_vertex": "graph_nodes/x", "to_vertex": "graph_nodes/y", "batch": 10,
    "fragment": "m-", "@collection": "episodes", "items": [{"id": "m-1", "vector": [0.5] * DIM}],
    "doc": {"tenant": "acme", "namespace": "ns1", "id": "m-1"}, "actions": ["forget"],
    "space": f"test/{DIM}", "count": 1, "after": "", "edge": "1", "source": "alice",
    "target": "bob", "created_by": T0 + 10, "candidates": ["m-1"], "session_id": "s1",
    "tag": "turn", "before": OPEN + 1,
}  # fmt: skip


@pytest.fixture
def server(request: pytest.FixtureRequest) -> LiveServer:
    return session_server(request.config)


@pytest.fixture
def live(server: LiveServer) -> Iterator[ArangoStore]:
    store, drop = fresh_store(server)
    try:
        yield store
    finally:
        store.close()
        drop()


def _memory(scope: Scope, mid: str, content: str, entity: str | None = None) -> Memory:
    return Memory(
        id=mid,
        tenant=scope.tenant,
        namespace=scope.namespace or "ns1",
        content=content,
        entity=entity,
        valid_from=from_us(T0),
        t_created=from_us(T0),
        provenance=Provenance(agent_id="a", role="planner"),
        content_hash=content_hash(content),
    )


def _fill(store: ArangoStore, scope: Scope, n: int, seed: int = 7) -> None:
    store.set_embedding_space(scope, EmbeddingSpace("test", DIM))
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i, v in enumerate(vectors):
        store.insert_memory(scope, _memory(scope, f"{scope.tenant}-{i}", f"fact {i}"), v)


def _indexes(node: dict[str, Any]) -> list[dict[str, Any]]:
    """Index descriptions of a plan node (IndexNode: a list; TraversalNode: base/levels)."""
    raw = node.get("indexes") or []
    if isinstance(raw, dict):
        found = list(raw.get("base") or [])
        for level in (raw.get("levels") or {}).values():
            found.extend(level)
        return found
    return list(raw)


def _plan(store: ArangoStore, name: str, scope: Scope = A) -> dict[str, Any]:
    query = store.executor.registry.get(name)
    params = {p: SAMPLE[p] for p in query.params if p != "tenant"}
    return store.executor.explain(name, scope, params)


def _types(plan: dict[str, Any]) -> list[str]:
    return [str(n["type"]) for n in plan["nodes"]]


def test_every_registered_query_has_sample_bind_values() -> None:
    """Offline: the plan tests below can bind every query (a new parameter needs a sample)."""
    from attestor_arango.store.arango.registry import Registry

    missing = {
        q.name: sorted(q.params - set(SAMPLE) - {"tenant"}) for q in Registry.load() if not q.admin
    }
    assert {k: v for k, v in missing.items() if v} == {}


def test_every_tenant_query_reads_through_an_index_that_starts_with_tenant(
    live: ArangoStore,
) -> None:
    _fill(live, A, 20)
    _fill(live, B, 5, seed=8)
    problems: list[str] = []
    for query in live.executor.registry:
        # vector_ann needs a trained index (next test); admin queries are not tenant reads
        if query.admin or query.name == "vector_ann":
            continue
        plan = _plan(live, query.name)
        for node in plan["nodes"]:
            if node["type"] == "EnumerateCollectionNode" and node.get("collection") in COLLECTIONS:
                problems.append(f"{query.name}: full scan of {node['collection']}")
            if node["type"] == "IndexNode":
                for ix in _indexes(node):
                    first = (ix.get("fields") or ["?"])[0]
                    if ix.get("type") != "primary" and first not in ("tenant", "_from", "_to"):
                        problems.append(f"{query.name}: index {ix.get('name')} starts with {first}")
    assert problems == []


def test_vector_ann_is_answered_by_the_vector_index(live: ArangoStore) -> None:
    _fill(live, A, 300)
    db = live.database
    created = ensure_vector_index(db, Executor(live.executor.registry, lambda: db), min_docs=1)
    assert created["status"] == "created", created
    plan = _plan(live, "vector_ann")
    assert "EnumerateNearVectorNode" in _types(plan), _types(plan)
    assert "use-vector-index" in plan.get("rules", [])
    scans = ("IndexNode", "EnumerateCollectionNode")
    loops = [n for n in plan["nodes"] if n["type"] in scans and n.get("collection") == "memories"]
    assert loops == []
    live.vector_index(refresh=True)
    live.vector_min_docs = 0
    query = live.get_vectors(A, ["acme-3"])["acme-3"]
    hits = live.vector_candidates(A, query, 5, TemporalView(as_of=T0 + 1))
    assert hits[0].memory.id == "acme-3"


def test_text_bm25_searches_the_view(live: ArangoStore) -> None:
    plan = _plan(live, "text_bm25")
    views = [n for n in plan["nodes"] if n["type"] == "EnumerateViewNode"]
    assert views and views[0].get("view") == "memories_view"
    assert "EnumerateCollectionNode" not in _types(plan)


def test_graph_hops_walk_the_edge_index(live: ArangoStore) -> None:
    live.add_relation(
        A,
        Relation(
            id="r1",
            tenant="acme",
            namespace="ns1",
            source="alice",
            relation="knows",
            target="bob",
            t_created=from_us(T0),
        ),
    )
    for name in ("graph_hops", "graph_hops_ns"):
        plan = _plan(live, name)
        [traversal] = [n for n in plan["nodes"] if n["type"] == "TraversalNode"]
        used = _indexes(traversal)
        assert used, name
        for ix in used:
            assert ix.get("type") == "edge" or (ix.get("fields") or [""])[0] in ("_from", "_to")
    assert live.hops(A, ["alice"], 2, TemporalView(as_of=T0 + 1)).get("bob") == 1


def test_two_writes_in_one_day_count_two(live: ArangoStore) -> None:
    """The second add of a day updates the counter with AQL arithmetic (a double)."""
    assert live.add_writes(A, "2026-01-01", 1) == 1
    assert live.add_writes(A, "2026-01-01", 1) == 2
    assert live.count_writes(A, "2026-01-01") == 2 and live.count_writes(B, "2026-01-01") == 0


def test_a_purge_larger_than_one_batch_removes_everything_of_the_tenant_only(
    server: LiveServer,
) -> None:
    store, drop = fresh_store(server, purge_batch=3)
    try:
        _fill(store, A, 7)
        _fill(store, B, 2, seed=9)
        for i in range(5):
            store.put_episode(
                A,
                Episode(
                    id=f"e{i}",
                    tenant="acme",
                    namespace="ns1",
                    agent_id="a",
                    user_text="u",
                    assistant_text="a",
                    user_time=from_us(T0),
                    assistant_time=from_us(T0),
                    t_created=from_us(T0),
                ),
            )
        removed = store.purge_tenant(A)
        assert removed["memories"] == 7 and removed["vectors"] == 7 and removed["episodes"] == 5
        assert not any(store.tenant_residue(A).values())
        assert store.tenant_residue(B)["memories"] == 2
    finally:
        store.close()
        drop()


def test_cluster_tenants_on_different_shards_train_one_index(live: ArangoStore) -> None:
    """docker compose --profile cluster: memories sharded by tenant; nLists fits every shard."""
    if live.database.role() != "COORDINATOR":
        pytest.skip("needs the cluster profile of docker-compose.yml (a coordinator answers)")
    db = live.database
    executor = Executor(live.executor.registry, lambda: db)
    tenants = [Scope(f"t{i}", "ns1") for i in range(12)]
    for i, scope in enumerate(tenants):
        _fill(live, scope, 30, seed=i)
    shards = {r["shard"]: r["n"] for r in executor.run_admin("admin_vector_shards", {})}
    assert len(shards) >= 2, shards  # 12 tenants over 3 shards land on more than one
    created = ensure_vector_index(db, executor, min_docs=1)
    state = vector_index_state(db)
    if len(shards) < 3:  # a shard without vectors: creation must wait, not fail
        assert created["status"] == "deferred", created
        return
    assert created["status"] == "created", created
    assert state["n_lists"] <= min(shards.values())
    assert state.get("training_state") in (None, "ready"), state
