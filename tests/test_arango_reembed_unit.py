"""ArangoDB's re-embedding swap in bounded steps (store/arango/vectors.py), without a server.

The store runs through its real ``transaction()`` over the recording double of
test_arango_store_unit.py, so every query is seen with the transaction it ran in. The
queries' answers come from ``Model``, a few lines that apply what each re-embedding query's
file says it does (aql/vector_stage.aql, vector_flip.aql, vector_move.aql,
vector_settle.aql, space_get.aql, memory_vector_count.aql) to a handful of rows: enough to
check the order of the steps, their bounds, and what a crash between any two of them
leaves. Whether the AQL does what its file says is the live test's job
(tests/test_arango_live.py, with ARANGO_URL or Docker).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from attestor_arango.errors import ConflictError, StoreError, ValidationError
from attestor_arango.scope import Scope
from attestor_arango.store.arango.docs import memory_to_arango
from attestor_arango.store.arango.planning import VPACK_DOUBLE_BYTES, reembed_batch_rows
from attestor_arango.store.arango.vectors import SpaceState, space_key
from attestor_arango.store.protocol import EmbeddingSpace
from tests.test_arango_store_unit import VIEW, RecordingDB, Sent, make_store, memory

ACME = Scope("acme")
OLD = EmbeddingSpace("old-model", 4)
NEW = EmbeddingSpace("new-model", 4)
STEPS = ("vector_stage", "vector_flip", "vector_move", "vector_settle")


class Crash(StoreError):
    """The connection lost at a chosen query: that query did not run."""


class Model:
    """One tenant's rows and space record, changed only as the query files say."""

    def __init__(self, n: int) -> None:
        self.rows: dict[str, dict[str, Any]] = {
            f"m{i:02d}": {"vector": ("old", i)} for i in range(n)
        }
        self.space: dict[str, Any] = {"name": OLD.name, "dimension": OLD.dimension}
        self.calls: list[tuple[int | None, str, dict[str, Any]]] = []
        self.crash_at: int | None = None
        self.flips = 0

    def attach(self, store: Any) -> None:
        def run(name: str, scope: Scope, params: dict[str, Any]) -> list[dict[str, Any]]:
            assert scope.tenant == "acme" and scope.namespace is None
            txn = store._local.txn
            self.calls.append((None if txn is None else id(txn), name, dict(params)))
            if self.crash_at is not None and len(self.calls) > self.crash_at:
                raise Crash(f"connection lost before {name}")
            return self.answer(name, params)

        store._run = run

    def answer(self, name: str, p: dict[str, Any]) -> list[dict[str, Any]]:
        row = {"tenant": "acme"}
        if name == "space_get":
            s = self.space
            return [{**row, **s, "moving": s.get("moving", False)}]
        if name == "vector_stage":
            hit = [i for i in p["items"] if self.rows.get(i["id"], {}).get("vector")]
            for item in hit:
                self.rows[item["id"]]["vector_next"] = (p["space"], item["vector"])
            return [row for _ in hit]
        if name == "vector_flip":
            held = [r for r in self.rows.values() if r.get("vector")]
            staged = all(r.get("vector_next", ("",))[0] == p["space"] for r in held)
            if not staged or len(held) != p["count"]:
                return []
            self.flips += 1
            self.space = {
                "name": p["name"],
                "dimension": p["dimension"],
                "moving": True,
                "moving_from": {"name": self.space["name"], "dimension": self.space["dimension"]},
            }
            return [{**row, "held": len(held)}]
        if name == "vector_move":
            todo = [r for r in self.rows.values() if r.get("vector_next")][: p["batch"]]
            for r in todo:
                space, vector = r.pop("vector_next")
                if space == p["space"]:
                    r["vector"] = vector
            return [row for _ in todo]
        if name == "vector_settle":
            left = any(r.get("vector_next") for r in self.rows.values())
            same = (self.space["name"], self.space["dimension"]) == (p["name"], p["dimension"])
            if left or not same:
                return []
            self.space = {"name": p["name"], "dimension": p["dimension"]}
            return [row]
        if name == "memory_vector_count":
            n = sum(1 for r in self.rows.values() if r.get("vector") or r.get("vector_next"))
            return [{**row, "n": n}]
        raise AssertionError(f"unexpected query {name}")

    def seen_by_readers(self) -> set[str]:
        """The spaces of the vectors vector_exact / memory_vectors would rank together."""
        moving = self.space.get("moving", False)
        spaces = set()
        for r in self.rows.values():
            staged = r.get("vector_next")
            vector = staged[1] if moving and staged else r["vector"]
            spaces.add("new" if isinstance(vector, list) else "old")
        return spaces


