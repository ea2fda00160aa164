"""The lanes' fast paths on the embedded store give what the plain reads gave, bit for bit.

Each fast path here replaced a plainer read of the same rows (a dict of vectors joined
again, ...); the reference is that plainer read, and floats are compared exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from retrieval_fakes import as_lanes, lanes_of
from retrieval_fakes import mem as fake_mem

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import us_of
from attestor_arango.retrieval import lane_run, pipeline, text_lane
from attestor_arango.retrieval.completion import (
    Lane,
    Ranked,
    VectorCache,
    cached_vectors,
    complete,
    complete_lanes,
    cosines,
    lane_union,
    missing,
    rescored,
    rescored_columns,
    stored_matrix,
)
from attestor_arango.retrieval.rounding import round_array
from attestor_arango.scope import Scope
from attestor_arango.store.codec import row_norms
from attestor_arango.store.embedded.exact import RowNorms
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import Hit, TextScore

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


class NormedRecorder(Recorder):
    """The store with its vector reads counted, its kept norms offered too."""

    def vector_matrix_normed(self, scope: Scope, ids: Any) -> Any:
        self.calls.append("vector_matrix_normed")
        return self.store.vector_matrix_normed(scope, ids)


@pytest.mark.parametrize("reopened", [False, True])
def test_cosines_from_the_kept_norms_equal_the_ones_computed_each_time(
    tmp_path: Path, reopened: bool
) -> None:
    """The index's kept norms (``RowNorms``) give the cosines computing them gave, to the
    bit, as rows are read for the first time or again, in any order, also from a
    persisted index (its rows mapped) with rows added since."""
    mem = _filled(tmp_path / "m.db")
    if reopened:
        mem.close()
        mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
        mem.add("saddle lantern added after the reopen", context=CTX)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ids = _ids(mem)
    rng = random.Random(4)
    for query in ("violin harbour note", "ember", "saddle lantern"):
        qvec = HashingEmbedder(64).embed([query])[0]
        for _ in range(4):
            picked = rng.sample(ids, rng.randint(1, len(ids)))
            rec = NormedRecorder(store)
            cache: dict[str, np.ndarray] = {}
            got = cosines(rec, SCOPE, qvec, picked, cache)  # type: ignore[arg-type]
            assert rec.calls == ["vector_matrix_normed"]
            plain = cosines(Recorder(store), SCOPE, qvec, picked, {})  # type: ignore[arg-type]
            assert {i: repr(v) for i, v in got.items()} == {i: repr(v) for i, v in plain.items()}
            assert got == _reference_cosines(store.get_vectors(SCOPE, picked), qvec)
            assert sorted(cache) == sorted(picked)
    # declined as ``vector_matrix`` declines: an id without a vector, another namespace
    assert store.vector_matrix_normed(SCOPE, [*ids[:3], "nope"]) is None
    assert store.vector_matrix_normed(Scope("acme", "other"), ids) is None
    mem.close()


@pytest.mark.parametrize("dim", [1, 7, 64, 384, 1000])
def test_kept_row_norms_equal_the_norms_of_the_whole_matrix(dim: int) -> None:
    """``RowNorms`` computes rows in whatever batches they come (subsets, repeats, any
    order) and gives ``row_norms`` of the whole matrix, bit for bit."""
    rng = np.random.default_rng(dim)
    matrix = (rng.standard_normal((3000, dim)) * rng.uniform(0.01, 100, (3000, 1))).astype(
        np.float32
    )
    matrix[7] = 0.0
    whole = row_norms(matrix)
    kept = RowNorms()
    for _ in range(30):
        rows = rng.integers(0, 3000, rng.integers(0, 200))
        got = kept.of(rows, matrix[rows])
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, whole[rows])
    rows = np.arange(3000)[::-1]
    np.testing.assert_array_equal(kept.of(rows, matrix[rows]), whole[rows])


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


# --- lane completion's single passes against the plain code they replaced -----------------


def _ref_by_tie_rule(hits: list[Hit]) -> list[Hit]:
    return sorted(hits, key=lambda h: (-h.score, -us_of(h.memory.t_created), h.memory.id))


def _ref_rescored(hits: Sequence[Hit], scores: dict[str, float]) -> list[Hit]:
    out = [Hit(h.memory, round(float(h.score), 6)) for h in hits if h.memory.id not in scores]
    out.extend(Hit(h.memory, scores[h.memory.id]) for h in hits if h.memory.id in scores)
    return _ref_by_tie_rule(out)


def _ref_complete_lanes(
    lanes: Sequence[tuple[str, Lane]],
    text_tail: Sequence[TextScore],
    vector_scores: dict[str, float] | None,
) -> list[tuple[str, Lane]]:
    union = lane_union(lanes)
    out: list[tuple[str, Lane]] = []
    for name, lane in lanes:
        if name == "vector" and vector_scores is not None:
            gone = missing(lane, union)
            tail = [Hit(m, 0.0) for m in gone if m.id not in vector_scores]
            tail.extend(Hit(m, vector_scores[m.id]) for m in gone if m.id in vector_scores)
            tail = _ref_by_tie_rule(tail)
        elif name == "bm25":
            tail = [Hit(union[t.id], t.score) for t in text_tail if t.id in union]
        else:
            tail = []
        out.append((name, complete(lane, Lane.of(tail), union)))
    return out


def _pairs(lanes: Sequence[tuple[str, Lane]]) -> list[tuple[str, list[tuple[Any, str]]]]:
    """Lanes as (memory, score's repr) pairs by name; a lane's ids are its memories' ids."""
    assert all(lane.ids == [m.id for m in lane.memories] for _, lane in lanes)
    return [(n, list(zip(lane.memories, map(repr, lane.scores), strict=True))) for n, lane in lanes]


def _shape(lanes: Sequence[tuple[str, Lane | Sequence[Hit]]]) -> list[tuple[str, list[Any]]]:
    """Lanes (or hits) as comparable values: each candidate's memory (by identity), id and
    score (exactly); a lane's ids are its memories' ids."""
    out: list[tuple[str, list[Any]]] = []
    for n, lane in lanes:
        if not isinstance(lane, Lane):
            lane = Lane.of(lane)
        assert lane.ids == [m.id for m in lane.memories]
        triples = zip(lane.memories, lane.ids, lane.scores, strict=True)
        out.append((n, [(id(m), i, repr(s)) for m, i, s in triples]))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_rescoring_and_completion_equal_the_plain_code_on_ties_and_gaps(seed: int) -> None:
    rng = random.Random(seed)
    pool = [fake_mem(f"m{i:02d}", f"text {i}", day=rng.choice([1, 2, 3])) for i in range(30)]
    # odd seeds: few distinct values (scores tie often, -0.0 and 0.0 among them); even
    # seeds: distinct scores, the order the scores alone decide; every fourth seed also
    # NaN (a NaN's order depends on the order the hits come in)
    values = [0.5, 0.25, 0.0, -0.0, 0.125, 0.75] if seed % 2 else [rng.random() for _ in range(999)]
    if seed % 4 == 3:
        values += [math.nan] * 3
    vector = [Hit(m, rng.choice(values)) for m in rng.sample(pool, 12)]
    text = [Hit(m, rng.choice(values)) for m in rng.sample(pool, 10)]
    extra = [Hit(m, rng.choice(values)) for m in rng.sample(pool, 4)]
    scores = {m.id: rng.choice(values) for m in rng.sample(pool, 20)}
    assert _shape([("v", rescored(vector, scores))]) == _shape(
        [("v", _ref_rescored(vector, scores))]
    )
    # the hits as a set, without scores of their own: rescored alike in any order, or None
    # (a hit without a cosine, or a NaN one: the caller ranks them again)
    memories = [h.memory for h in vector]
    every = {m.id: rng.choice(values) for m in memories}  # a cosine for each hit
    for cos in (scores, every):
        want = _shape([("v", _ref_rescored(vector, cos))])
        for shuffled in (memories, memories[::-1], rng.sample(memories, len(memories))):
            got = rescored_columns(shuffled, None, cos)
            of = [cos.get(m.id) for m in memories]
            if None in of or any(map(math.isnan, of)):  # type: ignore[arg-type]
                assert got is None
            else:
                assert got is not None and _shape([("v", got)]) == want
    tail = [TextScore(m.id, 0, rng.choice(values)) for m in rng.sample(pool, 15)]
    tail += tail[:3]  # a row twice: appended once, at its first place
    for lanes in (
        as_lanes([("vector", vector), ("bm25", text)]),
        as_lanes([("bm25", text), ("vector", vector), ("hyde_1", extra)]),
    ):
        for vscores in (scores, None):
            want = _shape(_ref_complete_lanes(lanes, tail, vscores))
            assert _shape(complete_lanes(lanes, tail, vscores)) == want
            # the tail as the text lane hands it over: columns (``Ranked``)
            assert _shape(complete_lanes(lanes, Ranked.of(tail), vscores)) == want


@pytest.mark.parametrize("keep", [0, 3, 8, 200])
def test_the_text_lane_on_columns_equals_the_rows_it_replaced(tmp_path: Path, keep: int) -> None:
    """``rescored_text`` (the pool as ``Ranked`` columns, the kept rows read by
    ``decoded_ranked``) against the general path's rows (``rescore_pool`` over the store's
    pool and terms), decoded by ``decoded``, with some memories known beforehand and others
    read."""
    mem = _filled(tmp_path / "m.db")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    view = mem.runtime.view(None, None)
    known_all = store.get_memories(SCOPE, _ids(mem))
    for query in ("violin harbour note", "ember", "quill about the glacier saddle", "zzz"):
        for known in ({}, dict(list(known_all.items())[::2])):
            lane, tail = text_lane.rescored_text(store, SCOPE, query, view, 200, keep, known)
            pool = store.text_pool(SCOPE, query, 200, view)
            held = store.scoring_terms(SCOPE, [t.id for t in pool])
            rows = text_lane.rescore_pool(pool, query, held=held)
            want = text_lane.decoded(store, SCOPE, rows[:keep], known)
            assert [t.id for t in rows[:keep]] == want.ids == [m.id for m in want.memories]
            assert [t.score for t in rows[:keep]] == want.scores
            assert (lane.ids, list(map(repr, lane.scores))) == (
                want.ids,
                list(map(repr, want.scores)),
            )
            assert lane.memories == want.memories
            assert all(
                m is known[i] for m, i in zip(lane.memories, lane.ids, strict=True) if i in known
            )
            assert isinstance(tail, Ranked)
            assert (tail.ids, [s.hex() for s in tail.scores]) == (
                [t.id for t in rows[keep:]],
                [t.score.hex() for t in rows[keep:]],
            )
    mem.close()


# --- the vector lane's ranking handed over before its rows are read ---------------------------


class WithoutRanking:
    """The store as a backend without ``vector_ranked`` (the Store contract's reads only):
    the lanes then read ``vector_candidates``; every call is noted."""

    def __init__(self, store: SQLiteStore, hide: bool) -> None:
        self.store = store
        self.hide = hide
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if self.hide and name == "vector_ranked":
            raise AttributeError(name)
        self.calls.append(name)
        return getattr(self.store, name)


def test_vector_ranked_is_vector_candidates_before_the_rows_are_read(tmp_path: Path) -> None:
    mem = _filled(tmp_path / "m.db")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    emb = HashingEmbedder(64)
    middle = sorted(m.t_created for m in mem.list(context=CTX, limit=100))[20]  # a replay
    sets = 0
    for query in ("violin harbour note", "ember", "nothing like it"):
        qvec = emb.embed([query])[0]
        for scope in (SCOPE, Scope("acme", "other"), Scope("else", "n")):
            for k in (0, 1, 7, 100):
                for view in (
                    mem.runtime.view(None, None),
                    mem.runtime.view(middle, None),
                ):
                    hits = store.vector_candidates(scope, qvec, k, view)
                    ids, scores = store.vector_ranked(scope, qvec, k, view)
                    assert scores is not None
                    assert [(i, repr(s)) for i, s in zip(ids, scores, strict=True)] == [
                        (h.memory.id, repr(h.score)) for h in hits
                    ]
                    # as a set (none scored) when the bounds chose just these rows
                    some, their = store.vector_ranked(scope, qvec, k, view, ordered=False)
                    sets += their is None
                    assert sorted(some) == sorted(ids)
                    assert their is None or (list(some), their) == (ids, scores)
    assert sets  # some answers came as sets
    mem.close()


class DropsRows:
    """The store with a scope filter stricter than its vector index's: ``get_memories``
    does not return the rows of ``dropped`` (each other read is the store's)."""

    def __init__(self, store: SQLiteStore, dropped: set[str]) -> None:
        self.store = store
        self.dropped = dropped

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Any]:
        got = self.store.get_memories(scope, ids)
        return {i: m for i, m in got.items() if i not in self.dropped}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_the_vector_lanes_columns_leave_out_the_rows_the_scope_does_not_return(
    tmp_path: Path,
) -> None:
    """``vector_found``'s columns are the ranking's ids and scores (the same floats) with
    their memories, in order; ids whose rows ``get_memories`` does not return are left
    out, each with its score (the general path, taken only then)."""
    mem = _filled(tmp_path / "m.db")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    view = mem.runtime.view(None, None)
    config = mem.runtime.retrieval_config.replace(vector_k=12)
    qvec = HashingEmbedder(64).embed(["violin harbour note"])[0]
    ids, scores = store.vector_ranked(SCOPE, qvec, 12, view)
    assert len(ids) == 12
    assert scores is not None
    for dropped in (set(), {ids[0]}, {ids[3], ids[11]}, set(ids)):
        want = [(i, s) for i, s in zip(ids, scores, strict=True) if i not in dropped]
        for ordered in (True, False):
            found, read = lane_run.vector_found(
                DropsRows(store, dropped),
                SCOPE,
                qvec,
                view,
                config,
                ordered,
            )
            if ordered:
                assert found.scores is not None
                assert list(zip(found.ids, found.scores, strict=True)) == want
                assert [s.hex() for s in found.scores] == [s.hex() for _, s in want]
            else:  # the same rows, as a set (none scored) or as ranked
                assert sorted(found.ids) == sorted(i for i, _ in want)
                if found.scores is not None:
                    assert list(zip(found.ids, found.scores, strict=True)) == want
            assert [m.id for m in found.memories] == list(found.ids)
            assert all(read[m.id] is m for m in found.memories) and len(read) == len(want)
    mem.close()


