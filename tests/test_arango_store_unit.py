"""ArangoStore's own logic against python-arango's interfaces, without a server.

The ``RecordingDB`` double stands in for python-arango's ``StandardDatabase`` ONLY to
record which registered query (and which bind variables) our code sends, and to raise real
python-arango exception objects so we can watch how the store reacts. It never returns
rows: every call it does not script to fail raises ``Sent`` after recording. Nothing here
pretends that AQL was executed; the live contract suite does that against a real server.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from arango.exceptions import AQLQueryExecuteError, TransactionCommitError
from arango.request import Request
from arango.response import Response

from attestor_arango.clock import OPEN, from_us
from attestor_arango.errors import (
    ConflictError,
    StoreError,
    TenantLeakError,
    ValidationError,
)
from attestor_arango.models import Entity, Memory, Provenance, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.arango.base import COLLECTIONS
from attestor_arango.store.arango.executor import ArangoQueryError, check_rows
from attestor_arango.store.arango.registry import Registry, strip_comments_and_strings
from attestor_arango.store.arango.store import ArangoStore
from attestor_arango.store.arango.vectors import SpaceState
from attestor_arango.store.protocol import EmbeddingSpace

REGISTRY = Registry.load()
T0 = 1_767_225_600_000_000
A = Scope("acme", "ns1")
VIEW = TemporalView(as_of=T0 + 10)


class Sent(Exception):
    """Raised by the double after recording a call: no result is ever fabricated."""


def server_error(code: int, status: int = 400) -> AQLQueryExecuteError:
    """A real python-arango exception, built the way the driver builds it from a response."""
    resp = Response("post", "http://127.0.0.1:8529/_api/cursor", {}, status, "error", "")
    resp.error_code = code
    resp.error_message = f"simulated server answer {code}"
    return AQLQueryExecuteError(resp, Request("post", "/_api/cursor"))


def commit_error() -> TransactionCommitError:
    resp = Response("put", "http://127.0.0.1:8529/_api/transaction/1", {}, 409, "error", "")
    resp.error_code = 1200
    resp.error_message = "write-write conflict"
    return TransactionCommitError(resp, Request("put", "/_api/transaction/1"))


class _AQL:
    def __init__(self, db: RecordingDB, owner: str) -> None:
        self.db, self.owner = db, owner

    def execute(self, query: str, bind_vars: dict[str, Any] | None = None, **options: Any) -> Any:
        self.db.log.append((self.owner, REGISTRY.name_of(query), dict(bind_vars or {})))
        self.db.options.append(dict(options))
        raise self.db.script.pop(0) if self.db.script else Sent(REGISTRY.name_of(query))


class RecordingTxn:
    def __init__(self, db: RecordingDB, options: dict[str, Any]) -> None:
        self.options = options
        self.aql = _AQL(db, "txn")
        self.committed = self.aborted = False
        self.commit_raises: Exception | None = None
        self.abort_raises: Exception | None = db.abort_raises

    def commit_transaction(self) -> bool:
        if self.commit_raises is not None:
            raise self.commit_raises
        self.committed = True
        return True

    def abort_transaction(self) -> bool:
        if self.abort_raises is not None:
            raise self.abort_raises
        self.aborted = True
        return True


class RecordingDB:
    name = "attestor_test"

    def __init__(self, *script: Exception) -> None:
        self.script = list(script)
        self.log: list[tuple[str, str | None, dict[str, Any]]] = []
        self.options: list[dict[str, Any]] = []
        self.aql = _AQL(self, "db")
        self.txns: list[RecordingTxn] = []
        self.begin_raises: Exception | None = None
        self.abort_raises: Exception | None = None

    def begin_transaction(self, **options: Any) -> RecordingTxn:
        if self.begin_raises is not None:
            raise self.begin_raises
        txn = RecordingTxn(self, options)
        self.txns.append(txn)
        return txn

    def names(self) -> list[str | None]:
        return [name for _, name, _ in self.log]


def make_store(db: RecordingDB, **options: Any) -> ArangoStore:
    return ArangoStore(db, **options)  # type: ignore[arg-type]


def memory(scope: Scope, mid: str = "m1") -> Memory:
    return Memory(
        id=mid,
        tenant=scope.tenant,
        namespace=scope.namespace or "ns1",
        content="fact",
        valid_from=from_us(T0),
        t_created=from_us(T0),
        provenance=Provenance(agent_id="a1", role="planner"),
        content_hash=content_hash("fact"),
    )


def big_indexed_tenant(store: ArangoStore, dim: int = 4, vectors: int = 50_000) -> None:
    """Feed the ANN decision its inputs directly (they would come from the server)."""
    store.space_state = lambda scope: SpaceState(EmbeddingSpace("t", dim))  # type: ignore[method-assign]
    store._tenant_vector_count = lambda scope: vectors  # type: ignore[method-assign]
    state = {"exists": True, "dimension": dim, "training_state": "ready"}
    store.vector_index = lambda refresh=False: dict(state)  # type: ignore[method-assign]


# the executor's locks --------------------------------------------------------------------------
def test_tenant_is_injected_from_the_scope() -> None:
    db = RecordingDB()
    with pytest.raises(Sent):
        make_store(db).get_memory(A, "m1")
    assert db.log == [("db", "memory_get", {"namespace": "ns1", "id": "m1", "tenant": "acme"})]


def test_caller_cannot_pass_tenant_or_wrong_params() -> None:
    db = RecordingDB()
    store = make_store(db)
    with pytest.raises(StoreError, match="must not pass 'tenant'"):
        store.executor.run("memory_get", A, {"namespace": "ns1", "id": "m", "tenant": "evil"})
    with pytest.raises(StoreError, match="missing \\['id'\\]"):
        store.executor.run("memory_get", A, {"namespace": "ns1"})
    with pytest.raises(StoreError, match="unexpected \\['x'\\]"):
        store.executor.run("memory_get", A, {"namespace": "ns1", "id": "m", "x": 1})
    with pytest.raises(StoreError, match="unknown AQL query"):
        store.executor.run("FOR d IN memories RETURN d", A, {})
    with pytest.raises(StoreError, match="admin"):
        store.executor.run("admin_vector_stats", A, {})
    assert db.log == []  # nothing reached the server


def test_integers_a_double_cannot_hold_are_refused_before_io() -> None:
    db = RecordingDB()
    with pytest.raises(ValidationError, match="not exactly representable"):
        make_store(db).close_memory(A, "m1", OPEN + 1, "archived", None)
    assert db.log == []


def test_check_rows_is_the_third_lock() -> None:
    good = [{"tenant": "acme", "namespace": "ns1", "id": "x"}, {"tenant": "acme"}]
    assert check_rows("q", A, good) == good
    with pytest.raises(TenantLeakError):
        check_rows("q", A, [{"tenant": "beta", "id": "x"}])
    with pytest.raises(TenantLeakError):
        check_rows("q", A, [{"tenant": "acme", "namespace": "ns2"}])
    with pytest.raises(TenantLeakError, match="without a tenant"):
        check_rows("q", A, [{"id": "x"}])
    with pytest.raises(TenantLeakError, match="without a tenant"):
        check_rows("q", A, [3])


def test_foreign_memory_is_refused_before_io() -> None:
    db = RecordingDB()
    with pytest.raises(TenantLeakError):
        make_store(db).insert_memory(A, memory(Scope("beta", "ns1")), None)
    assert db.log == []


# error codes -------------------------------------------------------------------------------
def test_ann_error_1554_falls_back_to_the_exact_query() -> None:
    db = RecordingDB(server_error(1554))
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(Sent, match="vector_exact"):
        store.vector_candidates(A, np.ones(4, dtype=np.float32), 5, VIEW)
    assert db.names() == ["vector_ann", "vector_exact"]
    ann, exact = db.log[0][2], db.log[1][2]
    assert ann.pop("n_probe") == store.n_probe
    assert ann == exact and exact["k"] == 5 and exact["tenant"] == "acme"


def test_unknown_approx_near_function_1540_falls_back_to_the_exact_query() -> None:
    """A server without --vector-index does not know APPROX_NEAR_COSINE (error 1540)."""
    db = RecordingDB(server_error(1540))
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(Sent, match="vector_exact"):
        store.vector_candidates(A, np.ones(4, dtype=np.float32), 5, VIEW)
    assert db.names() == ["vector_ann", "vector_exact"]


def test_other_ann_errors_are_not_swallowed() -> None:
    db = RecordingDB(server_error(1203, 404))
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(ArangoQueryError) as info:
        store.vector_candidates(A, np.ones(4, dtype=np.float32), 5, VIEW)
    assert info.value.error_code == 1203 and db.names() == ["vector_ann"]


@pytest.mark.parametrize(
    "vectors, state, expected",
    [
        (10, {"exists": True, "dimension": 4, "training_state": "ready"}, "vector_exact"),
        (50_000, {"exists": False}, "vector_exact"),
        (50_000, {"exists": True, "dimension": 4, "training_state": "training"}, "vector_exact"),
        (50_000, {"exists": True, "dimension": 8, "training_state": "ready"}, "vector_exact"),
        (50_000, {"exists": True, "dimension": 4}, "vector_ann"),  # <= 3.12.8: no state field
    ],
)
def test_vector_path_decision_reaches_the_wire(
    vectors: int, state: dict[str, Any], expected: str
) -> None:
    db = RecordingDB()
    store = make_store(db)
    big_indexed_tenant(store, vectors=vectors)
    store.vector_index = lambda refresh=False: dict(state)  # type: ignore[method-assign]
    with pytest.raises(Sent):
        store.vector_candidates(A, np.ones(4, dtype=np.float32), 5, VIEW)
    assert db.names() == [expected]


def test_inside_a_transaction_vectors_are_scanned_exactly_and_the_error_aborts() -> None:
    db = RecordingDB()
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(Sent), store.transaction():
        store.vector_candidates(A, np.ones(4, dtype=np.float32), 5, VIEW)
    assert db.log[0][:2] == ("txn", "vector_exact")
    assert db.txns[0].aborted and not db.txns[0].committed


def test_wrong_query_dimension_is_refused_before_io() -> None:
    db = RecordingDB()
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(ValidationError, match="dimension 4"):
        store.vector_candidates(A, np.ones(6, dtype=np.float32), 5, VIEW)
    assert db.log == []


def _entity() -> Entity:
    return Entity(tenant="acme", namespace="ns1", key="alice", name="Alice", aliases=("b", "a"))


def test_upsert_retries_unique_violations_outside_transactions() -> None:
    db = RecordingDB(server_error(1210, 409), server_error(1200, 409))
    with pytest.raises(Sent):
        make_store(db).upsert_entity(A, _entity())
    assert db.names() == ["entity_upsert"] * 3
    assert db.log[0][2]["doc"]["aliases"] == ["a", "b"]
    assert db.log[0][2] == db.log[2][2]  # the retry sends the same request


def test_upsert_gives_up_after_max_attempts_with_a_conflict() -> None:
    db = RecordingDB(server_error(1210, 409), server_error(1210, 409))
    with pytest.raises(ConflictError, match="1210"):
        make_store(db, max_attempts=2).upsert_entity(A, _entity())
    assert db.names() == ["entity_upsert"] * 2


def test_no_retry_inside_a_transaction_and_the_transaction_aborts() -> None:
    db = RecordingDB(server_error(1210, 409))
    store = make_store(db)
    with pytest.raises(ConflictError), store.transaction():
        store.upsert_entity(A, _entity())
    assert db.names() == ["entity_upsert"] and db.log[0][0] == "txn"
    assert db.txns[0].aborted and not db.txns[0].committed


def test_write_conflict_and_schema_violation_become_typed_errors() -> None:
    db = RecordingDB(server_error(1200, 409), server_error(1620))
    store = make_store(db)
    with pytest.raises(ConflictError, match="1200"):
        store.close_memory(A, "m1", T0 + 5, "archived", None)
    with pytest.raises(ValidationError, match="schema"):
        store.insert_memory(A, memory(A), None)
    assert db.names() == ["memory_close", "memory_insert"]


def test_duplicate_audit_seq_is_a_conflict_and_aborts_the_append() -> None:
    from attestor_arango.models import AuditEntry

    db = RecordingDB(server_error(1210, 409))
    store = make_store(db)
    entry = AuditEntry(
        tenant="acme", seq=1, id="x", ts=from_us(T0), agent_id="a", role="r",
        action="add", prev_hash="0" * 64, hash="h",
    )  # fmt: skip
    with pytest.raises(ConflictError):
        store.append_audit(A, entry)
    assert db.log[0][:2] == ("txn", "audit_append")
    assert db.log[0][2]["tenant"] == "acme" and "namespace" not in db.log[0][2]
    assert db.txns[0].aborted


# transactions ------------------------------------------------------------------------------
def test_transaction_routes_every_call_and_aborts_on_error() -> None:
    db = RecordingDB()
    store = make_store(db)
    with pytest.raises(RuntimeError), store.transaction():
        with pytest.raises(Sent):
            store.get_memory(A, "m1")
        raise RuntimeError("boom")
    [txn] = db.txns
    assert db.log[0][0] == "txn" and txn.aborted and not txn.committed
    assert set(txn.options["write"]) == set(COLLECTIONS)
    assert txn.options["allow_implicit"] is False
    assert not store.in_transaction


def test_commit_failure_aborts_and_reports() -> None:
    db = RecordingDB()
    store = make_store(db)
    with pytest.raises(StoreError, match="refused to commit"), store.transaction():
        db.txns[0].commit_raises = commit_error()
    assert db.txns[0].aborted and not store.in_transaction


# python-arango reports a server it cannot reach with an OSError (requests' ConnectionError,
# or ConnectionAbortedError after every host: arango/connection.py, process_request 8.3.x)
UNREACHABLE = ConnectionAbortedError("Can't connect to host(s) within limit (1)")


def test_a_lost_server_keeps_the_typed_error_when_the_abort_fails_too() -> None:
    db = RecordingDB(UNREACHABLE)
    db.abort_raises = UNREACHABLE
    store = make_store(db)
    with pytest.raises(StoreError, match="cannot reach ArangoDB for query 'memory_close'"):
        store.close_memory(A, "m1", T0 + 5, "archived", None)
    assert not store.in_transaction


def test_beginning_or_committing_against_a_lost_server_is_a_store_error() -> None:
    db = RecordingDB()
    db.begin_raises = UNREACHABLE
    store = make_store(db)
    with pytest.raises(StoreError, match="cannot begin"), store.transaction():
        pass
    db = RecordingDB()
    db.abort_raises = UNREACHABLE
    store = make_store(db)
    with pytest.raises(StoreError, match="may or may not have been applied"), store.transaction():
        db.txns[0].commit_raises = UNREACHABLE
    assert not store.in_transaction


def test_a_lost_server_while_listing_indexes_or_applying_the_schema_is_a_store_error() -> None:
    from attestor_arango.store.arango.schema import apply_schema

    class Lost(RecordingDB):
        def collection(self, name: str) -> Any:
            raise UNREACHABLE

        def role(self) -> str:
            raise UNREACHABLE

    store = make_store(Lost())
    with pytest.raises(StoreError, match="cannot list the indexes of memories"):
        store.vector_index(refresh=True)
    with pytest.raises(StoreError, match="applying the ArangoDB schema failed"):
        apply_schema(Lost())  # type: ignore[arg-type]


def test_nested_transactions_join_the_outer_one() -> None:
    db = RecordingDB()
    store = make_store(db)
    with store.transaction(), store.transaction():
        assert store.in_transaction
    assert len(db.txns) == 1 and db.txns[0].committed and not db.txns[0].aborted


# governance binds --------------------------------------------------------------------------
def test_purge_binds_only_allowlisted_collections() -> None:
    db = RecordingDB()
    store = make_store(db)
    with pytest.raises(ValidationError):
        store.purge_collection(A, "audit")
    with pytest.raises(StoreError, match="unknown collection"):
        store._count_in(A, "_users")
    assert db.log == [] and db.txns == []
    with pytest.raises(Sent):
        store.purge_collection(A, "episodes")
    assert db.log == [
        ("txn", "purge_collection", {"@collection": "episodes", "tenant": "acme", "batch": 5000})
    ]
    assert db.txns[0].aborted
    assert "audit" not in store.purge_collections()


def test_hops_validates_depth_and_picks_the_namespace_query() -> None:
    db = RecordingDB()
    store = make_store(db)
    with pytest.raises(ValidationError):
        store.hops(A, ["alice"], 5, VIEW)
    assert store.hops(A, ["alice", "bob"], 0, VIEW) == {"alice": 0, "bob": 0}
    assert db.log == []
    for scope, name in ((A, "graph_hops_ns"), (A.tenant_wide(), "graph_hops")):
        with pytest.raises(Sent):
            store.hops(scope, ["bob", "alice"], 2, VIEW)
        assert db.log[-1][1] == name and db.log[-1][2]["sources"] == ["alice", "bob"]


def test_relations_backed_validates_the_limit_and_binds_one_query() -> None:
    """The graph step's read is one registered query; a bad limit is refused and no keys
    answer empty, both before anything is sent."""
    db = RecordingDB()
    store = make_store(db)
    with pytest.raises(ValidationError):
        store.relations_backed(A, ["alice"], VIEW, [], -1)
    assert store.relations_backed(A, [], VIEW, ["m1"], 5).relations == ()
    assert db.log == []
    with pytest.raises(Sent):
        store.relations_backed(A, ["bob", "alice", "bob"], VIEW, ["m2", "m1"], 20)
    [(_, name, bind)] = db.log
    assert name == "relations_backed"
    assert (bind["keys"], bind["candidates"], bind["limit"]) == (["alice", "bob"], ["m1", "m2"], 20)
    assert (bind["tenant"], bind["namespace"], bind["as_of"]) == ("acme", "ns1", VIEW.as_of)


def test_text_lane_query_choice() -> None:
    db = RecordingDB()
    store = make_store(db, search_wait_for_sync=True)
    assert store.text_pool(A, "?!", 5, VIEW) == []
    assert db.log == []
    with pytest.raises(Sent):
        store.text_pool(A, "kubernetes", 5, VIEW)
    with pytest.raises(Sent), store.transaction():
        store.text_pool(A, "kubernetes", 5, VIEW)  # waitForSync is banned in txns
    assert db.names() == ["text_bm25_wait", "text_bm25"]
    assert db.log[0][2]["window_end"] == OPEN  # OPEN + 1 would not be a double


def test_insert_sends_a_keyless_document_with_the_vector() -> None:
    db = RecordingDB()
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(Sent):
        store.insert_memory(A, memory(A), np.array([1, 0, 0, 0], dtype=np.float32))
    [(_, name, bind)] = db.log
    assert name == "memory_insert" and bind["tenant"] == "acme"
    assert not any(k.startswith("_") for k in bind["doc"])
    assert bind["doc"]["vector"] == [1.0, 0.0, 0.0, 0.0] and bind["doc"]["t_expired"] == OPEN


def test_a_transaction_belongs_to_its_thread() -> None:
    import threading

    db = RecordingDB()
    store = make_store(db)
    seen: list[bool] = []
    with store.transaction():
        worker = threading.Thread(target=lambda: seen.append(store.in_transaction))
        worker.start()
        worker.join()
        with pytest.raises(Sent):
            store.get_memory(A, "m1")
    assert seen == [False] and db.log[0][0] == "txn"


def test_close_memory_runs_in_a_transaction_and_a_failure_aborts_it() -> None:
    """The relations step needs the close's row, which only a server can return; here we
    check that the close is transactional and that its failure stops before the relations
    query (the live contract test covers the closed relations)."""
    db = RecordingDB(server_error(1200, 409))
    with pytest.raises(ConflictError):
        make_store(db).close_memory(A, "m1", T0 + 10, "superseded", "m2")
    assert [(owner, name) for owner, name, _ in db.log] == [("txn", "memory_close")]
    assert db.txns[0].aborted and not db.txns[0].committed


# zero vectors (issue 15, item 5) ----------------------------------------------------------------
def test_a_zero_query_vector_is_scanned_exactly_not_asked_of_the_cosine_index() -> None:
    db = RecordingDB()
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(Sent):
        store.vector_candidates(A, np.zeros(4, dtype=np.float32), 5, VIEW)
    assert db.names() == ["vector_exact"]


_ZERO_GUARD = r"LENGTH\(\s*{arg}\[\*\s*FILTER\s+CURRENT\s*!=\s*0\s+LIMIT\s+1\]\)\s*==\s*0"


def test_every_cosine_similarity_call_is_guarded_against_zero_vectors() -> None:
    """COSINE_SIMILARITY of a zero vector warns (1561) and fail_on_warning fails the query;
    every call must sit in the else branch of a guard on each argument that can be zero."""
    import re

    calls = 0
    for query in REGISTRY:
        code = strip_comments_and_strings(query.text)
        for match in re.finditer(r"COSINE_SIMILARITY\(\s*([\w.@]+)\s*,\s*([\w.@]+)\s*\)", code):
            calls += 1
            before = code[: match.start()]
            guarded = [
                a for a in match.groups() if re.search(_ZERO_GUARD.format(arg=re.escape(a)), before)
            ]
            # the ANN query never sees a zero query vector (planned exact), the exact one may
            needed = match.groups() if query.name != "vector_ann" else match.groups()[:1]
            assert set(needed) <= set(guarded), f"{query.name}: unguarded {match.group(0)}"
    assert calls >= 2


# bounded, resumable purge (issue 15, item 6) ---------------------------------------------------
def test_purge_tenant_runs_each_step_outside_any_enclosing_transaction() -> None:
    db = RecordingDB()
    store = make_store(db)
    seen: list[tuple[str, bool]] = []

    def step(scope: Scope, collection: str) -> int:
        seen.append((collection, store.in_transaction))
        return 0

    store.purge_collection = step  # type: ignore[method-assign]
    store.purge_tenant(A)
    assert [c for c, _ in seen] == list(store.purge_collections())
    assert not any(inside for _, inside in seen) and db.txns == []


def test_each_purge_batch_is_bounded_and_its_own_transaction() -> None:
    db = RecordingDB()
    store = make_store(db, purge_batch=250)
    with pytest.raises(Sent):
        store.purge_collection(A, "vectors")
    assert db.log == [("txn", "purge_vectors", {"tenant": "acme", "batch": 250})]
    assert len(db.txns) == 1 and db.txns[0].aborted
    for name in ("purge_collection", "purge_vectors"):
        code = strip_comments_and_strings(REGISTRY.get(name).text)
        assert "LIMIT @batch" in code, name
    with pytest.raises(ValidationError):
        make_store(RecordingDB(), purge_batch=0)


def test_batches_repeat_until_one_comes_back_short() -> None:
    from attestor_arango.store.arango.planning import drain_in_batches

    left = [7]

    def remove_up_to_three() -> int:
        n = min(3, left[0])
        left[0] -= n
        return n

    assert drain_in_batches(remove_up_to_three, 3) == 7 and left == [0]
    assert drain_in_batches(lambda: 0, 3) == 0


# forcing the vector index on either optimizer rule order (issue 15, item 2) ---------------------
def test_the_ann_query_runs_without_the_use_indexes_rule_and_others_with_defaults() -> None:
    db = RecordingDB(server_error(1554))
    store = make_store(db)
    big_indexed_tenant(store)
    with pytest.raises(Sent):
        store.vector_candidates(A, np.ones(4, dtype=np.float32), 5, VIEW)
    assert db.names() == ["vector_ann", "vector_exact"]
    assert db.options[0]["optimizer_rules"] == ["-use-indexes"]
    assert db.options[1]["optimizer_rules"] is None and db.options[1]["fail_on_warning"]
    assert [q.name for q in REGISTRY if q.optimizer_rules] == ["vector_ann"]


def test_a_write_holds_its_embedding_space_in_its_own_transaction() -> None:
    """hold_embedding_space rewrites the space record in the write's transaction
    (aql/space_hold.aql): a re-embedding's flip committed meanwhile makes the server answer
    1200, which aborts the write's transaction with a ConflictError (nothing committed)."""
    db = RecordingDB(server_error(1200, 409))
    store = make_store(db)
    with pytest.raises(ConflictError, match="1200"), store.transaction():
        store.hold_embedding_space(A, EmbeddingSpace("m", 4))
    assert db.log == [("txn", "space_hold", {"tenant": "acme", "name": "m", "dimension": 4})]
    assert db.txns[0].aborted and not db.txns[0].committed
