"""The recall steps that round over arrays give what the one-at-a-time code gave, bit for bit.

Each reference is the plain per-candidate code the array form replaced (Python
``round`` per value, ``compute_relevance`` per candidate); floats are compared by
their bits (``hex``), so a last-bit difference or a lost sign of zero fails.
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import replace

import numpy as np
import pytest
from retrieval_fakes import as_lanes, view_at
from retrieval_fakes import mem as fake_mem

from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import candidates, pipeline, rounding, temporal
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.completion import exact_cosine
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.fusion import fuse
from attestor_arango.retrieval.neighbours import apply_asking, asking_words, ends_asking
from attestor_arango.retrieval.temporal import age_days, apply_decay_boost
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import Hit


def apply_decay_boost_reference(
    cands: list[Candidate], as_of: int, config: RetrievalConfig
) -> None:
    """``apply_decay_boost`` one candidate at a time with Python's ``round`` (its form
    before the arrays): what the array form must equal bit for bit."""
    for c in cands:
        age = age_days(c, as_of)
        if config.decay_enabled:
            fade = 0.5 ** (age / config.decay_half_life_days)
            c.decay = round(
                config.decay_floor + (1.0 - config.decay_floor) * c.memory.confidence * fade, 12
            )
        if config.boost_enabled:
            c.boost = round(config.recency_boost * math.exp(-age / config.recency_tau_days), 12)
        c.compute_relevance()


def _cands(seed: int, n: int = 2_000) -> list[Candidate]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        m = fake_mem(
            f"m{i:04d}", day=rng.uniform(-400, 60), confidence=rng.choice([1.0, rng.random()])
        )
        c = Candidate(memory=m)
        c.rrf_norm = rng.random() * rng.choice([1.0, 1e-3])
        c.graph_bonus = rng.choice([0.0, round(rng.random() * 0.2, 12)])
        c.session = rng.choice([0.0, round(rng.random() * 0.1, 12), -0.05])
        c.coverage = rng.choice([0.0, round(rng.random() * 0.1, 12)])
        out.append(c)
    return out


def _bits(cands: list[Candidate], *names: str) -> list[tuple[str, ...]]:
    return [tuple(float(getattr(c, n)).hex() for n in names) for c in cands]


# A last-bit difference before rounding would show after it only for values within an ulp
# of a rounding boundary (~1 in 10,000): that part, the rounding, is tested on values
# built to sit there (test_rounding.py); these compare whole steps on ordinary inputs.
@pytest.mark.parametrize("seed", range(1))
@pytest.mark.parametrize("decay,boost", [(True, True), (True, False), (False, True)])
def test_decay_and_boost_over_arrays_equal_the_per_candidate_code(
    seed: int, decay: bool, boost: bool
) -> None:
    config = replace(
        RetrievalConfig(),
        decay_enabled=decay,
        boost_enabled=boost,
        decay_half_life_days=random.Random(seed).choice([30.0, 7.5, 365.0]),
    )
    as_of = view_at(30).as_of
    fast, slow = _cands(seed), _cands(seed)
    apply_decay_boost(fast, as_of, config)
    apply_decay_boost_reference(slow, as_of, config)
    names = ("decay", "boost", "relevance")
    assert _bits(fast, *names) == _bits(slow, *names)
    assert len({c.decay for c in fast}) > 1_000 or not decay  # the values do vary


def _lanes(seed: int) -> list[tuple[str, list[Hit]]]:
    rng = random.Random(seed)
    memories = [fake_mem(f"m{i:05d}", day=rng.uniform(0, 50)) for i in range(1_500)]
    lanes = []
    for name in ("vector", "bm25", "mq_1"):
        picked = rng.sample(memories, rng.randrange(600, 1_200))
        lanes.append((name, [Hit(m, rng.random()) for m in picked]))
    return lanes


@pytest.mark.parametrize("seed", range(2))
def test_fusion_relevance_and_rounded_rrf_equal_compute_relevance(seed: int) -> None:
    rng = random.Random(seed)
    weights = {"vector": rng.uniform(0.5, 1), "bm25": rng.uniform(1, 1.5), "mq_1": rng.random()}
    cands = fuse(as_lanes(_lanes(seed)), 60, weights=weights)
    assert len(cands) > 1_000
    best = sum(weights.values()) / 61
    for c in cands:
        assert c.rrf_norm.hex() == (c.rrf / best).hex()
        ref = copy.copy(c)
        assert c.relevance.hex() == ref.compute_relevance().hex()
        b = c.breakdown()
        assert b.rrf.hex() == float(round(c.rrf, 12)).hex()
        assert b.rrf_norm.hex() == float(round(c.rrf_norm, 12)).hex()
    # a later change of rrf is not hidden by the values fusion rounded
    c = cands[0]
    c.rrf = c.rrf + 1e-7
    assert c.breakdown().rrf == round(c.rrf, 12)


def test_fusion_rounds_a_negative_zero_norm_as_compute_relevance() -> None:
    # a tiny negative weight's share divided by a huge best underflows to -0.0: rrf_norm
    # keeps the sign, the relevance is round(rrf_norm + 0.0, 12), a positive zero
    m, n = fake_mem("m1", day=1.0), fake_mem("m2", day=2.0)
    lanes = [("bm25", [Hit(m, 1.0)]), ("vector", [Hit(n, 1.0)])]
    cands = fuse(as_lanes(lanes), 60, weights={"bm25": -1e-310, "vector": 1e300})
    (neg,) = [c for c in cands if c.id == "m1"]
    assert neg.rrf < 0.0 and neg.rrf_norm.hex() == "-0x0.0p+0"
    for c in cands:
        assert c.relevance.hex() == copy.copy(c).compute_relevance().hex()
        assert c.breakdown().rrf_norm.hex() == float(round(c.rrf_norm + 0.0, 12)).hex()


class _Vectors:
    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def get_vectors(self, scope: Scope, ids: list[str]) -> dict[str, np.ndarray]:
        return {i: self.vectors[i] for i in ids if i in self.vectors}


@pytest.mark.parametrize("seed", range(3))
def test_exact_cosine_over_arrays_equals_rounding_each_row(seed: int) -> None:
    rng = np.random.default_rng(seed)
    memories = [fake_mem(f"m{i:05d}", day=float(i % 7)) for i in range(2_000)]
    vectors = {m.id: rng.standard_normal(16).astype(np.float32) for m in memories[:1_990]}
    vectors[memories[0].id] = np.zeros(16, dtype=np.float32)  # norm 0: divided by 1.0
    store = _Vectors(vectors)
    q = rng.standard_normal(16).astype(np.float32)
    hits = [Hit(m, float(rng.random())) for m in memories]
    got = exact_cosine(store, Scope("t", "ns"), q, hits)  # type: ignore[arg-type]
    qq = np.asarray(q, dtype=np.float64)
    qq = qq / (float(np.linalg.norm(qq)) or 1.0)
    want = []
    for h in hits:
        v = vectors.get(h.memory.id)
        if v is None:
            want.append(Hit(h.memory, round(float(h.score), 6)))
            continue
        row = np.asarray(v, dtype=np.float64)
        norm = float(np.sqrt((row * row).sum()))
        want.append(Hit(h.memory, round(float((row * qq).sum()) / (norm or 1.0), 9)))
    want.sort(key=lambda h: (-h.score, -h.memory.us("t_created"), h.memory.id))
    assert [m.id for m in got.memories] == got.ids
    assert [(i, s.hex()) for i, s in zip(got.ids, got.scores, strict=True)] == [
        (h.memory.id, h.score.hex()) for h in want
    ]


def test_the_stored_terms_are_read_only_when_coverage_reads_terms(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Coverage (with a conversation record) is the only step that asks the store for the
    candidates' terms: over plain adds no question reads them (freshness reads a few
    candidates' words through the memoised tokeniser), and the answer is the one an eager
    read of the terms gives."""
    for i in range(30):
        mem.add(f"Alice moved her piano lessons to Tuesday number {i}", entity="Alice")
    calls: list[int] = []
    inner = pipeline.stored_terms

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return inner(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "stored_terms", counting)
    at = mem.recall("piano").as_of  # one instant for the recalls compared below
    calls.clear()
    past = mem.recall("When did Alice have piano lessons?", as_of=at)
    assert calls == [] and past.results
    now = mem.recall("When are Alice's piano lessons now?", as_of=at)
    assert calls == [] and now.results
    # the eager read (every fused candidate's terms, before any step) ranks the same
    eager = pipeline._attach_terms
    monkeypatch.setattr(pipeline, "fuse", _eager_fuse(mem, eager))
    for query, response in [
        ("When did Alice have piano lessons?", past),
        ("When are Alice's piano lessons now?", now),
    ]:
        assert mem.recall(query, as_of=at).model_dump_json() == response.model_dump_json()


