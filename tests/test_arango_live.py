"""ArangoDB-specific behaviour against a real server: ARANGO_URL, or a testcontainers
``arangodb:3.12.x`` container when Docker answers. Without either, every test here skips
with the exact reason. The shared Store contract suite runs on the same server through the
``arangodb`` entry of ``tests/conftest.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

from attestor_arango.clock import from_us
from attestor_arango.config import load_config
from attestor_arango.errors import ValidationError
from attestor_arango.models import Entity, Memory, Provenance, Relation, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.arango import arango_doctor
from attestor_arango.store.arango.executor import Executor
from attestor_arango.store.arango.schema import apply_schema, ensure_vector_index
from attestor_arango.store.arango.store import ArangoStore
from attestor_arango.store.protocol import EmbeddingSpace
from tests.support.arango_server import LiveServer, fresh_store, session_server

pytestmark = pytest.mark.arango
T0 = 1_767_225_600_000_000
A, B = Scope("acme", "ns1"), Scope("beta", "ns1")
DIM = 16


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


def _memory(scope: Scope, mid: str, content: str) -> Memory:
    return Memory(
        id=mid,
        tenant=scope.tenant,
        namespace=scope.namespace or "ns1",
        content=content,
        valid_from=from_us(T0),
        t_created=from_us(T0),
        provenance=Provenance(agent_id="a", role="planner"),
        content_hash=content_hash(content),
    )


def test_applying_the_schema_again_changes_nothing(live: ArangoStore) -> None:
    report = apply_schema(live.database)
    assert set(report["collections"].values()) == {"exists"}
    assert set(report["indexes"].values()) == {"exists"}
    assert report["drift"] == [] and set(report["views"].values()) == {"exists"}


def test_collection_schema_rejects_a_malformed_document(live: ArangoStore) -> None:
    with pytest.raises(ValidationError, match="schema"):
        live._run("memory_insert", A, {"doc": {"id": "x", "namespace": "ns1"}})
    assert live.get_memory(A, "x") is None


def test_ann_path_agrees_with_the_exact_scan(live: ArangoStore) -> None:
    rng = np.random.default_rng(7)
    for scope, n in ((A, 400), (B, 60)):
        live.set_embedding_space(scope, EmbeddingSpace("test", DIM))
        vectors = rng.normal(size=(n, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for i, v in enumerate(vectors):
            live.insert_memory(scope, _memory(scope, f"{scope.tenant}-{i}", f"fact {i}"), v)
    db = live.database
    created = ensure_vector_index(db, Executor(live.executor.registry, lambda: db), min_docs=1)
    assert created["status"] == "created", created
    live.vector_index(refresh=True)
    sent: list[str] = []
    real_run = live.executor.run

    def spy(name, scope, params):  # type: ignore[no-untyped-def]
        sent.append(name)
        return real_run(name, scope, params)

    live.executor.run = spy  # type: ignore[method-assign]
    query = live.get_vectors(A, ["acme-17"])["acme-17"]
    view = TemporalView(as_of=T0 + 1)
    live.vector_min_docs = 0
    ann = live.vector_candidates(A, query, 5, view)
    assert "vector_ann" in sent and "vector_exact" not in sent  # answered by the index
    live.vector_min_docs = 10**9
    exact = live.vector_candidates(A, query, 5, view)
    assert sent.count("vector_ann") == 1 and "vector_exact" in sent
    assert ann[0].memory.id == exact[0].memory.id == "acme-17"
    assert all(h.memory.tenant == "acme" for h in ann)
    assert ann[0].score == pytest.approx(1.0, abs=1e-5)


def test_concurrent_entity_upserts_leave_one_row(live: ArangoStore) -> None:
    def work(i: int) -> None:
        entity = Entity(
            tenant="acme", namespace="ns1", key="alice", name="Alice", aliases=(f"a{i}",)
        )
        live.upsert_entity(A, entity)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    [entity] = live.list_entities(A)
    assert set(entity.aliases) == {f"a{i}" for i in range(6)}


def test_health_and_doctor_on_a_live_server(live: ArangoStore, server: LiveServer) -> None:
    health = live.health()
    assert health["ok"] is True and health["server_version"].startswith("3.12")
    config = load_config(
        env={},
        backend="arangodb",
        arango={
            "url": server.url,
            "database": live.database.name,
            "username": server.username,
            "password": server.password,
        },
    )
    report = arango_doctor(config)
    failed = [c for c in report["checks"] if not c["ok"] and not c["warning"]]
    assert failed == [] and report["views"] == {"memories_view": "ok"}


def test_an_erasure_compacts_every_erased_collection_on_a_live_server(live: ArangoStore) -> None:
    """The server accepts the compaction of each collection a purge erases (the test user
    has the right a deployment's must have too); a purge's rows are gone and the other
    tenant's stay."""
    live.set_embedding_space(A, EmbeddingSpace("t", DIM))
    live.set_embedding_space(B, EmbeddingSpace("t", DIM))
    vector = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    live.insert_memory(A, _memory(A, "m1", "Zorvellink lives in Paris"), vector)
    live.insert_memory(B, _memory(B, "m1", "a note of beta"), vector)
    live.purge_tenant(A)
    assert live.flush_erasure() == 0
    assert sum(live.tenant_residue(A).values()) == 0
    assert live.get_memory(B, "m1") is not None


def test_entity_keys_stored_before_nfkc_are_folded_on_a_live_server(live: ArangoStore) -> None:
    """Keys an older release stored (a decomposed "café", a full-width "ａｎｎ") meet the
    folded spellings after the folding init runs (store/arango/entity_keys.py): the AQL
    paging, REGEX_TEST and the edge re-aiming the offline model only describes."""
    old_cafe, old_ann = "cafe\u0301", "\uff41\uff4e\uff4e"
    view = TemporalView(as_of=T0 + 1)
    for scope in (A, B):
        for key in (old_cafe, old_ann):
            entity = Entity(tenant=scope.tenant, namespace="ns1", key=key, name=key)
            live.upsert_entity(scope, entity)
        live.add_relation(
            scope,
            Relation(
                id="r1",
                tenant=scope.tenant,
                namespace="ns1",
                source=old_cafe,
                relation="likes",
                target=old_ann,
                t_created=from_us(T0),
            ),
        )
    assert live.relations_touching(A, ["café"], view) == []  # the gap the folding closes
    assert live.fold_entity_keys(A, batch=1) == {"relations": 1, "graph_nodes": 2, "entities": 2}
    assert sorted(e.key for e in live.list_entities(A)) == ["ann", "café"]
    [relation] = live.relations_touching(A, ["café"], view)
    assert (relation.source, relation.target) == ("café", "ann")
    assert live.hops(A, ["café"], 1, view) == {"café": 0, "ann": 1}
    assert live.fold_entity_keys(A) == {"relations": 0, "graph_nodes": 0, "entities": 0}
    assert sorted(e.key for e in live.list_entities(B)) == sorted([old_cafe, old_ann])