def new_vectors(model: Model) -> dict[str, np.ndarray]:
    return {mid: np.full(4, i + 1, dtype=np.float32) for i, mid in enumerate(sorted(model.rows))}


def store_for(model: Model, **options: Any) -> Any:
    store = make_store(RecordingDB(), **options)
    store.vector_index = lambda refresh=False: {"exists": False}  # type: ignore[method-assign]
    model.attach(store)
    return store


def queries(model: Model) -> list[str]:
    return [name for _, name, _ in model.calls]


# bounded transactions ------------------------------------------------------------------------
def test_every_step_is_its_own_bounded_transaction_and_the_switch_happens_once() -> None:
    model = Model(23)
    store = store_for(model, reembed_batch=5)
    assert store.replace_vectors(ACME, NEW, [new_vectors(model)]) == 23
    names = queries(model)
    assert names.count("vector_stage") == 5 and names.count("vector_flip") == 1
    assert names.count("vector_move") == 5 and names.count("vector_settle") == 1
    assert names.index("vector_flip") > max(i for i, n in enumerate(names) if n == "vector_stage")
    assert names.index("vector_flip") < names.index("vector_move")
    per_txn: dict[int, list[str]] = {}
    for txn, name, params in model.calls:
        if name in STEPS:
            assert txn is not None, f"{name} ran outside a transaction"
            per_txn.setdefault(txn, []).append(name)
        if name == "vector_stage":
            assert len(params["items"]) <= 5 and params["space"] == space_key(NEW)
        if name == "vector_move":
            assert params["batch"] == 5
    assert all(len(steps) == 1 for steps in per_txn.values())  # one step a transaction
    assert model.flips == 1 and model.space == {"name": NEW.name, "dimension": 4}
    assert model.seen_by_readers() == {"new"}
    assert not any("vector_next" in r for r in model.rows.values())


def test_a_transaction_carries_at_most_the_byte_budget_of_vectors() -> None:
    dim = 1536
    per_row = 2 * VPACK_DOUBLE_BYTES * dim
    rows = reembed_batch_rows(dim, max_rows=500, max_bytes=10 * per_row + 1)
    assert rows == 10
    assert reembed_batch_rows(dim, max_rows=3, max_bytes=10**9) == 3
    assert reembed_batch_rows(dim, max_rows=500, max_bytes=1) == 1  # one row always goes
    # the store's defaults keep a 3072-d batch well inside 128 MiB (pre-3.12.4 servers)
    store = make_store(RecordingDB())
    big = EmbeddingSpace("large", 3072)
    assert store.batch_rows(big) * 2 * VPACK_DOUBLE_BYTES * 3072 <= 64 * 2**20

    model = Model(7)
    store = store_for(model, reembed_batch=500, reembed_batch_bytes=2 * 2 * VPACK_DOUBLE_BYTES * 4)
    store.replace_vectors(ACME, NEW, [new_vectors(model)])
    staged = [len(p["items"]) for _, n, p in model.calls if n == "vector_stage"]
    assert staged == [2, 2, 2, 1]
    assert {p["batch"] for _, n, p in model.calls if n == "vector_move"} == {2}
    with pytest.raises(ValidationError):
        make_store(RecordingDB(), reembed_batch=0)


def test_a_tenant_without_vectors_switches_at_once() -> None:
    model = Model(0)
    store = store_for(model)
    assert store.replace_vectors(ACME, NEW, []) == 0
    assert queries(model) == [
        "space_get", "vector_flip", "vector_move", "vector_settle", "memory_vector_count"
    ]  # fmt: skip
    assert model.space == {"name": NEW.name, "dimension": 4}