def _eager_fuse(mem: AgentMemory, attach: object) -> object:
    def fused(*args: object, **kwargs: object) -> list[Candidate]:
        cands = fuse(*args, **kwargs)  # type: ignore[arg-type]
        rt = mem.runtime
        attach(rt.store, rt.scope(mem.default_context), cands, {})  # type: ignore[operator]
        return cands

    return fused


def test_relevance_is_rounded_without_a_decimal_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    """``compute_relevance`` rounds through ``round12``: ``round(x, 12)`` itself (~3,600
    instructions, a decimal conversion) runs only for a value next to a half, so decay over
    a recall's candidates calls it for none of ordinary values; the relevances are the
    per-candidate reference's, bit for bit."""
    config = RetrievalConfig()
    as_of = view_at(30).as_of
    fast, slow = _cands(7, 300), _cands(7, 300)
    apply_decay_boost_reference(slow, as_of, config)
    calls: list[float] = []

    def counting(x: float, digits: int | None = None) -> float:
        calls.append(x)
        return round(x, digits)

    monkeypatch.setattr(candidates, "round", counting, raising=False)
    monkeypatch.setattr(rounding, "round", counting, raising=False)
    apply_decay_boost(fast, as_of, config)
    assert _bits(fast, "decay", "boost", "relevance") == _bits(slow, "decay", "boost", "relevance")
    assert len(calls) < 3  # the fallback next to a half, if any: not one per candidate


