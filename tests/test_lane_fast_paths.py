"""The lanes' fast paths on the embedded store give what the plain reads gave, bit for bit.

Each fast path here replaced a plainer read of the same rows (a dict of vectors joined
again, ...); the reference is that plainer read, and floats are compared exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.completion import (
    cosines,
    stored_matrix,
)
from attestor_arango.retrieval.rounding import round_array
from attestor_arango.scope import Scope
from attestor_arango.store.embedded.store import SQLiteStore

CTX = AgentContext(agent_id="a", tenant="acme", namespace="n")
SCOPE = Scope("acme", "n")
WORDS = ["harbour", "lantern", "violin", "orchard", "glacier", "saddle", "ember", "quill"]


def _filled(path: Path, n: int = 40) -> AgentMemory:
    clock = ManualClock()
    mem = AgentMemory(path, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3))
    for i in range(n):
        clock.advance(seconds=1)
        mem.add(f"{WORDS[i % 8]} note {i} about the {WORDS[(i * 3 + 1) % 8]}", context=CTX)
    return mem


def _ids(mem: AgentMemory) -> list[str]:
    return sorted(m.id for m in mem.list(context=CTX, limit=100))


def _reference_cosines(vecs: dict[str, np.ndarray], qvec: np.ndarray) -> dict[str, float]:
    """Exact cosine row by row from a dict of vectors (the code before the matrix read)."""
    q = np.asarray(qvec, dtype=np.float64)
    q = q / (float(np.linalg.norm(q)) or 1.0)
    out = {}
    for i, v in vecs.items():
        row = np.asarray(v, dtype=np.float64)
        norm = float(np.sqrt((row * row).sum()))
        out[i] = float(round_array(np.array([(row * q).sum() / (norm or 1.0)]), 9)[0])
    return out


class Recorder:
    """The store with its vector reads counted."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.calls: list[str] = []

    def get_vectors(self, scope: Scope, ids: Any) -> Any:
        self.calls.append("get_vectors")
        return self.store.get_vectors(scope, ids)

    def vector_matrix(self, scope: Scope, ids: Any) -> Any:
        self.calls.append("vector_matrix")
        return self.store.vector_matrix(scope, ids)


def test_the_union_is_gathered_as_one_matrix_equal_to_the_dict_of_vectors(
    tmp_path: Path,
) -> None:
    mem = _filled(tmp_path / "m.db")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ids = _ids(mem)
    wanted = [*ids[::3], "nope", *ids[1::5]]
    found = store.vector_matrix(SCOPE, wanted[:3])  # "nope" not among them: every one held
    assert found is not None
    assert store.vector_matrix(SCOPE, wanted) is None  # "nope" has no vector: declined
    vecs = store.get_vectors(SCOPE, ids)
    have, matrix = store.vector_matrix(SCOPE, ids)  # type: ignore[misc]
    assert have == ids and matrix.dtype == np.float32
    assert all(np.array_equal(matrix[j], vecs[i]) for j, i in enumerate(have))
    # another namespace's scope sees none of them
    assert store.vector_matrix(Scope("acme", "other"), ids) is None
    assert store.get_vectors(Scope("acme", "other"), ids) == {}
    mem.close()


def test_cosines_read_the_matrix_once_and_equal_the_row_by_row_reference(
    tmp_path: Path,
) -> None:
    mem = _filled(tmp_path / "m.db")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ids = _ids(mem)
    qvec = HashingEmbedder(64).embed(["violin harbour note"])[0]
    rec = Recorder(store)
    cache: dict[str, np.ndarray] = {}
    got = cosines(rec, SCOPE, qvec, ids, cache)  # type: ignore[arg-type]
    assert rec.calls == ["vector_matrix"]
    assert got == _reference_cosines(store.get_vectors(SCOPE, ids), qvec)
    assert sorted(cache) == ids  # the recall's later steps read them from the cache
    # a second read of some of them comes from the cache alone
    again = cosines(rec, SCOPE, qvec, ids[:5], cache)  # type: ignore[arg-type]
    assert rec.calls == ["vector_matrix"]
    assert again == {i: got[i] for i in ids[:5]}
    mem.close()


@pytest.mark.parametrize("cached", [0, 3])
def test_a_partly_cached_union_reads_only_what_the_cache_lacks(tmp_path: Path, cached: int) -> None:
    mem = _filled(tmp_path / "m.db", 12)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ids = _ids(mem)
    cache = {i: store.get_vectors(SCOPE, [i])[i] for i in ids[:cached]}
    rec = Recorder(store)
    have, matrix = stored_matrix(rec, SCOPE, [*ids, "nope"], cache)  # type: ignore[arg-type]
    assert have == ids
    assert rec.calls == (["get_vectors"] if cached else ["vector_matrix", "get_vectors"])
    vecs = store.get_vectors(SCOPE, ids)
    assert all(np.array_equal(matrix[j], vecs[i]) for j, i in enumerate(have))
    mem.close()
