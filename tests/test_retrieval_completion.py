"""Lane completion (retrieval/completion.py), expected ranks and order worked out by hand."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from retrieval_fakes import FakeStore, mem, view_at

from attestor_arango.retrieval import RetrievalConfig, lane_run, recall
from attestor_arango.retrieval.completion import Lane, complete, lane_union, missing
from attestor_arango.retrieval.trace import Tracer
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import Hit
from tests.support.trace_reading import trace_text

SCOPE = Scope("t", "ns")


class FixedEmbedder:
    """Every text embeds to (1, 0): a candidate's cosine is its vector's first coordinate."""

    name = "fixed"
    dim = 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))


def store(s: FakeStore | None = None) -> FakeStore:
    s = FakeStore() if s is None else s
    s.add(mem("a", "garden party", day=1), [1.0, 0.0])  # cosine 1.0
    s.add(mem("b", "weekend plans", day=2), [0.8, 0.6])  # cosine 0.8, no query term
    s.add(mem("c", "garden", day=3), [0.6, 0.8])  # cosine 0.6
    s.add(mem("d", "garden garden", day=4), [0.0, 1.0])  # cosine 0.0
    return s


# Only the lanes and fusion: every later step off, rrf_k = 1 so the sums are easy.
BARE = RetrievalConfig(
    vector_k=2,
    text_k=1,
    rrf_k=1,
    graph_enabled=False,
    decay_enabled=False,
    boost_enabled=False,
    freshness_enabled=False,
    coverage_enabled=False,
)


def run(cfg: RetrievalConfig) -> list[tuple[str, dict[str, int], float]]:
    resp = recall(store(), FixedEmbedder(), SCOPE, "garden", view_at(10), 10_000, cfg)  # type: ignore[arg-type]
    return [(r.memory.id, dict(r.breakdown.lanes), r.score) for r in resp.results]


def test_without_completion_a_cut_counts_as_absent() -> None:
    # vector top-2: a (1), b (2). Text pool re-scored by BM25: d (tf 2) > c (short) > a;
    # text top-1: d. Fused with k = 1, normalised by 2 / 2: a 1/2, d 1/2, b 1/3;
    # a and d tie, and the tie rule (t_created desc) puts d first.
    got = run(BARE.replace(lane_completion=False))
    assert [(i, lanes) for i, lanes, _ in got] == [
        ("d", {"bm25": 1}),
        ("a", {"vector": 1}),
        ("b", {"vector": 2}),
    ]
    assert [s for *_, s in got] == pytest.approx([1 / 2, 1 / 2, 1 / 3])


def test_completion_ranks_each_candidate_below_the_cut_of_the_lane_that_missed_it() -> None:
    # union {a, b, d}. Vector lane misses d: cosine 0 -> rank 3, + 1/4.
    # Text lane misses a and b: the re-scored tail is (c, a); a is in the union -> rank 2,
    # + 1/3; c is not a candidate and stays out; b has no query term and gets no text rank.
    # a 1/2 + 1/3 = 0.833 > d 1/2 + 1/4 = 0.75 > b 1/3
    got = run(BARE)
    assert [(i, lanes) for i, lanes, _ in got] == [
        ("a", {"bm25": 2, "vector": 1}),
        ("d", {"bm25": 1, "vector": 3}),
        ("b", {"vector": 2}),
    ]
    assert [s for *_, s in got] == pytest.approx([5 / 6, 3 / 4, 1 / 3])


def test_completion_is_skipped_with_one_lane() -> None:
    got = run(BARE.replace(bm25_enabled=False))
    assert [(i, lanes) for i, lanes, _ in got] == [("a", {"vector": 1}), ("b", {"vector": 2})]


def test_a_failing_completion_degrades_to_the_lanes_as_they_came(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def boom(*_: object) -> list[object]:
        raise RuntimeError("no tail today")

    monkeypatch.setattr(lane_run, "complete_lanes", boom)
    monkeypatch.setattr(lane_run, "complete_union", boom)  # (union_columns.py's way)
    resp = recall(store(), FixedEmbedder(), SCOPE, "garden", view_at(10), 10_000, BARE)  # type: ignore[arg-type]
    assert resp.errors == {"completion_error": "RuntimeError: no tail today"}
    assert [r.memory.id for r in resp.results] == ["d", "a", "b"]


def hit(mid: str, score: float = 1.0) -> Hit:
    return Hit(mem(mid), score)


def lane(*ids: str) -> Lane:
    return Lane.of([hit(i) for i in ids])


def test_lane_union_and_missing_are_in_id_order() -> None:
    union = lane_union([("vector", lane("z", "b")), ("bm25", lane("m", "b"))])
    assert list(union) == ["b", "m", "z"]
    assert [m.id for m in missing(lane("m"), union)] == ["b", "z"]


def test_complete_appends_union_members_of_the_tail_in_its_order_once() -> None:
    union = lane_union([("x", lane("a", "b", "c", "d"))])
    tail = lane("e", "d", "a", "c", "d")
    # e is no candidate; a is already in the lane; d only once, at its first place
    done = complete(lane("a", "b"), tail, union)
    assert done.ids == ["a", "b", "d", "c"] == [m.id for m in done.memories]


def test_a_lane_of_hits_keeps_their_order_scores_and_ids() -> None:
    hits = [hit("b", 0.5), hit("a", 0.75), hit("b", 0.25)]
    made = Lane.of(hits)
    assert made.memories == [h.memory for h in hits] and made.scores == [0.5, 0.75, 0.25]
    assert made.ids == ["b", "a", "b"] and len(made) == 3


def test_the_vector_lane_and_its_completion_read_the_vectors_once() -> None:
    # the lane's own rows and the union members it missed are read in one call
    s = store()
    recall(s, FixedEmbedder(), SCOPE, "garden", view_at(10), 10_000, BARE)  # type: ignore[arg-type]
    assert s.calls.count("get_vectors") == 1


class _NoVectorFor(FakeStore):
    """Fails to read the vectors of one memory (the union member the vector lane missed)."""

    def __init__(self, broken: str) -> None:
        super().__init__()
        self.broken = broken

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if self.broken in ids:
            raise RuntimeError(f"no vector for {self.broken}")
        return super().get_vectors(scope, ids)


def test_a_failing_union_read_keeps_the_vector_lane_and_fails_completion() -> None:
    resp = recall(
        store(_NoVectorFor("d")), FixedEmbedder(), SCOPE, "garden", view_at(10), 10_000, BARE
    )  # type: ignore[arg-type]
    assert resp.errors == {"completion_error": "RuntimeError: no vector for d"}
    # the lanes as they came (as without completion): the vector lane re-scored alone
    assert [(r.memory.id, dict(r.breakdown.lanes)) for r in resp.results] == [
        ("d", {"bm25": 1}),
        ("a", {"vector": 1}),
        ("b", {"vector": 2}),
    ]


def test_trace_events_keep_the_lane_order(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    resp = recall(
        store(), FixedEmbedder(), SCOPE, "garden", view_at(10), 10_000, BARE, tracer=Tracer(path)
    )  # type: ignore[arg-type]
    events = [json.loads(line) for line in trace_text(path).splitlines()]
    assert [e["step"] for e in events][:4] == ["start", "vector", "bm25", "complete"]
    vector, bm25, complete = events[1:4]
    assert vector["ids"] == ["a", "b"] and bm25["ids"] == ["d"]
    assert complete["candidates_in"] == 3 and complete["candidates_out"] == 5
    assert all(e["ms"] >= 0 for e in events)
    assert resp.results


def test_the_tie_rule_sort_equals_sorting_by_the_whole_rule() -> None:
    """``tie_ordered`` skips the creation times when no two scores are equal and none is
    NaN: the hits it makes must still be those of the memories and scores given, in the
    order score descending, then newer first, then id (``_tie``)."""
    import random

    from attestor_arango.models import us_of
    from attestor_arango.retrieval.completion import tie_ordered

    def _tie(h: Hit) -> tuple[float, int, str]:
        return (-h.score, -us_of(h.memory.t_created), h.memory.id)

    rng = random.Random(3)
    for trial in range(300):
        n = rng.randrange(0, 40)
        # few distinct scores (ties) in some trials, all distinct in others
        pool = [round(rng.random(), 2) for _ in range(3)] if trial % 2 else None
        hits = [
            Hit(
                mem(f"m{rng.randrange(1000):03d}-{j}", "x", day=rng.randrange(1, 5)),
                rng.choice(pool) if pool else rng.random() * rng.choice([1, -1]),
            )
            for j in range(n)
        ]
        if trial % 10 == 0 and n:
            hits.append(Hit(hits[0].memory, -0.0))
            hits.append(Hit(mem("z", "x", day=1), 0.0))
        if trial % 10 == 4 and n:  # a NaN among distinct scores: its place depends on the order
            hits.insert(rng.randrange(len(hits)), Hit(mem("y", "x", day=2), math.nan))
        want = sorted(hits, key=_tie)
        got = tie_ordered(
            [h.memory for h in hits], [h.score for h in hits], [h.memory.id for h in hits]
        )
        assert list(zip(map(id, got.memories), map(repr, got.scores), got.ids, strict=True)) == [
            (id(h.memory), repr(h.score), h.memory.id) for h in want
        ]