def test_decay_takes_no_builtin_max_per_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The age's ``max(0, gap)`` is a test in the comprehension (the builtin parses its
    keywords on every call): over memories dated before and after ``as_of`` (age 0), the
    values are the reference's, bit for bit, and ``max`` is never called."""
    config = RetrievalConfig()
    as_of = view_at(30).as_of
    fast, slow = _cands(11, 300), _cands(11, 300)
    assert any(c.valid_from > as_of for c in slow) and any(c.valid_from < as_of for c in slow)
    apply_decay_boost_reference(slow, as_of, config)

    def no_max(*args: object, **kwargs: object) -> object:
        raise AssertionError("max called")

    monkeypatch.setattr(temporal, "max", no_max, raising=False)
    apply_decay_boost(fast, as_of, config)
    assert _bits(fast, "decay", "boost", "relevance") == _bits(slow, "decay", "boost", "relevance")


def test_update_relevance_over_many_equals_compute_relevance_bit_for_bit() -> None:
    """``update_relevance`` of many candidates (its array form: Python sums, array rounding)
    gives each the relevance ``compute_relevance`` gives, bit for bit: ordinary values, sums
    next to a half of the 12th place, a negative zero, ints, an infinity and a NaN; and a
    few candidates (its loop) alike."""
    rng = random.Random(5)
    cands, refs = _cands(3, 400), []
    near_half = [k * 1e-12 + 5e-13 for k in range(1, 40)]
    for i, c in enumerate(cands):
        c.decay = rng.choice([1.0, round(rng.random(), 12)])
        c.boost = rng.choice([0.0, round(rng.random() * 0.01, 12)])
        c.freshness = rng.choice([0.0, -0.15, rng.random() * 0.01])
        c.time_cue = rng.choice([0.0, 0.1, rng.random() * 0.1])
        c.session = rng.choice([c.session, rng.random() * 0.3])
        if i % 10 == 0:  # the whole sum next to a half: rounded by round() itself
            c.rrf_norm, c.graph_bonus, c.decay = rng.choice(near_half), 0.0, 1.0
            c.boost = c.freshness = c.session = c.coverage = c.time_cue = 0.0
    cands[1].rrf_norm, cands[1].graph_bonus, cands[1].decay = -0.0, -0.0, 1.0
    cands[1].boost = cands[1].freshness = cands[1].session = cands[1].coverage = -0.0
    cands[1].time_cue = -0.0
    cands[2].rrf_norm, cands[2].graph_bonus, cands[2].decay, cands[2].boost = 1, 0, 1, 0
    cands[3].rrf_norm, cands[4].rrf_norm = math.inf, math.nan
    for few in (cands, cands[:3]):
        refs = [copy.copy(c) for c in few]
        for r in refs:
            r.compute_relevance()
        candidates.update_relevance(few)
        assert [c.relevance.hex() for c in few] == [r.relevance.hex() for r in refs]
        assert all(type(c.relevance) is float for c in few)
    assert cands[1].relevance.hex() == "-0x0.0p+0"