class HidesVectors:
    """The store without the stored vectors of ``hidden`` (read one by one: no matrix), and
    without ``vector_ranked``: a lane hit without a cosine keeps its own score."""

    def __init__(self, store: SQLiteStore, hidden: set[str]) -> None:
        self.store = store
        self.hidden = hidden
        self.unordered: list[bool] = []  # per ``vector_ranked`` call: came as a set

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        got = self.store.get_vectors(scope, ids)
        return {i: v for i, v in got.items() if i not in self.hidden}

    def __getattr__(self, name: str) -> Any:
        if name in ("vector_matrix", "vector_matrix_normed", "vector_ranked", "vector_units"):
            raise AttributeError(name)
        return getattr(self.store, name)


class HidesVectorsRanks(HidesVectors):
    def vector_ranked(self, *args: Any, **kwargs: Any) -> Any:
        got = self.store.vector_ranked(*args, **kwargs)
        self.unordered.append(got[1] is None)
        return got


@pytest.mark.parametrize("completion", [True, False])
def test_a_lane_handed_over_as_a_set_is_ranked_again_when_its_order_decides(
    tmp_path: Path, completion: bool
) -> None:
    """The embedded store hands the vector lane over as a set when its bounds chose just
    the k best (every row, with k above the rows); a hit without a cosine then needs the
    lane's order and own scores: the lane is ranked again (``_reordered``), and equals
    the lane a backend without the ranking gets from ``vector_candidates``."""
    mem = _filled(tmp_path / "m.db")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    view = mem.runtime.view(None, None)
    config = mem.runtime.retrieval_config.replace(vector_k=100, lane_completion=completion)
    emb = HashingEmbedder(64)
    query = "violin harbour note"
    ids, _ = store.vector_ranked(SCOPE, emb.embed([query])[0], 100, view)
    for hidden in (set(), {ids[0]}, {ids[5], ids[-1]}):
        got = []
        for kind in (HidesVectorsRanks, HidesVectors):
            wrapped = kind(store, hidden)
            errors: dict[str, str] = {}
            lanes = lanes_of(wrapped, emb, SCOPE, query, view, config, errors)
            got.append((errors, _pairs(lanes)))
            if kind is HidesVectorsRanks:  # as a set; ranked again only when a cosine lacks
                assert wrapped.unordered == ([True, False] if hidden else [True])
        assert got[0] == got[1]
        assert all(h[0].id in ids for h in got[0][1][0][1])
    mem.close()


