"""Freshness reads and tests only the candidates that may be an update, and ranks as before.

Only the ``freshness_update_rank`` most relevant candidates can be an update, so
``apply_freshness`` reads the words (does it announce a change?) of those alone and
asks the pipeline for their stored terms only. The reference below is the step as it
was before: every candidate's words read, every candidate tested; the two must give
the same freshness and relevance, bit for bit. With the query's words (``asked``), the
reference reads every candidate's query words up front, where the step reads only those
of the memories without a session said the same day as a tested statement. The reference
searches with numpy masks over every row (``freshness_masks``: the step until session 25),
where the step walks the rows in Python, one at a time.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from freshness_masks import AskedWords, mutual_nearest_later, session_codes
from retrieval_fakes import FakeStore, mem, view_at

from attestor_arango.retrieval import RetrievalConfig, recall
from attestor_arango.retrieval.candidates import Candidate, update_relevance
from attestor_arango.retrieval.freshness import (
    CHANGE_CUES,
    FRESH_EPSILON,
    _when,
    apply_freshness,
    unit_rows,
)
from attestor_arango.retrieval.rounding import round_list
from attestor_arango.scope import Scope
from attestor_arango.text.stemming import scoring_terms

CFG = RetrievalConfig()


def freshness_reference(
    cands: Sequence[Candidate],
    vectors: Mapping[str, np.ndarray],
    config: RetrievalConfig,
    asked: Sequence[str] | None = None,
) -> None:
    """``apply_freshness`` before it read only the first places: every candidate's words,
    every candidate tested, the rank of each from a full sort."""
    exempt = set(config.freshness_exempt_tags)
    items = [
        c for c in cands if not c.synthetic and c.id in vectors and exempt.isdisjoint(c.memory.tags)
    ]
    if len(items) < 2:
        return
    unit = unit_rows(items, vectors)
    cued = np.array([not CHANGE_CUES.isdisjoint(c.content_terms()) for c in items], dtype=bool)
    before = [c.relevance for c in items]
    whens = np.array([(c.valid_from, c.t_created) for c in items], dtype=np.int64).reshape(-1, 2)
    sessions = session_codes(items)
    words = None if asked is None else AskedWords(items, asked)
    if words is not None:
        for k in range(len(items)):  # every candidate's words, read up front
            words.row(k)
    keys = [(-r, -c.t_created, c.id) for r, c in zip(round_list(before, 12), items, strict=True)]
    top = sorted(range(len(items)), key=keys.__getitem__)
    rank = {k: r for r, k in enumerate(top)}
    changed: set[int] = set()
    kin: dict[int, set[int]] = {}
    stale: set[int] = set()
    tops: dict[int, float] = {}
    yielding = sorted(top[: config.freshness_top_n], key=lambda k: (_when(items[k]), items[k].id))
    for i in yielding:
        sims = np.round(unit @ unit[i], 9)
        close = (sims >= config.freshness_similarity) | (
            (sims >= config.freshness_cue_similarity) & cued
        )
        close[i] = False
        mate = mutual_nearest_later(
            i,
            sims,
            unit,
            sessions,
            whens,
            config.freshness_cue_similarity,
            asked=words,
            kin=kin.get(i, ()),
        )
        if mate is not None:
            close[mate] = True
        older = items[i]
        s_old = older.memory.provenance.session_id
        updates = []
        for j in (int(x) for x in np.flatnonzero(close)):
            newer = items[j]
            if newer.memory.entity != older.memory.entity:
                continue
            if s_old is not None and s_old == newer.memory.provenance.session_id:
                continue
            if _when(newer) <= _when(older):
                continue
            if rank[j] >= config.freshness_update_rank:
                continue
            if (
                words is not None  # a near twin must hold every query word the older holds
                and not cued[j]
                and sims[j] >= config.freshness_similarity
                and words.row(i) & ~words.row(j)
            ):
                continue
            updates.append(j)
        if not updates:
            continue
        best = min(updates, key=keys.__getitem__)
        chain = kin.get(i, {i}) | kin.get(best, {best})
        for k in chain:
            kin[k] = chain
        peak = max(before[k] for k in chain if _when(items[k]) < _when(items[best]))
        tops[best] = max(tops.get(best, peak), peak)
        stale.add(i)
        changed.update((i, best))
    for k in stale:
        items[k].freshness = -config.freshness_penalty
    for k, peak in tops.items():
        if k not in stale:
            lift = round(max(0.0, peak - before[k]) + FRESH_EPSILON, 12)
            items[k].freshness = max(items[k].freshness, lift)
    update_relevance([items[k] for k in sorted(changed)])


WORDS = ["piano", "lessons", "moved", "now", "Berlin", "switched", "car", "cat", "instead"]
PLAIN = ["piano", "lessons", "Berlin", "car", "cat", "garden", "bike"]  # no change cue


def _case(
    seed: int, quick: bool = False
) -> tuple[list[Candidate], dict[str, np.ndarray], RetrievalConfig, tuple[str, ...] | None]:
    """Random candidates, vectors and config, and the query's words (None: not given).
    ``quick``: memories without sessions or entities, all said within a day, in words
    that announce no change."""
    rng = random.Random(seed)
    n = rng.randint(2, 40)
    centres = [np.array([rng.gauss(0, 1) for _ in range(8)]) for _ in range(3)]
    cands, vectors = [], {}
    words = PLAIN if quick else WORDS
    for i in range(n):
        m = mem(
            f"m{i:03d}",
            " ".join(rng.choices(words, k=rng.randint(1, 5))),
            day=rng.uniform(0, 0.9) if quick else rng.choice([rng.uniform(0, 30), 5.0]),
            entity=None if quick else rng.choice([None, "alice", "bob"]),
            session=None if quick else rng.choice([None, "s1", "s2", "s3"]),
        )
        c = Candidate(memory=m)
        c.rrf_norm = rng.choice([rng.random(), 0.5])
        c.compute_relevance()
        cands.append(c)
        if rng.random() < 0.95:
            noise = np.array([rng.gauss(0, rng.choice([0.05, 0.5])) for _ in range(8)])
            vectors[m.id] = (rng.choice(centres) + noise).astype(np.float32)
    config = CFG.replace(
        freshness_top_n=rng.randint(1, 6),
        freshness_update_rank=rng.randint(1, 8),
        freshness_similarity=rng.choice([0.9, 0.6]),
        freshness_cue_similarity=rng.choice([0.35, 0.1]),
    )
    asked = rng.choice([None, scoring_terms(" ".join(rng.choices(words, k=rng.randint(1, 4))))])
    return cands, vectors, config, asked


@pytest.mark.parametrize("quick", [False, True])
@pytest.mark.parametrize("seed", range(300))
def test_freshness_equals_the_step_that_read_every_candidate(seed: int, quick: bool) -> None:
    got, vectors, config, asked = _case(seed, quick)
    want, _, _, _ = _case(seed, quick)
    apply_freshness(got, vectors, config, asked)
    freshness_reference(want, vectors, config, asked)
    assert [(c.id, c.freshness.hex(), c.relevance.hex()) for c in got] == [
        (c.id, c.freshness.hex(), c.relevance.hex()) for c in want
    ]


def test_some_cases_change_a_rank() -> None:
    # the comparison above is not vacuous: freshness moves candidates in many cases
    moved = 0
    for seed in range(300):
        cands, vectors, config, asked = _case(seed)
        apply_freshness(cands, vectors, config, asked)
        moved += any(c.freshness != 0.0 for c in cands)
    assert moved > 30


def test_some_cases_rank_by_the_query_words() -> None:
    # nor for the query's words: in many cases they change what freshness does
    differ = 0
    for seed in range(300):
        with_words, vectors, config, asked = _case(seed, quick=True)
        if asked is None:
            continue
        without, _, _, _ = _case(seed, quick=True)
        apply_freshness(with_words, vectors, config, asked)
        apply_freshness(without, vectors, config)
        differ += [c.freshness for c in with_words] != [c.freshness for c in without]
    assert differ > 5  # 10 of the 134 cases with words


def test_only_the_candidates_that_may_update_have_their_words_read() -> None:
    cands, vectors, config, _ = _case(7)
    config = config.replace(freshness_update_rank=3)
    apply_freshness(cands, vectors, config)  # without the query's words
    read = [c.id for c in cands if c.terms is not None]
    assert 0 < len(read) <= 3


class _Fixed:
    """Every text embeds to (1, 0)."""

    name = "fixed"
    dimension = 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))


class _CountingTerms(FakeStore):
    """Keeps every row's scoring terms and records the ids each call asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        self.asked.append(len(ids))
        return {i: scoring_terms(self.memories[i].content) for i in ids if i in self.memories}


