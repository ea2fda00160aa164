"""A small vector index keeps its rows as float64 unit vectors (exact.UnitRows), each row
divided once; freshness reads them (``StoredRows.units``) instead of dividing the lanes'
rows on every run. What the index hands out must be what freshness's own division of the
rows gives (``unit_rows`` over the float32 rows), bit for bit, as rows arrive and with zero
rows; nothing past the widening limit; and the step must rank as before."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from retrieval_fakes import mem
from test_freshness_few import _case
from test_freshness_rows import _state, _stored

from attestor_arango import AgentContext
from attestor_arango.clock import OPEN, ManualClock
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import pipeline
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.completion import VectorCache, cosines
from attestor_arango.retrieval.freshness import StoredRows, apply_freshness, unit_rows
from attestor_arango.scope import Scope
from attestor_arango.store.embedded.exact import WideRows
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.embedded.vectors import TenantVectors

DIM = 24


def _divided_here(index: TenantVectors, rows: np.ndarray) -> np.ndarray:
    """Freshness's own unit rows of ``rows`` (the float32 rows, widened and divided)."""
    ids = [f"r{r}" for r in range(index.n)]
    matrix = index.float_rows(np.arange(index.n), np.float32)
    cands = [Candidate(memory=mem(f"r{r}", "text")) for r in rows.tolist()]
    return unit_rows(cands, StoredRows(ids, matrix))


@pytest.mark.parametrize("seed", range(4))
def test_the_kept_unit_rows_are_the_rows_freshness_divides(seed: int) -> None:
    rng = np.random.default_rng(seed)
    index = TenantVectors(DIM, capacity=8)
    for _ in range(10):
        for i in range(index.n, index.n + int(rng.integers(1, 30))):
            vector = rng.standard_normal(DIM).astype(np.float32) * rng.choice([1e-3, 1.0, 40.0])
            if i % 11 == 3:
                vector[:] = 0.0  # a zero row stays zero
            index.add(f"m{i:04d}", "n", vector, 10 + i, OPEN, 0, OPEN)
        rows = rng.integers(0, index.n, size=int(rng.integers(1, 60)))
        got = index.unit_rows(rows)
        assert got is not None and got.dtype == np.float64
        assert got.tobytes() == _divided_here(index, rows).tobytes()
        assert index.units.n == index.n  # every row divided once, as rows arrive


def test_an_index_past_the_widening_limit_keeps_no_unit_rows() -> None:
    rng = np.random.default_rng(3)
    index = TenantVectors(DIM)
    index.wide = WideRows(limit=30 * DIM * 8)  # 30 rows
    for i in range(40):
        index.add(f"m{i:04d}", "n", rng.standard_normal(DIM).astype(np.float32), i, OPEN, 0, OPEN)
    assert index.unit_rows(np.array([1, 2])) is None and index.units.n == 0


def _per_row(
    vectors: dict[str, np.ndarray], asked: list[list[str]]
) -> Callable[[list[str]], np.ndarray]:
    """A backend's kept unit rows: each row divided on its own (``unit_rows`` of one)."""

    def units(ids: list[str]) -> np.ndarray:
        asked.append(ids)
        one = [unit_rows([Candidate(memory=mem(i, "t"))], {i: vectors[i]}) for i in ids]
        return np.concatenate(one)

    return units


@pytest.mark.parametrize("seed", range(150))
def test_freshness_over_kept_unit_rows_equals_dividing_the_rows(seed: int) -> None:
    got, vectors, config, asked = _case(seed, quick=seed % 2 == 1)
    want, _, _, _ = _case(seed, quick=seed % 2 == 1)
    if not vectors:
        return
    plain = _stored(vectors, random.Random(seed))
    calls: list[list[str]] = []
    kept = StoredRows(list(plain.place), plain.matrix, units=_per_row(vectors, calls))
    apply_freshness(got, kept, config, asked)
    apply_freshness(want, plain, config, asked)
    assert _state(got) == _state(want)
    held = [c for c in got if c.id in vectors]
    assert unit_rows(held, kept).tobytes() == unit_rows(held, plain).tobytes()
    assert calls[-1] == [c.id for c in held]  # read from the backend, not divided here


def test_the_store_hands_its_unit_rows_to_freshness(tmp_path: Path) -> None:
    clock = ManualClock()
    memory = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(32), clock=clock)
    ctx = AgentContext(agent_id="a", tenant="acme", namespace="n")
    for i in range(30):
        clock.advance(seconds=1)
        memory.add(f"note {i} about {['harbour', 'violin', 'ember'][i % 3]} {i}", context=ctx)
    store = memory.store
    assert isinstance(store, SQLiteStore)
    scope = Scope("acme", "n")
    ids = [m.id for m in memory.list(context=ctx, limit=100)]
    memory.recall("violin ember", context=ctx)  # a search: the index keeps its rows widened
    cache = VectorCache()
    cosines(store, scope, HashingEmbedder(32).embed(["violin"])[0], ids, cache)
    cands = [Candidate(memory=m) for m in store.get_memories(scope, ids[2:25:2]).values()]
    got = pipeline._vectors(store, scope, cands, {}, cache)
    assert isinstance(got, StoredRows) and got.units is not None
    plain = StoredRows(list(got.place), got.matrix)
    assert unit_rows(cands, got).tobytes() == unit_rows(cands, plain).tobytes()
    assert store.vector_units(scope, [*ids[:3], "no-such-id"]) is None
    assert store.vector_units(Scope("acme", "other"), ids[:3]) is None
    index = store.caches.tenant_vectors("acme")
    assert index is not None and store.vector_units(scope, ids[:3]) is not None
    index.wide = WideRows(limit=0)  # an index too large to keep its rows widened
    assert store.vector_units(scope, ids[:3]) is None
    cache = VectorCache()  # and the pipeline does not ask it for them
    cosines(store, scope, HashingEmbedder(32).embed(["violin"])[0], ids, cache)
    got = pipeline._vectors(store, scope, cands, {}, cache)
    assert isinstance(got, StoredRows) and got.units is None and not cache.widened_by_store
    memory.close()
