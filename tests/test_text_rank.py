"""The text index's ordering of its best rows (text_rank.py) and its postings reads.

``best_first`` must pick and order rows exactly as ``sorted`` of (-score, -t_created,
id) does, ties on score and time included, at the cut too; the index must hand its pool
the same rows and floats as a brute-force ranking; a persisted term's postings are
checked once, not on every read.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded import indexfile
from attestor_arango.store.embedded.indexfile import IndexFile
from attestor_arango.store.embedded.persisted import sections_of
from attestor_arango.store.embedded.text_index import TenantText, query_terms
from attestor_arango.store.embedded.text_rank import KeptTerms, best_first
from attestor_arango.store.embedded.text_sections import text_from_sections
from attestor_arango.text import bm25

T0 = 1_700_000_000_000_000
OPEN = 2**62


def _reference(scores: list[float], created: list[int], ids: list[str], k: int) -> list[int]:
    order = sorted(range(len(scores)), key=lambda p: (-scores[p], -created[p], ids[p]))
    return order[:k]


@pytest.mark.parametrize("seed", range(40))
def test_best_first_orders_as_sorted_ties_and_the_cut_included(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 120)
    # few distinct scores and times: many rows tie on both, some runs straddle the cut
    scores = [rng.choice([0.5, 1.25, 2.0, 1 / 3, 7.0]) for _ in range(n)]
    created = [rng.choice([T0, T0 + 1, T0 + 2]) for _ in range(n)]
    ids = [f"m{rng.randrange(10**6):06d}-{p}" for p in range(n)]  # unique, unordered
    asked: list[list[int]] = []

    def ids_of(places: np.ndarray) -> list[str]:
        asked.append(places.tolist())
        return [ids[p] for p in places.tolist()]

    for k in (0, 1, 5, n // 2, n, n + 3):
        got = best_first(np.array(scores, dtype=np.float64), np.array(created), k, ids_of)
        assert got.tolist() == _reference(scores, created, ids, k), (k, n)


def test_best_first_reads_no_id_when_nothing_ties() -> None:
    scores = np.array([1.0, 3.0, 2.0, 3.0, 0.5])
    created = np.array([T0, T0 + 1, T0, T0, T0])  # equal scores, distinct times

    def ids_of(places: np.ndarray) -> list[str]:
        raise AssertionError("no id needed")

    assert best_first(scores, created, 3, ids_of).tolist() == [1, 3, 2]


def _id(row: int) -> str:
    """Unique ids out of row order, so a tie the id decides is not decided by the row."""
    return f"m{row * 7919 % 1000:04d}"


def _brute_force(texts: list[str], query: list[str], k: int) -> list[tuple[str, int, str]]:
    """Every row scored word by word with the index's BM25 (every word's stem counts)."""
    from attestor_arango.text.stemming import stem, words

    stems = [[stem(w) for w in words(t)] for t in texts]
    n = len(texts)
    avgdl = sum(map(len, stems)) / n
    rows = []
    for r, row in enumerate(stems):
        score, hit = 0.0, False
        for term in dict.fromkeys(query):
            df = sum(1 for s in stems if term in s)
            if f := row.count(term):
                hit = True
                norm = bm25.length_norm(np.array([len(row)], dtype=np.int32), avgdl)
                score += float(bm25.term_score(bm25.idf(n, df), np.array([float(f)]), norm)[0])
        if hit:
            rows.append((-score, -(T0 + r // 3), _id(r)))
    return [(i, -t, (-s).hex()) for s, t, i in sorted(rows)[:k]]


@pytest.mark.parametrize("seed", range(6))
def test_the_pool_is_the_brute_force_ranking_of_the_rows(seed: int) -> None:
    """Rows share times (three per microsecond) and many texts: the id decides often. Rows
    arrive between the queries (the kept length parts must follow the average length), and
    rare words make some queries' postings too few for the kept parts to be used."""
    rng = random.Random(seed)
    vocab = ["alpha", "beta", "gamma", "delta", "river", "stone", "the", "and"]
    rare = ["kiwi", "lemon"]
    texts: list[str] = []
    index = TenantText()
    view = TemporalView(as_of=T0 + 10**9)
    for _ in range(4):
        for _ in range(75):
            r = len(texts)
            words = rng.choices(vocab, k=rng.randint(1, 6)) + rng.sample(rare, rng.randint(0, 1))
            texts.append(" ".join(words))
            index.add(_id(r), "n", texts[-1], (T0 + r // 3, OPEN, T0, OPEN))
        for _ in range(6):
            query = query_terms(" ".join(rng.sample(vocab + rare, rng.randint(1, 4))))
            for k in (1, 7, 50, 400):
                hits, _ = index.search(query, k, "n", view)
                got = [(h.id, h.t_created, h.score.hex()) for h in hits]
                assert got == _brute_force(texts, query, k)


def test_a_persisted_terms_postings_are_checked_once(tmp_path: Path) -> None:
    """The file's block check runs for a term's postings the first time they are read;
    later reads of the term (every recall asks for each term twice) check nothing."""
    index = TenantText()
    n = 500
    times = np.array([[T0 + r, OPEN, T0, OPEN] for r in range(n)], dtype=np.int64)
    index.load([f"m{r:04d}" for r in range(n)], ["n"] * n, ["alpha beta"] * n, times)
    arrays, meta = sections_of(index)
    path = tmp_path / "t.text"
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path, lazy=("contents", "terms", "p.pairs"))
    checks: list[str] = []

    def check(name: str, lo: np.ndarray, hi: np.ndarray) -> None:
        checks.append(name)
        f.check(name, lo, hi)

    mapped = text_from_sections({k: f.section(k) for k in f.names()}, f.meta, check)
    view = TemporalView(as_of=T0 + 10**9)
    first = mapped.search(["alpha", "beta"], 5, "n", view)
    assert checks.count("p.pairs") == 2  # one per term
    assert mapped.search(["alpha", "beta"], 5, "n", view) == first
    assert mapped.search(["beta"], 5, "n", view)[0]
    assert checks.count("p.pairs") == 2  # read again: not checked again


class _Counted:
    """A terms column that counts the rows it decodes."""

    def __init__(self, column: TenantText) -> None:
        self.column = column.terms
        self.decoded = 0

    def take(self, rows: object) -> list[object]:
        found = self.column.take(rows)  # type: ignore[arg-type]
        self.decoded += len(found)
        return found

    def sizes(self, rows: np.ndarray) -> np.ndarray:
        return self.column.sizes(rows)


def test_kept_terms_read_as_the_column_and_decode_each_row_once_within_the_limit() -> None:
    index = TenantText()
    n = 300
    rng = random.Random(2)
    texts = [
        " ".join(rng.choices(["alpha", "beta", "the", "gamma"], k=rng.randint(0, 5)))
        for _ in range(n)
    ]
    times = np.array([[T0 + r, OPEN, T0, OPEN] for r in range(n)], dtype=np.int64)
    index.load([_id(r) for r in range(n)], ["n"] * n, texts, times)
    counted = _Counted(index)
    kept = KeptTerms(counted, limit=100)  # type: ignore[arg-type]
    for _ in range(50):
        rows = rng.sample(range(n), rng.randint(0, 60))
        assert kept.take(np.array(rows, dtype=np.int64)) == index.terms.take(rows)
        assert len(kept._kept) <= 100
    counted.decoded = 0
    rows = list(range(40))
    kept.take(rows)
    kept.take(rows[::-1])
    assert counted.decoded <= 40  # the second read decoded nothing


def test_a_persisted_index_decodes_a_rows_terms_once_across_reads(tmp_path: Path) -> None:
    """``terms_of`` (what coverage and freshness read every recall) and the pool's decoded
    rows come from the kept rows after their first read."""
    index = TenantText()
    n = 200
    times = np.array([[T0 + r, OPEN, T0, OPEN] for r in range(n)], dtype=np.int64)
    index.load([_id(r) for r in range(n)], ["n"] * n, [f"alpha beta w{r}" for r in range(n)], times)
    decoded: list[int] = []
    take = type(index.terms).take

    def counting(self: object, rows: object) -> list[object]:
        found = take(self, rows)  # type: ignore[arg-type]
        decoded.append(len(found))
        return found

    ids = [_id(r) for r in range(0, n, 3)]
    first = index.terms_of(ids, "n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(index.terms), "take", counting)
        assert index.terms_of(ids, "n") == first
        assert index.terms_of(ids[::-1], None) == first
    assert sum(decoded) == 0