def test_a_recall_without_conversation_records_asks_the_store_for_no_terms() -> None:
    s = _CountingTerms()
    rng = random.Random(3)
    for i in range(30):
        s.add(mem(f"m{i:02d}", f"Alice moved piano lessons {i}", day=i), [rng.random(), 1.0])
    # the vector lane alone (the text lane reads its pool's terms for BM25 itself)
    config = CFG.replace(bm25_enabled=False)
    query = "Alice piano lessons now"
    resp = recall(s, _Fixed(), Scope("t", "ns"), query, view_at(40), 10_000, config)  # type: ignore[arg-type]
    assert len(resp.results) == 30
    # no conversation record: coverage credits none and reads no terms; freshness reads
    # the words of a few, through the memoised tokeniser rather than a store call
    assert s.asked == []


class _FailingVectors(FakeStore):
    """Stored vectors cannot be read: a recall that compares them says so in ``errors``."""

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        raise OSError("vectors unreadable")


def test_only_a_recall_that_runs_freshness_reads_the_candidates_stored_vectors() -> None:
    s = _FailingVectors()
    for i in range(5):
        s.add(mem(f"m{i:02d}", f"Alice moved piano lessons {i}", day=i), [1.0, 0.0])
    # the text lane alone: no lane reads a vector, so only freshness would
    config = CFG.replace(vector_enabled=False)
    scope = Scope("t", "ns")
    now = recall(s, _Fixed(), scope, "Alice piano lessons now", view_at(40), 10_000, config)
    assert "vectors_error" in now.errors  # freshness runs: the read was needed, and failed
    # a question in the past tense skips freshness, so nothing needs the vectors
    past = recall(
        s, _Fixed(), scope, "Where did Alice have piano lessons", view_at(40), 10_000, config
    )
    assert "vectors_error" not in past.errors
