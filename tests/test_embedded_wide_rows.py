"""A small vector index keeps its rows widened to float64 (exact.WideRows): what it hands
out equals widening the float32 rows as they are read, bit for bit, as rows arrive, for a
persisted index once its rows are checked, and not at all past its limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import OPEN, ManualClock
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.completion import VectorCache, cosines
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import indexfile
from attestor_arango.store.embedded.exact import WideRows
from attestor_arango.store.embedded.indexfile import IndexFile, IndexFileError
from attestor_arango.store.embedded.persisted import sections_of
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.embedded.vector_sections import vectors_from_sections
from attestor_arango.store.embedded.vectors import TenantVectors

DIM = 24
VIEW = TemporalView(as_of=10**9)


def _add(index: TenantVectors, rng: np.random.Generator, first: int, n: int) -> None:
    for i in range(first, first + n):
        vector = rng.standard_normal(DIM).astype(np.float32)
        index.add(f"m{i:04d}", "n", vector, 10 + i, OPEN, 0, OPEN)


def _plain(index: TenantVectors, rows: np.ndarray) -> np.ndarray:
    """The rows widened as they are read (what ``float_rows`` did before)."""
    return index.float_rows(rows, np.float32).astype(np.float64)


def _mapped(path: Path, meta: dict[str, object], arrays: dict[str, Any]) -> TenantVectors:
    """The index of ``meta``/``arrays`` written to ``path`` and read back memory-mapped, as
    a store reopening its persisted index reads it (rows checked as they are read)."""
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path)
    return vectors_from_sections({k: f.section(k) for k in f.names()}, f.meta)


@pytest.mark.parametrize("seed", range(4))
def test_the_rows_kept_widened_are_the_rows_widened_as_rows_arrive(seed: int) -> None:
    rng = np.random.default_rng(seed)
    index = TenantVectors(DIM, capacity=8)
    plain = TenantVectors(DIM, capacity=8)
    plain.wide = WideRows(limit=0)  # keeps nothing: every row widened as it is read
    for step in range(12):
        first = index.n
        n = int(rng.integers(1, 40))
        _add(index, np.random.default_rng(seed * 100 + step), first, n)
        _add(plain, np.random.default_rng(seed * 100 + step), first, n)
        rows = rng.integers(0, index.n, size=int(rng.integers(0, 60)))
        got = index.float_rows(rows)
        assert got.dtype == np.float64 and got.shape == (rows.size, DIM)
        assert got.tobytes() == _plain(index, rows).tobytes()
        assert index.wide.n == index.n  # from the kept rows
        assert plain.wide.n == 0 and plain.wide.values.size == 0
        q = rng.standard_normal(DIM).astype(np.float32)
        found = index.search(q, 7, "n", VIEW)
        assert found == plain.search(q, 7, "n", VIEW) and len(found) == min(7, index.n)


def test_an_index_past_the_limit_keeps_nothing_and_reads_as_before() -> None:
    rng = np.random.default_rng(7)
    index = TenantVectors(DIM)
    index.wide = WideRows(limit=50 * DIM * 8)  # 50 rows
    _add(index, rng, 0, 40)
    rows = np.array([3, 39, 3, 0])
    assert index.float_rows(rows).tobytes() == _plain(index, rows).tobytes()
    assert index.wide.n == 40
    _add(index, rng, 40, 20)  # 60 rows: past it
    rows = np.array([59, 3, 41])
    assert index.float_rows(rows).tobytes() == _plain(index, rows).tobytes()
    assert index.wide.n == 0 and index.wide.values.size == 0  # let go


def test_a_persisted_index_widens_its_rows_only_once_every_one_is_checked(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(9)
    built = TenantVectors(DIM)
    _add(built, rng, 0, 30)
    arrays, meta = sections_of(built)
    mapped = _mapped(tmp_path / "v.idx", meta, arrays)
    rows = np.array([4, 2, 4])
    assert mapped.float_rows(rows).tobytes() == _plain(built, rows).tobytes()
    assert mapped.wide.n == 0  # rows not checked yet: each is checked as it is read
    q = rng.standard_normal(DIM).astype(np.float32)
    found = mapped.search(q, 5, "n", VIEW)  # the scan checks every row
    assert found == built.search(q, 5, "n", VIEW) and len(found) == 5
    _add(mapped, rng, 30, 3)
    rows = np.array([31, 0, 29, 32])
    assert mapped.float_rows(rows).tobytes() == _plain(mapped, rows).tobytes()
    assert mapped.wide.n == 33


def test_a_corrupt_row_is_refused_when_read_not_when_others_are(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    built = TenantVectors(DIM)
    _add(built, rng, 0, 20)
    arrays, meta = sections_of(built)
    arrays["matrix"] = arrays["matrix"].copy()
    arrays["matrix"][7, 3] += 1.0  # the row no longer matches its CRC
    mapped = _mapped(tmp_path / "v.idx", meta, arrays)
    rows = np.array([6, 8])
    assert mapped.float_rows(rows).tobytes() == _plain(built, rows).tobytes()
    with pytest.raises(IndexFileError):
        mapped.float_rows(np.array([5, 7]))


def test_the_store_hands_the_kept_widening_to_exact_cosine(tmp_path: Path) -> None:
    """``vector_matrix_normed`` gives the union's rows as float64 once the index keeps them
    widened (after its first search), and cosine over them is cosine over the rows widened
    as they are read (``Recorder``-free: a plain dict cache reads ``get_vectors``)."""
    clock = ManualClock()
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(32), clock=clock)
    ctx = AgentContext(agent_id="a", tenant="acme", namespace="n")
    for i in range(30):
        clock.advance(seconds=1)
        mem.add(f"note {i} about {['harbour', 'violin', 'ember'][i % 3]} {i * 7}", context=ctx)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    scope = Scope("acme", "n")
    ids = [m.id for m in mem.list(context=ctx, limit=100)]
    qvec = HashingEmbedder(32).embed(["violin ember"])[0]
    mem.recall("violin ember", context=ctx)  # a search: the index keeps its rows widened
    got = store.vector_matrix_normed(scope, ids[::-2])
    assert got is not None and got[3] is not None
    have, matrix, _, wide = got
    assert have == ids[::-2] and wide.tobytes() == matrix.astype(np.float64).tobytes()
    index = store.caches.tenant_vectors("acme")
    assert index is not None and index.wide.n == index.n
    for picked in (ids, ids[3:9], ids[::-3]):
        fast = cosines(store, scope, qvec, picked, VectorCache())
        plain = cosines(_Plain(store), scope, qvec, picked, {})  # type: ignore[arg-type]
        assert {i: repr(v) for i, v in fast.items()} == {i: repr(v) for i, v in plain.items()}
    mem.close()


class _Plain:
    """The store's vectors read one by one (no matrix, no kept norms or widening)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def get_vectors(self, scope: Scope, ids: list[str]) -> dict[str, np.ndarray]:
        return self.store.get_vectors(scope, ids)


