"""The vector lane and lane completion on the union's columns (union_columns.py) give what
the general code (completion.py's ``rescored_columns`` and ``complete_lanes`` over dicts)
gives: the same memories (by identity), ids, scores to the bit and order. Where the
columns cannot decide alone (a tie, a NaN, an id twice) they say so (None), and the
general code answers."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from retrieval_fakes import lanes_of
from retrieval_fakes import mem as fake_mem

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Memory
from attestor_arango.retrieval import lane_run, union_columns
from attestor_arango.retrieval.completion import (
    Lane,
    Lanes,
    Ranked,
    complete_lanes,
    rescored_columns,
)
from attestor_arango.retrieval.union_columns import (
    by_cosine,
    complete_union,
    union_of,
)
from attestor_arango.scope import Scope
from attestor_arango.store.embedded.store import SQLiteStore

CTX = AgentContext(agent_id="a", tenant="acme", namespace="n")
SCOPE = Scope("acme", "n")
WORDS = ["harbour", "lantern", "violin", "orchard", "glacier", "saddle", "ember", "quill"]


def _shape(lanes: Lanes) -> list[tuple[str, list[tuple[int, str, str]]]]:
    """Lanes as comparable values: each candidate's memory (by identity), id and score's
    repr; a lane's ids are its memories' ids."""
    out = []
    for name, lane in lanes:
        assert lane.ids == [m.id for m in lane.memories]
        triples = zip(lane.memories, lane.ids, lane.scores, strict=True)
        out.append((name, [(id(m), i, repr(s)) for m, i, s in triples]))
    return out


def _lanes(
    seed: int,
) -> tuple[list[Memory], dict[str, Memory], Lane, Ranked, list[float]]:
    """A vector lane's memories (and by id), a text lane sharing some of them (the same
    objects, as the text lane reuses what the vector lane read), its tail (some of the
    vector lane's members among other rows, one row twice) and values to score from."""
    rng = random.Random(seed)
    pool = [fake_mem(f"m{i:02d}", f"text {i}", day=rng.choice([1, 2, 3])) for i in range(60)]
    vector = rng.sample(pool, 15)
    known = {m.id: m for m in vector}
    text = rng.sample(vector, 4) + rng.sample([m for m in pool if m.id not in known], 8)
    rng.shuffle(text)
    rest = [m for m in pool if m not in text]
    tail = rng.sample(rest, 25)
    tail.insert(5, tail[9])  # a row twice: taken once, at its first place
    # even seeds: distinct scores (the order the scores alone decide); odd seeds: few
    # values (ties, -0.0 beside 0.0); every fourth seed also NaN
    values = [rng.random() for _ in range(999)] if seed % 2 == 0 else [0.5, 0.25, 0.0, -0.0]
    if seed % 4 == 3:
        values += [math.nan] * 2
    text_lane = Lane(text, [rng.random() for _ in text], [m.id for m in text])
    ranked = Ranked([m.id for m in tail], [rng.random() for _ in tail])
    return vector, known, text_lane, ranked, values


@pytest.mark.parametrize("seed", range(16))
def test_the_union_columns_equal_the_general_code(seed: int) -> None:
    vector, known, text, tail, values = _lanes(seed)
    rng = random.Random(seed)
    ids = [m.id for m in vector]
    union = union_of(ids, known, text)
    assert union is not None
    # the union in the order the general code reads its vectors
    assert union.ids == list(dict.fromkeys([*ids, *text.ids]))
    assert union.lane == len(ids)
    assert [m.id for m in union.others] == union.ids[len(ids) :]
    if seed % 2 == 0:  # distinct
        cos = np.array(rng.sample(values, len(union.ids)))
    else:
        cos = np.array([rng.choice(values) for _ in union.ids])
    by_id = dict(zip(union.ids, cos.tolist(), strict=True))
    for own in (None, [rng.random() for _ in ids]):
        general = rescored_columns(vector, own, by_id, ids)
        fast = by_cosine(vector, cos[: len(ids)], ids)
        if seed % 4 != 3:  # no NaN: the columns decide (distinct scores, or ties in order)
            assert fast is not None
        if fast is not None:
            assert general is not None
            assert _shape([("v", fast)]) == _shape([("v", general)])
    lane = rescored_columns(vector, None, by_id, ids) or Lane([], [], [])
    lanes: Lanes = [("vector", lane), ("bm25", text)]
    done = complete_union(lane, text, tail, union, cos)
    if seed % 4 != 3:
        assert done is not None
    if done is not None:
        assert _shape(done) == _shape(complete_lanes(lanes, tail, by_id))


def test_an_id_twice_in_a_lane_is_left_to_the_general_code() -> None:
    vector, known, text, _, _ = _lanes(0)
    ids = [m.id for m in vector]
    assert union_of([*ids, ids[0]], known, text) is None  # twice in the vector lane
    other = next(i for i in text.ids if i not in known)
    j = text.ids.index(other)
    twice = Lane([*text.memories, text.memories[j]], [*text.scores, 0.1], [*text.ids, other])
    assert union_of(ids, known, twice) is None  # twice among the text lane's others
    # a shared id twice in the text lane is still one union member
    shared = next(i for i in text.ids if i in known)
    k = text.ids.index(shared)
    again = Lane([*text.memories, text.memories[k]], [*text.scores, 0.1], [*text.ids, shared])
    union = union_of(ids, known, again)
    assert union is not None and union.ids == list(dict.fromkeys([*ids, *again.ids]))


class _HidesVector:
    """The store with the stored vector of the last id of every vector read hidden (a union
    member without a cosine), its matrix reads declined."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def get_vectors(self, scope: Scope, ids: Any) -> Any:
        return self._store.get_vectors(scope, list(ids)[:-1])

    def vector_matrix(self, scope: Scope, ids: Any) -> Any:
        return None

    def vector_matrix_normed(self, scope: Scope, ids: Any) -> Any:
        return None


@pytest.mark.parametrize("hide", [False, True])
def test_run_lanes_on_the_union_columns_equals_the_general_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hide: bool
) -> None:
    """``run_lanes`` with the union's columns and with them turned off (``union_of``
    None): the same lanes; the columns answered where every member has a vector."""
    clock = ManualClock()
    mem = AgentMemory(
        tmp_path / "m.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3)
    )
    for i in range(60):
        clock.advance(seconds=1)
        mem.add(f"{WORDS[i % 8]} note {i} about the {WORDS[(i * 3 + 1) % 8]}", context=CTX)
    store: Any = mem.store
    assert isinstance(store, SQLiteStore)
    view = mem.runtime.view(None, None)
    config = mem.runtime.retrieval_config.replace(vector_k=12, text_k=8)
    if hide:
        store = _HidesVector(store)
    emb = HashingEmbedder(64)
    fast: list[bool] = []
    plain_complete = union_columns.complete_union

    def counted(*args: Any) -> Any:
        done = plain_complete(*args)
        fast.append(done is not None)
        return done

    monkeypatch.setattr(lane_run, "complete_union", counted)

    def lanes(query: str) -> Lanes:
        errors: dict[str, str] = {}
        got = lanes_of(store, emb, SCOPE, query, view, config, errors)
        assert not errors and [n for n, _ in got] == ["vector", "bm25"]
        return got

    for query in ("violin harbour note", "ember quill", "glacier orchard 7", "saddle"):
        got = lanes(query)
        with monkeypatch.context() as off:
            off.setattr(lane_run, "union_of", lambda *_: None)
            want = lanes(query)
        # (the memories are read again: compared by id, score and order)
        assert [(n, lane.ids, list(map(repr, lane.scores))) for n, lane in got] == [
            (n, lane.ids, list(map(repr, lane.scores))) for n, lane in want
        ]
    # the columns answered every query whose union has every vector, none otherwise
    assert fast == ([] if hide else [True] * 4)
    mem.close()