# a crash between any two steps ----------------------------------------------------------------
def _full_run_length() -> int:
    model = Model(9)
    store_for(model, reembed_batch=4).replace_vectors(ACME, NEW, [new_vectors(model)])
    return len(model.calls)


@pytest.mark.parametrize("crash_at", range(_full_run_length()))
def test_a_crash_at_any_step_leaves_one_space_and_the_next_run_finishes(crash_at: int) -> None:
    model = Model(9)
    vectors = new_vectors(model)
    store = store_for(model, reembed_batch=4)
    model.crash_at = crash_at
    with pytest.raises(Crash):
        store.replace_vectors(ACME, NEW, [vectors])
    assert all(txn.aborted or txn.committed for txn in store.database.txns)
    assert not store.in_transaction
    # readers rank in one space, the recorded one
    flipped = model.space["name"] == NEW.name
    assert model.seen_by_readers() == {"new" if flipped else "old"}
    assert model.flips == (1 if flipped else 0)
    done = "moving" not in model.space and flipped  # only the closing count was lost

    model.crash_at = None
    assert store.replace_vectors(ACME, NEW, [vectors]) == 9
    # switched once across the crash and the resumed run (a finished swap asked again is a
    # new swap of its own)
    assert model.flips == (2 if done else 1)
    assert model.space == {"name": NEW.name, "dimension": 4}
    assert model.seen_by_readers() == {"new"}
    assert not any("vector_next" in r for r in model.rows.values())


def test_finish_vector_move_completes_a_switched_move_and_says_what_it_left() -> None:
    model = Model(6)
    store = store_for(model, reembed_batch=4)
    assert store.finish_vector_move(ACME) is None  # nothing pending: nothing sent but a read
    assert queries(model) == ["space_get"]
    model.crash_at = 5  # the read above, replace's read, 2 stage batches and the flip run
    with pytest.raises(Crash):
        store.replace_vectors(ACME, NEW, [new_vectors(model)])
    assert model.space["moving"] is True
    model.crash_at = None
    assert store.finish_vector_move(ACME) == OLD
    assert model.space == {"name": NEW.name, "dimension": 4} and model.flips == 1
    assert model.seen_by_readers() == {"new"}


# rows written meanwhile ---------------------------------------------------------------------
def test_a_row_written_meanwhile_stops_the_switch_and_readers_stay_in_the_old_space() -> None:
    model = Model(5)
    vectors = new_vectors(model)
    store = store_for(model, reembed_batch=2)
    model.rows["late"] = {"vector": ("old", 99)}  # an old-embedder process wrote one
    with pytest.raises(ConflictError, match="nothing was switched"):
        store.replace_vectors(ACME, NEW, [vectors])
    assert model.flips == 0 and model.space == {"name": OLD.name, "dimension": 4}
    assert model.seen_by_readers() == {"old"}
    vectors["late"] = np.full(4, 9, dtype=np.float32)  # core/reembed.py embeds it, tries again
    assert store.replace_vectors(ACME, NEW, [vectors]) == 6
    assert model.flips == 1 and model.seen_by_readers() == {"new"}


def test_a_row_deleted_meanwhile_is_a_conflict_before_the_switch() -> None:
    model = Model(5)
    vectors = new_vectors(model)
    del model.rows["m03"]
    store = store_for(model, reembed_batch=2)
    with pytest.raises(ConflictError, match="no vector any more"):
        store.replace_vectors(ACME, NEW, [vectors])
    assert "vector_flip" not in queries(model) and model.seen_by_readers() == {"old"}


def test_a_vector_of_the_wrong_shape_or_an_index_of_another_dimension_changes_nothing() -> None:
    model = Model(3)
    store = store_for(model)
    bad = {**new_vectors(model), "m01": np.ones(5, dtype=np.float32)}
    with pytest.raises(ValidationError, match="dimension 4"):
        store.replace_vectors(ACME, NEW, [bad])
    # the batch is checked as it is read, before it is staged: nothing staged, no switch
    assert "vector_stage" not in queries(model) and "vector_flip" not in queries(model)
    assert model.seen_by_readers() == {"old"}
    model.calls.clear()
    store.vector_index = lambda refresh=False: {"exists": True, "dimension": 4}
    wider = EmbeddingSpace("wide", 8)
    eights = {m: np.ones(8, dtype=np.float32) for m in model.rows}
    with pytest.raises(ValidationError, match="another dimension"):
        store.replace_vectors(ACME, wider, [eights])
    assert queries(model) == []


