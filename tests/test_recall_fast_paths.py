"""The recall path's fast paths give what the plain code they replaced gave, bit for bit.

Each reference below is the straightforward version of a step (the code before it was
made cheaper); the fast path must return the same values, floats compared exactly,
on inputs built to hit the cases where a shortcut could differ (repeated words, three
or more query terms in one row, whose float sum depends on the order it is taken in).
"""

from __future__ import annotations

import random

import pytest

from attestor_arango.retrieval.text_lane import raw_scores, rescore_pool, terms
from attestor_arango.store.protocol import TextHit
from attestor_arango.text import bm25


def _reference_scores(
    pool: list[TextHit], query: str, held: dict[str, tuple[str, ...]] | None
) -> list[tuple[TextHit, tuple[str, ...], float]]:
    """BM25 over the pool, counting word by word (the code before the fast path)."""
    q = list(dict.fromkeys(terms(query)))
    if not q or not pool:
        return []
    held = held or {}
    docs = {t.id: held[t.id] if t.id in held else terms(t.content) for t in pool}
    n = len(docs)
    avgdl = sum(len(t) for t in docs.values()) / n or 1.0
    query_terms = frozenset(q)
    counts: dict[str, dict[str, int]] = {}
    df: dict[str, int] = {}
    for i, toks in docs.items():
        tf: dict[str, int] = {}
        for w in [w for w in toks if w in query_terms]:
            tf[w] = tf.get(w, 0) + 1
        counts[i] = tf
        for w in tf:
            df[w] = df.get(w, 0) + 1
    idf = {w: bm25.idf(n, c) for w, c in df.items()}
    out: list[tuple[TextHit, tuple[str, ...], float]] = []
    seen: set[str] = set()
    for t in pool:
        if t.id in seen:
            continue
        seen.add(t.id)
        tf = counts[t.id]
        if not tf:
            continue
        toks = docs[t.id]
        norm = bm25.length_norm(len(toks), avgdl)
        score = 0.0
        for w, f in tf.items():
            score += bm25.term_score(idf[w], f, norm)
        out.append((TextHit(t.id, t.content, t.t_created, score), toks, score))
    return out


def _reference_rescore(
    pool: list[TextHit], query: str, held: dict[str, tuple[str, ...]] | None
) -> list[TextHit]:
    scored = _reference_scores(pool, query, held)
    out = [TextHit(t.id, t.content, t.t_created, round(s, 9)) for t, _, s in scored if s > 0]
    out.sort(key=lambda t: (-t.score, -t.t_created, t.id))
    return out


WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "zeta", "rho"]


def _pool(rng: random.Random, size: int) -> list[TextHit]:
    pool = []
    for _ in range(size):
        text = " ".join(rng.choices(WORDS, weights=range(10, 0, -1), k=rng.randint(1, 25)))
        pool.append(TextHit(f"m{rng.randrange(size * 2):04d}", text, rng.randrange(5), 0.0))
    return pool


@pytest.mark.parametrize("seed", range(40))
def test_bm25_rescoring_matches_word_by_word_counting(seed: int) -> None:
    rng = random.Random(seed)
    pool = _pool(rng, rng.randint(1, 120))
    # every other seed: the terms a backend's index held for the rows (stored_terms)
    held = {t.id: terms(t.content) for t in pool} if seed % 2 == 0 else None
    query = " ".join(rng.sample(WORDS, rng.randint(1, 8)))
    got = rescore_pool(pool, query, held=held)
    want = _reference_rescore(pool, query, held)
    assert [(t.id, t.score) for t in got] == [(t.id, t.score) for t in want]
    assert got == want
    # before rounding too: a float sum depends on its order, and rounding hides most of it
    raw = [(t.id, toks, s) for t, toks, s in raw_scores(pool, query, held=held)]
    assert raw == [(t.id, toks, s) for t, toks, s in _reference_scores(pool, query, held)]