@pytest.mark.parametrize("seed", range(2))
def test_fusion_keeps_the_vector_and_bm25_scores_of_each_memory(seed: int) -> None:
    # a candidate keeps only the two scores a breakdown reports (slots, not a dict of every
    # lane's): each must be that lane's score of the memory, its first if the lane names it
    # twice, whatever other lanes (an LLM lane) scored it and in whatever order lanes come
    rng = random.Random(seed)
    lanes = _lanes(seed)
    name, hits = lanes[0]
    lanes[0] = (name, [*hits, *rng.sample(hits, 50)])  # repeats, with other scores
    rng.shuffle(lanes)
    want: dict[str, dict[str, float]] = {}
    for name, hits in lanes:
        for hit in hits:
            want.setdefault(hit.memory.id, {}).setdefault(name, hit.score)
    cands = fuse(as_lanes(lanes), 60)
    assert len(cands) == len(want)
    for c in cands:
        assert (c.vector_score, c.bm25_score) == (want[c.id].get("vector"), want[c.id].get("bm25"))
    assert {c.vector_score is None for c in cands} == {c.bm25_score is None for c in cands}
    assert {True, False} == {c.vector_score is None for c in cands}


def test_fusion_keeps_lane_scores_as_given_and_the_breakdown_has_floats() -> None:
    # fusion stores a hit's score as the lane gave it (no float() a hit); the breakdown
    # converts the two it reports, as validation would
    m, n = fake_mem("m1", day=1.0), fake_mem("m2", day=2.0)
    lanes = [("bm25", [Hit(m, 2), Hit(n, np.float64(0.25))]), ("vector", [Hit(n, 1)])]
    by_id = {c.id: c for c in fuse(as_lanes(lanes), 60)}
    for mid, vector, bm25 in [("m1", None, 2.0), ("m2", 1.0, 0.25)]:
        b = by_id[mid].breakdown()
        assert (b.vector_score, b.bm25_score) == (vector, bm25)
        assert {type(b.vector_score), type(b.bm25_score)} <= {float, type(None)}


def test_asking_over_arrays_equals_the_per_candidate_code() -> None:
    """``apply_asking`` lowers the session of the memories that end by asking, rounding each
    distinct session once (``round12``), and their relevance is summed after it: each gets
    the session and relevance the one-at-a-time code gave (``round(session - weight, 12)``,
    ``compute_relevance``), bit for bit, and the memories that do not ask are untouched."""
    rng = random.Random(11)
    fast = []
    for i in range(300):
        text = "Did it rain?" if rng.random() < 0.4 else "It did."
        c = Candidate(memory=fake_mem(f"m{i:04d}", text, day=rng.uniform(-40, 0)))
        c.rrf_norm = rng.random()
        c.decay = rng.choice([1.0, round(rng.random(), 12)])
        c.session = rng.choice([0.0, -0.05, round(rng.random() * 0.3, 12)])
        c.compute_relevance()
        fast.append(c)
    before = [c.session for c in fast]
    slow = [copy.copy(c) for c in fast]
    weight = 0.1
    for c in slow:  # the one-at-a-time reference
        said = asking_words(c)
        if said is not None and ends_asking(said):
            c.session = round(c.session - weight, 12)
            c.compute_relevance()
    apply_asking(fast, "what was the weather", weight)
    candidates.update_relevance(fast)  # the sum the pipeline's decay step makes after it
    assert _bits(fast, "session", "relevance") == _bits(slow, "session", "relevance")
    changed = sum(c.session != b for c, b in zip(fast, before, strict=True))
    assert 60 < changed < 240  # both kinds were there


def test_every_signal_reaches_the_score_of_a_recall(mem: AgentMemory) -> None:
    """Asking and the time cue set their own fields and the decay step, after them, sums
    every candidate's relevance once (pipeline.py): each result's score is the sum of its
    breakdown (to the rounding of the reported rrf_norm), time cue and asking included."""
    mem.add("Yesterday Jon showed his studio at a fair", entity="Jon")
    mem.add("Jon went to the fair with his studio", entity="Jon")
    mem.add("Did Jon like the fair?", entity="Jon")
    mem.add("Jon went to a fair last month, what a day", entity="Jon")
    response = mem.recall("When did Jon go to the fair?")
    seen = {"time_cue": False, "session": False}
    for r in response.results:
        b = r.breakdown
        total = (b.rrf_norm + b.graph_bonus) * b.decay + b.boost + b.freshness
        total += b.session + b.coverage + b.time_cue
        assert r.score == pytest.approx(total, abs=1e-9), r.memory.content
        seen["time_cue"] |= b.time_cue != 0.0
        seen["session"] |= b.session != 0.0
    assert seen == {"time_cue": True, "session": True}
