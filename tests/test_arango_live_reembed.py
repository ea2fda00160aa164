"""Re-embedding's bounded swap and the background index rebuild against a real ArangoDB
(ARANGO_URL, or a testcontainers container when Docker answers; otherwise every test skips
with the reason). The unit tests (test_arango_reembed_unit.py) check the order and bounds
of the steps against a model of what each query file says; here the AQL itself runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from attestor_arango.errors import ConflictError, StoreError
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.arango.executor import Executor
from attestor_arango.store.arango.schema import ensure_vector_index
from attestor_arango.store.arango.store import ArangoStore
from attestor_arango.store.protocol import EmbeddingSpace
from tests.support.arango_server import fresh_store, session_server
from tests.test_arango_live import T0, _memory

pytestmark = pytest.mark.arango
A, B = Scope("acme", "ns1"), Scope("beta", "ns1")
DIM = 16
OLD, NEW = EmbeddingSpace("old-model", DIM), EmbeddingSpace("new-model", DIM)
VIEW = TemporalView(as_of=T0 + 1)


@pytest.fixture
def live(request: pytest.FixtureRequest) -> Iterator[ArangoStore]:
    """A store on a fresh database of the session's server; skips with the reason when
    there is no server (tests/support/arango_server.py)."""
    store, drop = fresh_store(session_server(request.config))
    try:
        yield store
    finally:
        store.close()
        drop()


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _fill(store: ArangoStore, scope: Scope, n: int, seed: int) -> dict[str, np.ndarray]:
    store.set_embedding_space(scope, OLD)
    vectors = _unit(np.random.default_rng(seed), n)
    out = {}
    for i, v in enumerate(vectors):
        mid = f"{scope.tenant}-{i:03d}"
        store.insert_memory(scope, _memory(scope, mid, f"fact {i}"), v)
        out[mid] = v
    return out


def _staged_left(store: ArangoStore) -> int:
    cursor = store.database.aql.execute(
        "FOR m IN memories FILTER m.vector_next != null COLLECT WITH COUNT INTO n RETURN n"
    )
    return int(next(iter(cursor), 0))  # type: ignore[arg-type]


def _spy(store: ArangoStore, fail_after: dict[str, int] | None = None) -> list[str]:
    sent: list[str] = []
    real = store.executor.run

    def run(name: str, scope: Scope, params: Any) -> Any:
        sent.append(name)
        if fail_after and sent.count(name) > fail_after.get(name, 10**9):
            raise StoreError(f"simulated lost connection before {name}")
        return real(name, scope, params)

    store.executor.run = run  # type: ignore[method-assign]
    return sent


def test_a_swap_runs_in_bounded_steps_and_leaves_other_tenants_alone(live: ArangoStore) -> None:
    old_a = _fill(live, A, 40, 1)
    old_b = _fill(live, B, 10, 2)
    new_a = {mid: -v for mid, v in old_a.items()}
    live.reembed_batch = 7
    sent = _spy(live)
    assert live.replace_vectors(A, NEW, [new_a]) == 40
    assert sent.count("vector_stage") == 6 and sent.count("vector_flip") == 1
    assert sent.count("vector_move") == 6 and sent.count("vector_settle") == 1
    state = live.space_state(A)
    assert state is not None and state.space == NEW and not state.moving
    got = live.get_vectors(A, sorted(new_a))
    for mid, want in new_a.items():
        np.testing.assert_allclose(got[mid], want, atol=1e-6)
    assert _staged_left(live) == 0
    assert live.get_embedding_space(B) == OLD
    got_b = live.get_vectors(B, sorted(old_b))
    for mid, want in old_b.items():
        np.testing.assert_allclose(got_b[mid], want, atol=1e-6)


def test_a_tenant_without_vectors_switches_at_once(live: ArangoStore) -> None:
    """The flip counts the tenant's vectors with COLLECT WITH COUNT, whose answer on no
    input is guarded (NOT_NULL(FIRST(...), 0)) whether the server gives [0] or []."""
    live.set_embedding_space(A, OLD)
    assert live.replace_vectors(A, NEW, []) == 0
    state = live.space_state(A)
    assert state is not None and state.space == NEW and not state.moving


def test_a_crash_after_the_switch_reads_the_new_space_and_the_next_run_finishes(
    live: ArangoStore,
) -> None:
    old_a = _fill(live, A, 30, 3)
    new_a = {mid: -v for mid, v in old_a.items()}
    live.reembed_batch = 8
    _spy(live, fail_after={"vector_move": 1})  # one batch moved, then the connection goes
    with pytest.raises(StoreError, match="simulated"):
        live.replace_vectors(A, NEW, [new_a])
    state = live.space_state(A)
    assert state is not None and state.moving and state.space == NEW and state.moving_from == OLD
    assert 0 < _staged_left(live) < 30
    # readers: every vector of the tenant is the new one, moved or still staged
    got = live.get_vectors(A, sorted(new_a))
    for mid, want in new_a.items():
        np.testing.assert_allclose(got[mid], want, atol=1e-6)
    hits = live.vector_candidates(A, new_a["acme-029"], 3, VIEW)  # exact scan while moving
    assert hits[0].memory.id == "acme-029" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    [raw] = live._run("memory_get", A, {"namespace": "ns1", "id": "acme-029"})
    assert "vector" not in raw and "vector_next" not in raw  # rows carry no vectors
    del live.executor.run  # the connection is back
    assert live.finish_vector_move(A) == OLD
    state = live.space_state(A)
    assert state is not None and not state.moving and _staged_left(live) == 0


def test_a_row_written_before_the_switch_stops_it_and_nothing_readers_see_changes(
    live: ArangoStore,
) -> None:
    old_a = _fill(live, A, 12, 4)
    new_a = {mid: -v for mid, v in old_a.items()}
    late = _unit(np.random.default_rng(5), 1)[0]
    live.insert_memory(A, _memory(A, "acme-late", "written by an old process"), late)
    with pytest.raises(ConflictError, match="nothing was switched"):
        live.replace_vectors(A, NEW, [new_a])
    assert live.get_embedding_space(A) == OLD
    hits = live.vector_candidates(A, old_a["acme-004"], 1, VIEW)
    assert hits[0].memory.id == "acme-004" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    new_a["acme-late"] = -late
    assert live.replace_vectors(A, NEW, [new_a]) == 13
    assert live.get_embedding_space(A) == NEW and _staged_left(live) == 0


def test_a_purge_removes_staged_vectors_too(live: ArangoStore) -> None:
    old_a = _fill(live, A, 6, 6)
    live.reembed_batch = 2
    _spy(live, fail_after={"vector_flip": 0})  # staged, never switched
    with pytest.raises(StoreError):
        live.replace_vectors(A, NEW, [{mid: -v for mid, v in old_a.items()}])
    assert _staged_left(live) == 6
    del live.executor.run  # the connection is back
    live.purge_tenant(A)
    assert sum(live.tenant_residue(A).values()) == 0 and _staged_left(live) == 0


def test_the_index_rebuilds_in_the_background_while_rows_are_written(live: ArangoStore) -> None:
    _fill(live, A, 300, 7)
    db = live.database
    executor = Executor(live.executor.registry, lambda: db)
    assert ensure_vector_index(db, executor, min_docs=1)["status"] == "created"
    extra = _unit(np.random.default_rng(8), 20)
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for i, v in enumerate(extra):
                live.insert_memory(A, _memory(A, f"acme-new-{i}", f"written during {i}"), v)
        except BaseException as exc:  # reported below
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    report = ensure_vector_index(db, executor, min_docs=1, rebuild=True)
    writer.join()
    assert errors == [] and report["status"] == "rebuilt", report
    # queries during and after the rebuild: answered (the exact scan while it was not ready)
    live.vector_index(refresh=True)
    hits = live.vector_candidates(A, extra[3], 1, VIEW)
    assert hits[0].memory.id == "acme-new-3"


def test_a_writer_holding_the_old_space_cannot_commit_after_the_switch(
    live: ArangoStore,
) -> None:
    """The late writer: a write transaction that began on the old space and holds it after
    a re-embedding switched the tenant (another store, its own transactions) is refused,
    by a write-write conflict on the space record (the transaction's snapshot still shows
    the old space) or by the record's new space; its old-space row is never committed."""
    vectors = {mid: -v for mid, v in _fill(live, A, 5, seed=3).items()}
    writer = ArangoStore(live.database)
    refused: list[str] = []
    try:
        with writer.transaction():
            assert writer.get_memory(A, "acme-000") is not None  # the writer's snapshot
            assert live.replace_vectors(A, NEW, [vectors]) == 5
            held = writer.hold_embedding_space(A, OLD)
            if not held:
                refused.append("other space")
                raise ConflictError("refused")
            writer.insert_memory(A, _memory(A, "late", "a late fact"), vectors["acme-000"])
    except ConflictError as exc:
        refused.append(str(exc))
    assert refused, "the write holding the old space committed after the switch"
    assert live.get_memory(A, "late") is None
    assert live.get_embedding_space(A) == NEW
