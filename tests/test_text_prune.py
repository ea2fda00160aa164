"""The text index's exact early termination (text_prune.py): a query whose common terms'
bounds cannot reach the k-th best score skips the rows holding only those terms, and the
pool (rows, float scores, order, ties at the cut, namespaces, the pool's own BM25) must be
the full match's, to the last bit, in every view."""

from __future__ import annotations

import random

import numpy as np
import pytest

from attestor_arango.clock import OPEN
from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded import text_prune
from attestor_arango.store.embedded.text_index import TenantText, query_terms
from attestor_arango.text import bm25

COMMON = ["s", "go", "like", "about"]  # held by most rows, like the "s" of "Caroline's"
RARE = [f"r{i}" for i in range(40)]
MID = [f"m{i}" for i in range(8)]


def _index(rng: random.Random, n: int) -> TenantText:
    index = TenantText()
    base = []
    for _ in range(60):  # sentences repeated across rows: equal scores, ties at the cut
        words = rng.choices(COMMON, k=rng.randint(1, 4)) + rng.choices(MID, k=rng.randint(0, 2))
        if rng.random() < 0.3:
            words += rng.choices(RARE, k=rng.randint(1, 2))
        base.append(" ".join(rng.sample(words, len(words))))
    rows = []
    for i in range(n):
        text = rng.choice(base) if rng.random() < 0.7 else " ".join(rng.choices(COMMON, k=3))
        if rng.random() < 0.05:  # one common word many times: a part near its term's bound
            text = " ".join([rng.choice(COMMON)] * rng.randint(5, 60))
        t = i // 3  # three rows per microsecond: equal times too
        until = OPEN if rng.random() < 0.9 else t + rng.randint(1, n)
        rows.append(
            (f"m{rng.randrange(10**9):09d}-{i}", rng.choice(["a", "a", "b"]), text, t, until)
        )
    split = rng.choice(
        [0, n // 2, n]
    )  # bulk-loaded postings (as a persisted index maps), then added
    index.load(
        [r[0] for r in rows[:split]],
        [r[1] for r in rows[:split]],
        [r[2] for r in rows[:split]],
        np.array([(r[3], r[4], 0, OPEN) for r in rows[:split]], dtype=np.int64).reshape(-1, 4),
    )
    for memory_id, namespace, text, t, until in rows[split:]:
        index.add(memory_id, namespace, text, (t, until, 0, OPEN))
    return index


def _queries(rng: random.Random) -> list[list[str]]:
    out = []
    for _ in range(12):
        words = rng.sample(COMMON, rng.randint(1, 3)) + rng.sample(RARE, rng.randint(0, 2))
        words += rng.sample(MID, rng.randint(0, 2))
        out.append(query_terms(" ".join(rng.sample(words, len(words)))))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_pruned_matches_rank_as_the_full_match(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    n = rng.choice([400, 1500, 4000])
    index = _index(rng, n)
    queries = _queries(rng)
    views = [TemporalView(as_of=n), TemporalView(as_of=n // 2)]  # all rows seen, then a mask
    asks = [
        (q, k, ns, v) for q in queries for k in (1, 5, 20, 50) for ns in (None, "a") for v in views
    ]
    monkeypatch.setattr(text_prune, "MIN_HITS", 0)  # small indexes: prune whenever it may
    pruned: list[int] = []
    plain = text_prune.candidates

    def counting(terms, k, norm_of, rows):  # type: ignore[no-untyped-def]
        got = plain(terms, k, norm_of, rows)
        if got is not None:
            pruned.append(sum(t.rows.size for t in terms) - got[0].size)
        return got

    monkeypatch.setattr(text_prune, "candidates", counting)
    fast = [index.search(q, k, ns, v) for q, k, ns, v in asks]
    fast_pool = [index.pool_scores(q, q, k, ns, v) for q, k, ns, v in asks]
    monkeypatch.setattr(text_prune, "candidates", lambda *a: None)
    full = [index.search(q, k, ns, v) for q, k, ns, v in asks]
    full_pool = [index.pool_scores(q, q, k, ns, v) for q, k, ns, v in asks]
    assert fast == full
    for (a, na), (b, nb) in zip(fast_pool, full_pool, strict=True):
        assert na == nb and a.ids == b.ids and a.terms == b.terms
        assert a.t_created.tolist() == b.t_created.tolist()
        assert a.scores.tolist() == b.scores.tolist()  # the same floats
    assert pruned and all(p > 0 for p in pruned)  # the bounds did skip rows


def test_a_part_never_reaches_its_terms_bound() -> None:
    """``tf / (tf + norm) < 1``: a term's part stays below ``idf * (k1 + 1)``, floats included,
    for the largest frequencies and the shortest rows."""
    rng = np.random.default_rng(1)
    tf = np.concatenate([np.arange(1, 2000), rng.integers(1, 10**6, 5000)])
    lengths = np.concatenate([np.ones(2000), rng.integers(1, 50, 5000)]).astype(np.int64)
    for weight in (bm25.idf(10**6, 1), bm25.idf(10**6, 10**6), 3.7):
        term = text_prune.TermHits(np.arange(tf.size), tf, weight)
        got = text_prune.parts(term, term.rows, tf, lambda r: bm25.length_norm(lengths[r], 40.0))
        assert float(got.max()) < term.bound


def test_no_pruning_without_enough_rows_or_a_second_term() -> None:
    one = text_prune.TermHits(np.arange(10), np.ones(10, dtype=np.int32), 1.0)
    big = text_prune.TermHits(np.arange(1000), np.ones(1000, dtype=np.int32), 0.1)
    norm_of = lambda rows: np.ones(rows.size)  # noqa: E731
    assert text_prune.candidates([big], 5, norm_of, 1000) is None
    assert text_prune.candidates([one, big], 50, norm_of, 1000) is None  # 10 rows < k


def test_no_pruning_below_min_hits_postings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rare term and a common one whose bound is far below the rare rows' scores: pruned
    from ``MIN_HITS`` postings up, never below (the seed pass would cost more than it spares),
    and the rows and floats kept are the full match's either way."""
    norm_of = lambda rows: np.ones(rows.size)  # noqa: E731
    rare = text_prune.TermHits(np.arange(0, 100, 2), np.ones(50, dtype=np.int32), 5.0)

    def common(size: int) -> text_prune.TermHits:
        return text_prune.TermHits(np.arange(size), np.ones(size, dtype=np.int32), 0.01)

    n = text_prune.MIN_HITS + 100
    small, large = common(text_prune.MIN_HITS - 100), common(text_prune.MIN_HITS)
    assert text_prune.candidates([rare, small], 20, norm_of, n) is None
    got = text_prune.candidates([rare, large], 20, norm_of, n)
    assert got is not None and got[0].tolist() == rare.rows.tolist()  # the common rows skipped
    full = text_prune.score_all([rare, large], norm_of, n)
    at = np.searchsorted(full[0], got[0])
    assert got[1].tolist() == full[1][at].tolist()  # the same floats
    monkeypatch.setattr(text_prune, "MIN_HITS", 0)
    assert text_prune.candidates([rare, small], 20, norm_of, n) is not None


def test_rows_near_the_skipped_terms_bounds_still_reach_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows holding only the common terms, many times each, in a long-row index (their parts
    near ``idf * (k1 + 1)``), against cuts at every rank of the rare term's rows: the pool is
    the full match's at each ``k`` (a bound 10 % too low would leave such rows out)."""
    rng = random.Random(5)
    index = TenantText()
    rows = [" ".join(f"f{rng.randrange(500)}" for _ in range(80)) for _ in range(300)]
    rows += [
        "zeta " + " ".join(f"f{rng.randrange(500)}" for _ in range(rng.randint(0, 90)))
        for _ in range(40)
    ]
    rows += [" ".join(["s"] * m + ["go"] * m) for m in range(1, 40)]
    rows += [f"s go f{i}" for i in range(400)]  # common: low idf
    for i, text in enumerate(rows):
        index.add(f"m{i:05d}", "a", text, (i, OPEN, 0, OPEN))
    view = TemporalView(as_of=len(rows))
    q = query_terms("zeta s go")
    assert q == ["zeta", "s", "go"]
    monkeypatch.setattr(text_prune, "MIN_SKIPPED", 0.0)  # prune whenever the bounds allow
    monkeypatch.setattr(text_prune, "MIN_HITS", 0)
    fast = [index.search(q, k, None, view) for k in range(1, 40)]
    monkeypatch.setattr(text_prune, "candidates", lambda *a: None)
    assert fast == [index.search(q, k, None, view) for k in range(1, 40)]


@pytest.mark.parametrize("seed", range(8))
def test_every_terms_parts_in_one_pass_are_each_terms_parts(seed: int) -> None:
    """``score_all`` scores the hits of every term joined: each row's score is the sum, in
    query order from 0.0, of the parts ``parts`` makes term by term (the match before),
    to the last bit, whichever rows the terms share."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    lengths = rng.integers(1, 60, size=n)
    avgdl = float(lengths.mean()) * float(rng.uniform(0.5, 1.5))

    def norm_of(rows: np.ndarray) -> np.ndarray:
        return bm25.length_norm(lengths[rows], avgdl)

    terms = []
    for _ in range(int(rng.integers(1, 7))):
        rows = np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False))
        tf = rng.integers(1, 9, size=rows.size).astype(np.int32)
        terms.append(text_prune.TermHits(rows.astype(np.int32), tf, float(rng.uniform(0.1, 5))))
    got_rows, got = text_prune.score_all(terms, norm_of, n)
    want: dict[int, float] = {}
    for term in terms:  # query order: each row's parts added as the terms come
        parts = text_prune.parts(term, term.rows, term.tf, norm_of).tolist()
        for row, part in zip(term.rows.tolist(), parts, strict=True):
            want[row] = want.get(row, 0.0) + part
    assert got_rows.tolist() == sorted(want)
    assert [s.hex() for s in got.tolist()] == [want[r].hex() for r in sorted(want)]


@pytest.mark.parametrize("seed", range(6))
def test_the_unordered_pool_holds_the_rows_of_the_ordered_one(seed: int) -> None:
    """``pool_scores`` takes the k best without sorting them (``ordered=False``) unless rows
    tie at the cut: the same rows as the ordered pool's k first, ties included."""
    rng = random.Random(100 + seed)
    n = rng.choice([400, 1500])
    index = _index(rng, n)
    views = [TemporalView(as_of=n), TemporalView(as_of=n // 2)]
    ways = {"sorted": 0, "unsorted": 0}
    for q in _queries(rng):
        for k in (1, 5, 20, 50, 5000):
            for ns in (None, "a"):
                for v in views:
                    ordered = index._best(q, k, ns, v)
                    loose = index._best(q, k, ns, v, ordered=False)
                    if ordered is None or loose is None:
                        assert ordered is loose is None
                        continue
                    assert sorted(loose[1].tolist()) == sorted(ordered[1].tolist())
                    assert loose[2] == ordered[2]  # the namespaces checked
                    same_order = loose[1].tolist() == ordered[1].tolist()
                    ways["sorted" if same_order else "unsorted"] += 1
    assert ways["unsorted"]  # the shortcut ran (its rows not in the pool's order)