# bounded memory ------------------------------------------------------------------------------
def test_batches_are_read_one_at_a_time_each_staged_before_the_next_is_read() -> None:
    model = Model(9)
    vectors = new_vectors(model)
    store = store_for(model, reembed_batch=500)
    ids = sorted(vectors)
    staged_when_read: list[int] = []

    def batches() -> Iterator[dict[str, np.ndarray]]:
        for start in range(0, len(ids), 4):
            staged_when_read.append(queries(model).count("vector_stage"))
            yield {m: vectors[m] for m in ids[start : start + 4]}

    assert store.replace_vectors(ACME, NEW, batches()) == 9
    assert staged_when_read == [0, 1, 2]  # batch k is asked for once k-1 is staged
    assert model.flips == 1 and model.seen_by_readers() == {"new"}


def test_an_id_given_in_two_batches_is_a_conflict_before_the_switch() -> None:
    model = Model(3)
    vectors = new_vectors(model)
    store = store_for(model)
    twice = [{"m00": vectors["m00"], "m01": vectors["m01"]}, {"m00": vectors["m00"]}]
    with pytest.raises(ConflictError, match="given twice"):
        store.replace_vectors(ACME, NEW, twice)
    assert "vector_flip" not in queries(model) and model.seen_by_readers() == {"old"}


# readers ------------------------------------------------------------------------------------
def _indexed(store: Any, states: list[SpaceState]) -> None:
    store._tenant_vector_count = lambda scope: 50_000
    ready = {"exists": True, "dimension": 4, "training_state": "ready"}
    store.vector_index = lambda refresh=False: dict(ready)
    store.space_state = lambda scope: states.pop(0) if len(states) > 1 else states[0]


def test_a_moving_tenant_is_scanned_exactly() -> None:
    db = RecordingDB()
    store = make_store(db)
    _indexed(store, [SpaceState(NEW, moving=True, moving_from=OLD)])
    with pytest.raises(Sent):
        store.vector_candidates(ACME, np.ones(4, dtype=np.float32), 5, VIEW)
    assert db.names() == ["vector_exact"]


class Answering(RecordingDB):
    """Answers the ANN query with ``k`` rows (an ANN query that found enough)."""

    def __init__(self) -> None:
        super().__init__()
        outer = self

        class _AQL:
            def execute(self, query: str, bind_vars: dict[str, Any], **options: Any) -> Any:
                from tests.test_arango_store_unit import REGISTRY

                name = REGISTRY.name_of(query)
                outer.log.append(("db", name, dict(bind_vars)))
                if name != "vector_ann":
                    raise Sent(name)
                return [
                    {**memory_to_arango(memory(Scope("acme", "ns1"), f"m{i}"), None),
                     "lane_score": 0.5}
                    for i in range(bind_vars["k"])
                ]  # fmt: skip

        self.aql = _AQL()  # type: ignore[assignment]


def test_an_ann_answer_read_across_a_switch_is_dropped_for_the_exact_scan() -> None:
    db = Answering()
    store = make_store(db)
    switched = SpaceState(NEW, moving=True, moving_from=OLD)
    _indexed(store, [SpaceState(OLD), switched])  # read before the query, then after it
    with pytest.raises(Sent, match="vector_exact"):
        store.vector_candidates(ACME, np.ones(4, dtype=np.float32), 2, VIEW)
    assert db.names() == ["vector_ann", "vector_exact"]


def test_an_untrained_index_1555_falls_back_to_the_exact_query() -> None:
    from tests.test_arango_store_unit import server_error

    db = RecordingDB(server_error(1555))
    store = make_store(db)
    _indexed(store, [SpaceState(OLD)])
    with pytest.raises(Sent, match="vector_exact"):
        store.vector_candidates(ACME, np.ones(4, dtype=np.float32), 5, VIEW)
    assert db.names() == ["vector_ann", "vector_exact"]