def test_float_rows_gather_the_very_rows_of_the_matrix_they_read(tmp_path: Path) -> None:
    """``float_rows`` gathers rows with ``take`` (whole rows at once): byte for byte the rows
    ``matrix[rows]`` indexes, as float32 and widened, repeats and no rows included, from an
    index in memory, a persisted one (mapped: its rows checked as they are read, then every
    row checked) and one grown past it."""
    rng = np.random.default_rng(13)
    built = TenantVectors(DIM)
    _add(built, rng, 0, 40)
    arrays, meta = sections_of(built)
    mapped = _mapped(tmp_path / "v.idx", meta, arrays)
    plain = np.array(built.matrix[:40])  # the rows as stored, a plain copy
    rows = np.array([7, 3, 7, 30])  # rows not checked yet: checked as they are read
    assert mapped.float_rows(rows, np.float32).tobytes() == plain[rows].tobytes()
    assert mapped._checked[[3, 7, 30]].all() and mapped._checked.sum() == 3
    assert mapped.float_rows(rows).tobytes() == plain[rows].astype(np.float64).tobytes()
    mapped.search(rng.standard_normal(DIM).astype(np.float32), 3, "n", VIEW)  # checks all
    assert mapped._all_checked
    for _ in range(6):
        rows = rng.integers(0, 40, size=int(rng.integers(0, 50)))
        want = plain[rows]
        for index in (built, mapped):
            got32 = index.float_rows(rows, np.float32)
            assert got32.dtype == np.float32 and got32.tobytes() == want.tobytes()
            got64 = index.float_rows(rows)
            assert got64.tobytes() == want.astype(np.float64).tobytes()
    _add(mapped, rng, 40, 5)  # rows added since: gathered from the in-memory tail
    rows = np.array([44, 0, 41, 39, 44])
    want = np.concatenate([plain, mapped.matrix[:5]])[rows]
    assert mapped.float_rows(rows, np.float32).tobytes() == want.tobytes()
    assert mapped.float_rows(rows).tobytes() == want.astype(np.float64).tobytes()