@pytest.mark.parametrize("completion", [True, False])
@pytest.mark.parametrize("bm25", [True, False])
def test_the_lanes_from_the_ranking_equal_the_lanes_from_vector_candidates(
    tmp_path: Path, completion: bool, bm25: bool
) -> None:
    """``run_lanes`` on the embedded store (``vector_ranked``, the hits made once with their
    cosines, the rows read the text lane's ``known``) gives the lanes a backend without the
    ranking gets from ``vector_candidates``: the same memories, scores to the bit, order."""
    mem = _filled(tmp_path / "m.db")
    mem.add("violin violin harbour, the note again", context=CTX)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    view = mem.runtime.view(None, None)
    config = mem.runtime.retrieval_config.replace(
        vector_k=9, text_k=6, lane_completion=completion, bm25_enabled=bm25
    )
    emb = HashingEmbedder(64)
    for query in ("violin harbour note", "ember quill", "glacier", "nothing like it"):
        got = []
        for hide in (False, True):
            rec = WithoutRanking(store, hide)
            errors: dict[str, str] = {}
            lanes = lanes_of(rec, emb, SCOPE, query, view, config, errors)
            assert ("vector_candidates" in rec.calls) is hide
            assert ("vector_ranked" in rec.calls) is not hide
            got.append((errors, _pairs(lanes)))
        assert got[0] == got[1]
        # a memory the vector lane read is the one the text lane hands on (not read again)
        lanes_got = dict(got[0][1])
        vector_read = {m.id: m for m, _ in lanes_got["vector"]}
        for m, _ in lanes_got.get("bm25", []):
            assert vector_read.get(m.id, m) is m
        assert got[0][1][0][0] == "vector" and len(got[0][1][0][1]) >= 9
    mem.close()


