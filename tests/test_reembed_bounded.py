"""The re-embedding swap holds one batch of vectors, never the tenant's.

``reembed`` hands ``Store.replace_vectors`` the staged vectors ``batch_size`` at a time,
read from the staging file as the store asks for them, and the embedded store writes each
batch inside its single transaction before it reads the next: at 1M memories of 384
dimensions the whole set would be ~1.5 GB resident. Checked structurally (what the store
is handed and when it asks), never by timing or by measuring memory.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator, Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ConflictError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import EmbeddingSpace, VectorBatch

LOCAL = Scope("local")
NEW = EmbeddingSpace("hashing-v1-32", 32)


def _filled(path: Path, clock: ManualClock, n: int) -> list[str]:
    with AgentMemory(path, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3)) as m:
        ids = []
        for i in range(n):
            ids.append(m.add(f"note {i} about topic {i * 7}", entity=f"e{i}", category="c").id)
            clock.advance(seconds=1)
        return ids


def test_reembed_hands_the_store_one_batch_at_a_time(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    _filled(db, clock, 11)
    with AgentMemory(db, embedder=HashingEmbedder(32), clock=clock, ids=SeededIdSource(4)) as m:
        real = m.store.replace_vectors
        sizes: list[int] = []

        def spy(scope: Scope, space: EmbeddingSpace, batches: Iterable[VectorBatch]) -> int:
            assert not isinstance(batches, Mapping | list | tuple)  # a stream, not the set

            def counted() -> Iterator[VectorBatch]:
                for batch in batches:
                    sizes.append(len(batch))
                    yield batch

            return real(scope, space, counted())

        monkeypatch.setattr(m.store, "replace_vectors", spy)
        report = m.reembed(batch_size=4)
        assert report["memories"] == 11
        assert sizes == [4, 4, 3]  # never more than one batch of vectors at once
        space = m.store.get_embedding_space(LOCAL)
        assert space == NEW and m.recall("note 3").errors == {}


def test_the_embedded_store_writes_each_batch_before_it_reads_the_next(
    tmp_path: Path, clock: ManualClock
) -> None:
    db = tmp_path / "m.db"
    ids = _filled(db, clock, 9)
    with AgentMemory(db, embedder=HashingEmbedder(32), clock=clock, ids=SeededIdSource(4)) as m:
        conn = m.store.db.conn
        base = conn.total_changes
        written_when_read: list[int] = []

        def batches() -> Iterator[VectorBatch]:
            for start in range(0, len(ids), 4):
                written_when_read.append(conn.total_changes - base)
                yield {i: np.full(32, 0.5, dtype=np.float32) for i in ids[start : start + 4]}

        assert m.store.replace_vectors(LOCAL, NEW, batches()) == 9
        # batch k is read once k-1 is written (each row's update, and what its triggers do)
        first, second, third = written_when_read
        assert first == 0 < second < third and third == 2 * second
        assert m.store.get_embedding_space(LOCAL) == NEW


def test_an_id_in_two_batches_is_refused_and_nothing_changes(
    tmp_path: Path, clock: ManualClock
) -> None:
    db = tmp_path / "m.db"
    ids = _filled(db, clock, 3)
    with AgentMemory(db, embedder=HashingEmbedder(32), clock=clock, ids=SeededIdSource(4)) as m:
        before = m.store.get_vectors(LOCAL, ids)
        new = np.full(32, 0.5, dtype=np.float32)
        # the count matches (3 given, 3 held) while ids[2] would keep its old vector
        twice = [{ids[0]: new, ids[1]: new}, {ids[0]: new}]
        with pytest.raises(ConflictError, match="given twice"):
            m.store.replace_vectors(LOCAL, NEW, twice)
        after = m.store.get_vectors(LOCAL, ids)
        assert m.store.get_embedding_space(LOCAL) == EmbeddingSpace("hashing-v1-64", 64)
        assert all(np.array_equal(before[i], after[i]) for i in ids)


def test_a_swap_refused_part_way_closes_the_stream_it_read_before_the_retry(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    _filled(db, clock, 6)
    with AgentMemory(db, embedder=HashingEmbedder(32), clock=clock, ids=SeededIdSource(4)) as m:
        real = m.store.replace_vectors
        streams: list[Generator[VectorBatch, None, None]] = []

        def refuse_once(scope: Scope, space: EmbeddingSpace, batches: Iterable[VectorBatch]) -> int:
            assert isinstance(batches, Generator)
            if not streams:
                streams.append(batches)
                next(batches)  # read one batch, then a late row is found: refused
                raise ConflictError("rows changed meanwhile")
            # its cursor on the staging file ended before the retry read again
            assert inspect.getgeneratorstate(streams[0]) == inspect.GEN_CLOSED
            return real(scope, space, batches)

        monkeypatch.setattr(m.store, "replace_vectors", refuse_once)
        assert m.reembed(batch_size=2)["memories"] == 6
        assert m.store.get_embedding_space(LOCAL) == NEW
