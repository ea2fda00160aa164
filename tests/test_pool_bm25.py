"""The embedded index's pool BM25 (pool_bm25.py) against retrieval's ``raw_scores``: the
same floats to the last bit on varied pools, and recalls that answer alike either way."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from retrieval_fakes import stored_memory

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import text_lane
from attestor_arango.retrieval.completion import Ranked
from attestor_arango.retrieval.text_lane import (
    ScoresPool,
    raw_scores,
    rescore_pool,
    terms,
)
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import pool_bm25
from attestor_arango.store.embedded.column import BlobColumn
from attestor_arango.store.embedded.pool_bm25 import pool_scores, stop_stems
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.embedded.text_index import TenantText
from attestor_arango.store.protocol import PoolScores, TextHit
from attestor_arango.text.stemming import stem
from attestor_arango.text.stopwords import STOPWORDS

T0 = 1_700_000_000_000_000
OPEN = 2**62
# "alls", "afters" and "abouts" stem like the stop words "all", "after" and "about": the
# index's postings count those stop words, scoring does not
COLLIDING = ["alls", "afters", "abouts"]
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "zeta"]
WORDS += [*COLLIDING, "all", "after", "about", "the", "and"]


def test_the_colliding_words_do_collide() -> None:
    for word in COLLIDING:
        assert word not in STOPWORDS and stem(word) in stop_stems()


def _text(rng: random.Random) -> str:
    """0 to ~30 words, a few of them repeated: rows hold 0 to every query term."""
    if rng.random() < 0.05:
        return "" if rng.random() < 0.5 else "the and all"  # no scoring term at all
    picked = rng.sample(WORDS, rng.randint(1, 8))
    return " ".join(rng.choices(picked, k=rng.randint(1, 30)))


def _index(rng: random.Random, size: int, persisted: int) -> tuple[TenantText, list[str]]:
    """An index whose first ``persisted`` rows sit in blobs (as a loaded or persisted one
    holds them) and the rest were added since (the columns' tails)."""
    texts = [_text(rng) for _ in range(size)]
    index = TenantText()
    ids = [f"m{i:04d}" for i in range(size)]
    times = np.array([[T0 + i, OPEN, T0, OPEN] for i in range(persisted)], dtype=np.int64)
    index.load(ids[:persisted], ["n"] * persisted, texts[:persisted], times.reshape(-1, 4))
    for i in range(persisted, size):
        index.add(ids[i], "n", texts[i], (T0 + i, OPEN, T0, OPEN))
    return index, texts


def _query(rng: random.Random) -> tuple[str, list[str]]:
    """A query and its distinct scoring terms (what the store hands ``pool_scores``)."""
    text = " ".join(rng.sample(WORDS, rng.randint(1, 7)))
    return text, list(dict.fromkeys(terms(text)))


def _reference(
    index: TenantText, texts: list[str], rows: list[int], query: str
) -> list[tuple[str, str]]:
    pool = [TextHit(f"m{r:04d}", texts[r], T0 + r, 0.0) for r in rows]
    held = {t.id: index.terms[int(t.id[1:])] for t in pool}
    got = raw_scores(pool, query, held=held)
    assert got == raw_scores(pool, query)  # the index's terms are the text's
    return [(t.id, s.hex()) for t, _, s in got]


# the pool's frequencies gathered through a position array (the default on these small
# indexes) or searched term by term (``DENSE_ENTRIES`` 0: what a large index takes)
WAYS = {"gathered": pool_bm25.DENSE_ENTRIES, "searched": 0}


@pytest.fixture(params=sorted(WAYS))
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(pool_bm25, "DENSE_ENTRIES", WAYS[request.param])
    return str(request.param)


@pytest.mark.parametrize("seed", range(40))
def test_pool_frequencies_are_the_postings_either_way(
    seed: int, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gathered = pool_bm25._gathered
    calls: list[int] = []

    def counted(*args: Any) -> np.ndarray:
        calls.append(1)
        return gathered(*args)

    monkeypatch.setattr(pool_bm25, "_gathered", counted)
    rng = random.Random(seed)
    size = rng.randint(1, 300)
    postings: list[tuple[np.ndarray, np.ndarray] | None] = []
    for _ in range(rng.randint(1, 7)):
        if rng.random() < 0.15:
            postings.append(None if rng.random() < 0.5 else (np.zeros(0, np.int32),) * 2)
            continue
        held = sorted(rng.sample(range(size), rng.randint(1, size)))
        freqs = [rng.randint(1, 9) for _ in held]
        postings.append((np.array(held, dtype=np.int32), np.array(freqs, dtype=np.int32)))
    rows = rng.sample(range(size), rng.randint(0, size))  # distinct, in any order
    by_row: list[dict[int, int]] = [
        {} if p is None else dict(zip(p[0].tolist(), p[1].tolist(), strict=True)) for p in postings
    ]
    want = [[freqs.get(r, 0) for r in rows] for freqs in by_row]
    got = pool_bm25._frequencies(np.array(rows, dtype=np.int64), postings, size)
    assert got.shape == (len(postings), len(rows)) and got.tolist() == want
    # the default gathers on indexes this small (unless no term has a posting)
    present = any(p is not None and p[0].size for p in postings)
    assert calls == ([1] if way == "gathered" and present else [])


@pytest.mark.parametrize("seed", range(30))
def test_pool_scores_are_raw_scores_bit_for_bit(seed: int, way: str) -> None:
    rng = random.Random(seed)
    size = rng.randint(1, 150)
    index, texts = _index(rng, size, rng.randint(0, size))
    assert isinstance(index.terms, BlobColumn)
    for _ in range(25):
        rows = rng.sample(range(size), rng.randint(0, size))
        if rows and rng.random() < 0.3:  # repeated rows count once, at their first place
            rows += rng.choices(rows, k=rng.randint(1, 5))
            rng.shuffle(rows)
        query, q = _query(rng)
        at = np.array(rows, dtype=np.int64)
        lengths = index.terms.sizes(at)  # counted in the blob, or the tail's tuples
        assert lengths.tolist() == [len(index.terms[r]) for r in rows]
        places, scores, decoded = pool_scores(at, lengths, q, index.postings_of, index.terms)
        got = [(f"m{rows[p]:04d}", s.hex()) for p, s in zip(places, scores.tolist(), strict=True)]
        assert got == _reference(index, texts, rows, query), (rows, query)
        assert all(index.terms[rows[p]] == t for p, t in decoded.items())


def test_rows_of_three_terms_or_more_sum_in_the_order_the_row_holds_them() -> None:
    """A case where summing in query order gives another float: the test above meets it
    too, this one pins it."""
    rng = random.Random(4)
    for _ in range(200):
        index, texts = _index(rng, 40, 20)
        rows = list(range(40))
        query, q = _query(rng)
        at = np.array(rows)
        _, scores, _ = pool_scores(at, index.terms.sizes(at), q, index.postings_of, index.terms)
        want = _reference(index, texts, rows, query)
        assert [s.hex() for s in scores.tolist()] == [s for _, s in want]
        pool = [TextHit(f"m{r:04d}", texts[r], 0, 0.0) for r in rows]
        naive = []  # every row summed in query order
        for _, toks, _ in raw_scores(pool, query):
            n = len(pool)
            avgdl = sum(len(terms(p.content)) for p in pool) / n or 1.0
            norm = text_lane.bm25.length_norm(len(toks), avgdl)
            total = 0.0
            for w in q:
                if f := toks.count(w):
                    df = sum(1 for p in pool if w in terms(p.content))
                    total += text_lane.bm25.term_score(text_lane.bm25.idf(n, df), f, norm)
            naive.append(total.hex())
        if naive != [s for _, s in want]:
            return  # found: the order matters, and pool_scores kept the row's
    pytest.fail("no pool where the summing order changes a float")


def test_an_empty_pool_or_query_scores_nothing() -> None:
    index, _ = _index(random.Random(1), 10, 5)
    for rows, query in (([], ["alpha"]), ([1, 2], []), ([], [])):
        at = np.array(rows, dtype=np.int64)
        places, scores, decoded = pool_scores(at, at, query, index.postings_of, index.terms)
        assert places.size == 0 and scores.size == 0 and decoded == {}


# -- the store's capability and recalls ---------------------------------------------------

SCOPES = [Scope("t", "a"), Scope("t", "b"), Scope("t")]
VIEWS = [TemporalView(as_of=T0 + 10**12), TemporalView(as_of=T0 + 150 * 10**6)]


def _fill(store: SQLiteStore, rng: random.Random, n: int, first: int = 0) -> None:
    """Rows in two namespaces; pairs share a time, and every other pair its text too (ties
    of score and time: the id decides)."""
    text = ""
    for i in range(first, first + n):
        scope = SCOPES[i % 2]
        text = text if i % 4 == 1 else _text(rng) or "zzz"
        store.insert_memory(scope, stored_memory(scope, i, text, T0 + (i // 2) * 10**6), None)


def _queries(rng: random.Random) -> list[str]:
    return [" ".join(rng.sample(WORDS, rng.randint(1, 6))) for _ in range(12)] + ["the", "zzz"]


@pytest.mark.parametrize("reopen", [False, True])
def test_the_store_scores_its_pool_as_raw_scores_would(
    tmp_path: Path, reopen: bool, way: str
) -> None:
    rng = random.Random(7)
    store = SQLiteStore(tmp_path / "m.db")
    assert isinstance(store, ScoresPool)
    _fill(store, rng, 300)
    if reopen:  # the persisted index (blobs, terms not counted yet), rows added since (tails)
        store.text_pool(SCOPES[2], "alpha", 5, VIEWS[0])  # loaded, so saved at close
        _fill(store, rng, 10, first=300)
        store.close()
        store = SQLiteStore(tmp_path / "m.db")
        _fill(store, rng, 40, first=310)
        index = store.text._caches.tenant_text("t")
        assert isinstance(index.terms, BlobColumn) and index.terms.appended()
        assert min(index.term_counts) == -1
    for scope in SCOPES:
        for view in VIEWS:
            for query in _queries(rng):
                for k in (0, 5, 200):
                    got = store.text_pool_scores(scope, query, k, view)
                    assert got is not None
                    pool = store.text_pool(scope, query, k, view)
                    held = store.scoring_terms(scope, [t.id for t in pool])
                    want = [
                        (t.id, t.t_created, s) for t, _, s in raw_scores(pool, query, held=held)
                    ]
                    rows = zip(got.ids, got.t_created.tolist(), got.scores.tolist(), strict=True)
                    # the same rows and floats; in any order (the lane orders them below)
                    assert sorted((i, t, s.hex()) for i, t, s in rows) == sorted(
                        (i, t, s.hex()) for i, t, s in want
                    )
                    assert all(held[i] == t for i, t in got.terms.items())
                    # the lane's columns: rescore_pool's rows, in its order, the same floats
                    cols = text_lane.ranked_by_backend(store, scope, query, k, view)
                    assert cols is not None
                    want_rows = rescore_pool(pool, query, held=held)
                    assert _columns(cols) == _columns(Ranked.of(want_rows))
    store.close()


def _columns(ranked: Ranked) -> tuple[list[str], list[str]]:
    return ranked.ids, [s.hex() for s in ranked.scores]


def test_fts5_declines_and_the_pool_is_rescored_above_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db", text_index="fts5")
    _fill(store, random.Random(3), 30)
    assert store.text_pool_scores(SCOPES[0], "alpha", 10, VIEWS[0]) is None
    assert text_lane.ranked_by_backend(store, SCOPES[0], "alpha", 10, VIEWS[0]) is None
    store.close()


def _recalls(path: Path, turns: list[str], questions: list[str]) -> list[str]:
    clock = ManualClock(from_us(T0))
    mem = AgentMemory(path, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(7))
    ctx = AgentContext(agent_id="a", tenant="t", namespace="n")
    for i, text in enumerate(turns):
        clock.set(from_us(T0 + i * 10**6))
        mem.add(text, context=ctx)
    out = [mem.recall(q, context=ctx).model_dump_json() for q in questions]
    mem.close()
    return out


def test_a_recall_answers_alike_whether_the_store_scores_its_pool_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    turns = [_text(rng) or "zzz" for _ in range(400)]
    questions = _queries(rng)
    calls: list[str] = []
    scores = SQLiteStore.text_pool_scores

    def counted(self: SQLiteStore, *args: object) -> object:
        calls.append("scored")
        return scores(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SQLiteStore, "text_pool_scores", counted)
    fast = _recalls(tmp_path / "fast.db", turns, questions)
    assert len(calls) >= len(questions)  # the store did score its pools
    monkeypatch.setattr(SQLiteStore, "text_pool_scores", lambda self, *args: None)
    assert _recalls(tmp_path / "slow.db", turns, questions) == fast


class _Scored:
    """A backend answering ``text_pool_scores`` with fixed rows (ScoresPool)."""

    def __init__(self, rows: list[tuple[str, int, float]]) -> None:
        self.rows = rows

    def text_pool_scores(self, scope: Scope, query: str, k: int, view: TemporalView) -> object:
        ids, times, scores = zip(*self.rows, strict=True)
        return PoolScores(list(ids), np.array(times), np.array(scores), {"b": ("x",)})


def test_backend_scores_rank_as_rescore_pool_ties_and_rounding_included() -> None:
    rows = [("d", 5, 0.5), ("c", 5, 0.5), ("b", 7, 0.5), ("a", 5, 0.5 + 1e-12), ("e", 9, 0.0)]
    rows += [("f", 5, 1 / 1024), ("g", 6, 2.0000000004), ("h", 6, 2.0000000006)]
    cache: dict[str, tuple[str, ...]] = {}
    got = text_lane.ranked_by_backend(_Scored(rows), Scope("t"), "q", 9, VIEWS[0], cache)
    assert got is not None and cache == {"b": ("x",)}
    pool = [TextHit(i, "", t, s) for i, t, s in rows if s > 0]
    want = sorted(
        (TextHit(t.id, "", t.t_created, round(t.score, 9)) for t in pool),
        key=lambda t: (-t.score, -t.t_created, t.id),
    )
    assert _columns(got) == _columns(Ranked.of(want))
    assert got.ids == ["h", "g", "b", "a", "c", "d", "f"]  # a, c, d: one tie