# --- the union's matrix kept whole until a step reads its rows -----------------------------


def test_a_vector_cache_keeps_the_union_whole_and_hands_the_same_rows_later(
    tmp_path: Path,
) -> None:
    """``cosines`` into a ``VectorCache`` splits no rows (the work it spares); a later read
    through ``cached_vectors`` gets the rows a plain dict was given, without a store read."""
    mem = _filled(tmp_path / "m.db")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ids = _ids(mem)
    qvec = HashingEmbedder(64).embed(["violin harbour note"])[0]
    lazy, plain = VectorCache(), dict[str, np.ndarray]()
    rec = NormedRecorder(store)
    got = cosines(rec, SCOPE, qvec, ids[:30], lazy)  # type: ignore[arg-type]
    assert got == cosines(store, SCOPE, qvec, ids[:30], plain)
    assert len(lazy) == 0 and len(lazy.pending) == 1  # kept whole
    assert sorted(plain) == ids[:30]
    later = cached_vectors(rec, SCOPE, ids[5:20], lazy)  # type: ignore[arg-type]
    assert rec.calls == ["vector_matrix_normed"]  # from the cache alone
    assert sorted(later) == ids[5:20]
    assert all(np.array_equal(later[i], plain[i]) for i in later)
    assert sorted(lazy) == ids[:30] and not lazy.pending
    # rows missing from the cache are read, the kept ones are not read again
    more = cached_vectors(rec, SCOPE, ids[25:], lazy)  # type: ignore[arg-type]
    assert rec.calls == ["vector_matrix_normed", "get_vectors"]
    assert sorted(more) == ids[25:]
    mem.close()


@pytest.mark.parametrize("fresh", [True, False])
def test_recall_with_the_kept_union_equals_recall_with_a_plain_dict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: bool
) -> None:
    mem = _filled(tmp_path / "m.db")
    for i in range(6):  # statements that update earlier ones: freshness compares vectors
        mem.add(f"the violin note {i} moved to the harbour, not the orchard", context=CTX)
    queries = ["violin harbour note", "where is the violin now", "ember quill", "glacier"]
    cfg = mem.runtime.retrieval_config.replace(freshness_enabled=fresh)
    view = mem.runtime.view(None, None)

    def answers() -> list[str]:
        return [
            pipeline.recall(
                mem.store, mem.runtime.embedder, SCOPE, q, view, 4000, cfg
            ).model_dump_json()
            for q in queries
        ]

    lazy = answers()
    monkeypatch.setattr(pipeline, "VectorCache", dict)
    assert answers() == lazy
    mem.close()


# --- the lanes' ids handed on, no memory's id read again ------------------------------------


@pytest.mark.parametrize("completion", [True, False])
def test_the_lanes_ids_handed_on_equal_the_ids_read_from_the_memories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, completion: bool
) -> None:
    """``run_lanes`` hands ``rescored_columns`` the vector lane's ids (from the ranking); its
    answer equals the answer with them read from the memories (the general path): the
    same memories (by identity), ids, scores to the bit and order. Every lane handed to
    ``complete_lanes``, and every lane it makes, holds its memories' own ids. (The union's
    columns, union_columns.py, are turned off: they answer without either function, and
    tests/test_union_columns.py compares them with these.)"""
    mem = _filled(tmp_path / "m.db")
    mem.add("violin violin harbour, the note again", context=CTX)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    view = mem.runtime.view(None, None)
    config = mem.runtime.retrieval_config.replace(vector_k=9, text_k=6, lane_completion=completion)
    emb = HashingEmbedder(64)
    plain_rescored, plain_complete = lane_run.rescored_columns, lane_run.complete_lanes
    calls: list[str] = []

    # (an exception inside a lane step degrades the lanes: the checks are noted, not raised)
    def rescored_both(memories: Any, own: Any, scores: Any, ids: Any = None) -> Lane | None:
        got = plain_rescored(memories, own, scores, ids)
        again = plain_rescored(memories, own, scores)
        same = _shape([("v", got or [])]) == _shape([("v", again or [])]) and (got is None) == (
            again is None
        )
        calls.append(f"rescored {ids is not None} {same}")
        return got

    def complete_both(lanes: Any, tail: Any, scores: Any) -> Any:
        got = plain_complete(lanes, tail, scores)
        own = all(lane.ids == [m.id for m in lane.memories] for _, lane in [*lanes, *got])
        calls.append(f"complete {own}")
        return got

    monkeypatch.setattr(lane_run, "union_of", lambda *_: None)
    monkeypatch.setattr(lane_run, "rescored_columns", rescored_both)
    monkeypatch.setattr(lane_run, "complete_lanes", complete_both)
    for query in ("violin harbour note", "ember quill", "glacier", "nothing like it"):
        errors: dict[str, str] = {}
        lanes = lanes_of(store, emb, SCOPE, query, view, config, errors)
        assert not errors and [n for n, _ in lanes] == ["vector", "bm25"]
    assert calls == ["rescored True True", *(["complete True"] if completion else [])] * 4
    mem.close()
