"""The recall path's fast paths give what the plain code they replaced gave, bit for bit.

Each reference below is the straightforward version of a step (the code before it was
made cheaper); the fast path must return the same values, floats compared exactly,
on inputs built to hit the cases where a shortcut could differ (repeated words, three
or more query terms in one row, whose float sum depends on the order it is taken in).
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from retrieval_fakes import as_lanes
from retrieval_fakes import mem as fake_mem

from attestor_arango.memo import Memo
from attestor_arango.memory import AgentMemory
from attestor_arango.models import ScoreBreakdown, us_of
from attestor_arango.retrieval import coverage, fusion, pipeline
from attestor_arango.retrieval.candidates import (
    ROUNDED,
    ZERO,
    Candidate,
    order,
    round12,
    tie_key,
)
from attestor_arango.retrieval.candidates import results as candidate_results
from attestor_arango.retrieval.coverage import apply_coverage, credits_any
from attestor_arango.retrieval.fusion import fuse
from attestor_arango.retrieval.neighbours import has_turns
from attestor_arango.retrieval.text_lane import raw_scores, rescore_pool, stored_terms, terms
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import Hit, TextHit
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


# -- rounding: a value rounded to 12 places is not rounded again ------------------------


def _floats(seed: int, n: int) -> list[float]:
    """Floats of every magnitude a score can take and far beyond, and the edge cases."""
    rng = random.Random(seed)
    out = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-13, 5e-13, 4.9999999999999e-13, 2.0**13, 8191.999]
    out += [rng.uniform(-3, 3) for _ in range(n)]
    out += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-15, 20) for _ in range(n)]
    out += [round(rng.uniform(0, 2), rng.randint(0, 14)) + rng.choice([0, 1e-13]) for _ in range(n)]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_rounding_a_value_rounded_to_12_places_gives_it_back(seed: int) -> None:
    # what lets order() and breakdown() skip round() on fields stored rounded: bit for bit
    for x in _floats(seed, 20_000):
        y = round(x, 12)
        assert round(y, 12).hex() == y.hex(), x


@pytest.mark.parametrize("seed", range(3))
def test_round12_is_round_to_12_places(seed: int) -> None:
    for x in _floats(seed, 20_000):
        assert round12(x).hex() == round(x, 12).hex(), x  # hex: -0.0 keeps its sign
    assert math.isnan(round12(float("nan")))
    assert round12(float("-inf")) == float("-inf")


def test_every_field_order_and_breakdown_take_as_rounded_is_stored_rounded(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # turns in sessions, a "when" question naming a speaker, a restated fact: coverage,
    # neighbours, time cues, speakers, decay, boost and freshness all set their fields
    t0 = datetime(2025, 5, 8, 13, 56, tzinfo=UTC)
    lines = [
        ("Mel", "I went to the pottery class on Friday."),
        ("Ana", "When did you start the pottery class?"),
        ("Mel", "I started pottery in March 2023, after the move."),
        ("Ana", "My car is a Nissan Leaf."),
        ("Mel", "I painted a sunset at the lake last week."),
    ]
    for s, start in enumerate([t0, t0 + timedelta(days=9), t0 + timedelta(days=30)]):
        turns = [
            {"speaker": who, "text": text, "session_id": f"S{s}", "timestamp": at}
            for i, (who, text) in enumerate(lines)
            if (at := start + timedelta(seconds=30 * i))
        ]
        mem.add_turns(turns)
    mem.add("These days Ana drives a Hyundai Ioniq instead of the Nissan Leaf.", entity="Ana")
    seen: list[Candidate] = []
    inner = pipeline.pack

    def keep(ranked: list[Candidate], budget: int) -> object:
        seen.extend(ranked)
        return inner(ranked, budget)

    monkeypatch.setattr(pipeline, "pack", keep)
    for q in ["When did Mel start pottery?", "What car does Ana drive now?", "sunset lake"]:
        response = mem.recall(q)
        assert response.results
    assert len(seen) > 10
    assert {c.coverage != 0 for c in seen} == {True, False}  # the steps did take part
    assert any(c.session for c in seen) and any(c.time_cue for c in seen)
    for c in seen:
        for name in ROUNDED:
            value = getattr(c, name)
            assert type(value) is float and round(value, 12).hex() == value.hex(), name
        full = c.breakdown().model_dump()  # what rounding every field again would give
        for name in ("rrf", "rrf_norm", "freshness", *ROUNDED):
            assert full[name] == float(round(getattr(c, name), 12)), name
    assert order(list(seen)) == sorted(seen, key=lambda c: tie_key(c.relevance, c))


# -- order: relevance compared as floats, runs of equal relevance by the whole tie rule ----


def _tie_cases(rng: random.Random, n: int, share: float) -> list[Candidate]:
    """Candidates with ties: about ``share`` of the relevances from a handful of values (0.0
    next to -0.0, both infinities, an int), equal t_created among them, so runs of equal
    relevance are long and the tie rule's later keys decide; the ids are unique, as a
    recall's are."""
    values: list[float] = [0.0, -0.0, 0.25, 0.5, 1 / 3, float("inf"), float("-inf"), 1]
    out = []
    for i in range(n):
        c = Candidate(fake_mem(f"m{rng.randrange(10**6):06d}-{i}", day=rng.choice([0, 1, 2.5])))
        c.relevance = rng.choice(values) if rng.random() < share else round12(rng.uniform(-1, 1))
        out.append(c)
    return out


@pytest.mark.parametrize("seed", range(60))
def test_order_by_relevance_is_the_tuple_keys_order(seed: int) -> None:
    """``order`` sorts by relevance as floats and then each run of equal relevances by the
    tie rule; it must give the tuple keys' order exactly (``tie_key`` of a relevance stored
    rounded), whatever the ties, signed zeros and infinities, and with a NaN among them (no
    float order places it: the tuple keys are used). Fails without the runs' sort, with the
    runs sorted by another key, or without the NaN fallback."""
    rng = random.Random(seed)
    cands = _tie_cases(rng, rng.choice([0, 1, 2, 3, 10, 85, 200]), rng.choice([0.0, 0.1, 0.7]))
    if seed % 4 == 3 and cands:  # a NaN or two, anywhere
        for c in rng.sample(cands, min(len(cands), rng.choice([1, 2]))):
            c.relevance = float("nan")
    given = list(cands)
    got = order(cands)
    want = sorted(given, key=lambda c: (-c.relevance, -c.t_created, c.id))
    assert [c.id for c in got] == [c.id for c in want]
    assert cands == given and got is not cands  # a new list; the one given is left as it was
    if seed % 4 != 3:  # without a NaN: the tie rule itself, rounding included
        assert got == sorted(given, key=lambda c: tie_key(c.relevance, c))


# -- scoring terms: one recall asks the backend for each row's terms once ---------------


class _CountingTerms:
    """A backend that keeps scoring terms (KeepsTerms) and records what it was asked."""

    def __init__(self, kept: dict[str, tuple[str, ...]]) -> None:
        self.kept = kept
        self.asked: list[list[str]] = []

    def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        self.asked.append(list(ids))
        return {i: self.kept[i] for i in ids if i in self.kept}


def test_stored_terms_with_a_recall_cache_asks_only_for_rows_not_read_yet() -> None:
    kept = {f"m{i}": (f"w{i}", "shared") for i in range(6)}
    store = _CountingTerms(kept)
    cache: dict[str, tuple[str, ...]] = {}
    pool = ["m0", "m1", "m2", "m3", "gone"]  # "gone": a row the index does not hold
    assert stored_terms(store, Scope("t"), pool, cache) == {i: kept[i] for i in pool[:4]}
    fused = ["m4", "m2", "m0", "m5"]
    got = stored_terms(store, Scope("t"), fused, cache)
    assert got == stored_terms(_CountingTerms(kept), Scope("t"), fused)  # same as uncached
    assert list(got) == fused  # in the order asked
    assert store.asked == [pool, ["m4", "m5"]]


# -- coverage: no conversation record among the candidates, no work ---------------------


def test_coverage_without_a_conversation_record_reads_no_terms() -> None:
    plain = [Candidate(memory=fake_mem(f"m{i}", f"Alice moved to Paris {i}")) for i in range(5)]
    plain.append(Candidate(memory=fake_mem("s", "Alice moved to Paris", session="S1")))
    # a session but no verbatim tag: a fact read from a round, credited nothing either
    apply_coverage(plain, "Where did Alice move?", 0.3)
    assert [c.coverage for c in plain] == [0.0] * 6
    assert [c.terms for c in plain] == [None] * 6  # nothing tokenised or asked for
    # with one conversation record the step runs over every candidate as before
    turn = fake_mem("t", "Alice moved to Paris", session="S1")
    turn = turn.model_copy(update={"tags": ("verbatim",)})
    both = [*plain, Candidate(memory=turn)]
    apply_coverage(both, "Where did Alice move?", 0.3)
    assert both[-1].coverage > 0 and all(c.terms is not None for c in both)


# -- candidates: fusion's maker is the dataclass constructor, slot for slot -------------


def test_fusions_candidates_are_the_dataclass_candidates_slot_for_slot() -> None:
    """fusion makes its candidates slot by slot, with no ``Candidate(...)`` call: it must set
    every slot the dataclass sets (its fields and the ones ``__post_init__`` reads from the
    memory) to the same values of the same types, and its 0.0s are ``candidates.ZERO``;
    a field added to ``Candidate`` and not to fusion leaves a slot unset, and this fails.
    The fields fusion sets after making them are those of its normalised rrf."""
    m = fake_mem("m1", "Alice moved to Paris", day=3.5, created_day=4.25, session="S1")
    other = fake_mem("m0", "Bob stayed", day=1.0)
    made = next(
        c for c in fuse(as_lanes([("bm25", [Hit(other, 9.0), Hit(m, 7.25)])]), 60) if c.id == "m1"
    )
    built = Candidate(m, {"bm25": 2}, None, 7.25, 0.0 + 1.0 / 62)
    built.named_ranks = built.lane_ranks  # one lane fused: its ranks are in name order
    best = 1.0 / 61
    built.rrf_norm = built.rrf / best
    built.relevance = round(built.rrf_norm + 0.0, 12)
    built.fused = (built.rrf, built.rrf_norm, round(built.rrf, 12), built.relevance)
    names = [f.name for f in dataclasses.fields(Candidate)]
    assert set(Candidate.__slots__) == set(names)  # every slot is a field
    for name in names:
        a, b = getattr(made, name), getattr(built, name)
        assert type(a) is type(b) and a == b, name
        assert a is not ZERO or b is ZERO, name  # the 0.0s ``results`` leaves at defaults
    defaults = ("graph_bonus", "boost", "freshness", "session", "coverage", "time_cue")
    assert all(getattr(made, name) is ZERO for name in defaults)
    assert made.lane_ranks is not built.lane_ranks  # dicts of its own
    assert made.named_ranks is made.lane_ranks
    assert made.breakdown() == built.breakdown()


@pytest.mark.parametrize("seed", range(12))
def test_fused_breakdowns_list_their_lanes_by_name_however_many_lanes_fused(seed: int) -> None:
    """``results`` takes a fused candidate's ranks as they are when fusion knows them to be
    in name order (``named_ranks``: one or two lanes fused); with three or more, or ranks
    replaced after fusion, it puts them in order. Each breakdown lists its lanes by name and
    is the validated one. Fails if fusion marks the ranks of three lanes, or if ``results``
    trusts a mark that is not the very dict it holds."""
    rng = random.Random(seed)
    names = ["vector", "bm25", "mq_1", "hyde"][: rng.choice([1, 2, 2, 3, 4])]
    rng.shuffle(names)
    pool = [fake_mem(f"m{i}", f"text {i}", day=i % 3) for i in range(12)]
    lanes = [(name, [Hit(m, rng.random()) for m in rng.sample(pool, 8)]) for name in names]
    fused = fuse(as_lanes(lanes), 60)
    replaced = rng.sample(fused, 3)
    for c in replaced:  # after fusion: another dict, in reverse name order
        c.lane_ranks = dict(sorted(c.lane_ranks.items(), reverse=True))
    for c, got in zip(fused, candidate_results(list(fused), [1] * len(fused), 0), strict=True):
        lanes_listed = got.breakdown.lanes
        assert list(lanes_listed) == sorted(c.lane_ranks) and lanes_listed == c.lane_ranks
        assert got.breakdown == ScoreBreakdown(**got.breakdown.model_dump())
        assert (
            got.breakdown.model_dump_json()
            == ScoreBreakdown(**got.breakdown.model_dump()).model_dump_json()
        )
        if len(names) > 2 and c not in replaced and len(c.lane_ranks) > 1:
            assert c.named_ranks is None


# -- memos: ``known`` is the memo's dict lookup, None before a value is computed ------


def test_memo_known_answers_what_the_memo_computed_and_nothing_else() -> None:
    calls: list[str] = []

    def length(text: str) -> int:
        calls.append(text)
        return len(text)

    memo = Memo(length, 2)
    known = memo.known  # taken once: it must survive the memo emptying itself
    assert known("abc") is None and calls == []  # looking does not compute
    assert memo("abc") == 3 and known("abc") == 3 and calls == ["abc"]
    memo("de")
    memo("fgh")  # full: emptied in place, then "fgh" kept
    assert known("abc") is None and known("fgh") == 3
    memo.clear()
    assert known("fgh") is None


def test_candidate_fields_are_its_memorys_own_values() -> None:
    """What the steps read by key (``Candidate.fields``) is what ``memory.x`` reads, for
    a fused candidate and a constructed one."""
    m = fake_mem("m1", "Alice moved to Paris", day=3.5, created_day=4.25, session="S1")
    for c in (fuse(as_lanes([("bm25", [Hit(m, 1.0)])]), 60)[0], Candidate(m)):
        assert c.fields is m.__dict__
        for name in type(m).model_fields:
            assert c.fields[name] is getattr(m, name), name


# -- the scans every recall makes for a turn and for a conversation record ------------------


def _turn_cases() -> list[Candidate]:
    """Candidates of every kind the two scans tell apart: plain, a turn with its link, a
    "turn" that is no link, a synthetic turn, tagged records with and without a session."""
    out = []
    metas: list[dict[str, object]] = [
        {}, {"turn": {"replies_to": "m0"}}, {"turn": "m0"}, {"turn": None}, {"other": 1},
    ]  # fmt: skip
    tag_sets: list[tuple[str, ...]] = [(), ("verbatim",), ("episode", "x"), ("x",)]
    for i, (meta, tags, session, synthetic) in enumerate(
        (m, t, s, y) for m in metas for t in tag_sets for s in (None, "S1") for y in (False, True)
    ):
        c = Candidate(memory=fake_mem(f"m{i:03d}", "text", session=session), synthetic=synthetic)
        c.memory.metadata.update(meta)
        object.__setattr__(c.memory, "tags", tags)  # frozen: set as a decoded row would hold it
        out.append(c)
    return out


def test_has_turns_and_credits_any_answer_as_the_plain_tests_of_each_candidate() -> None:
    """Each scan, over every sub-list of the cases (each kind alone, with the others before
    and after it), answers as ``any()`` of the plain per-candidate test."""
    cases = _turn_cases()
    assert cases[0].fields["tags"] == () and cases[-1].fields["tags"] == ("x",)

    def turn(c: Candidate) -> bool:
        return not c.synthetic and isinstance(c.memory.metadata.get("turn"), dict)

    def record(c: Candidate) -> bool:
        return not coverage.RECORD_TAGS.isdisjoint(c.memory.tags) and (
            c.memory.provenance.session_id is not None
        )

    plain = [c for c in cases if not turn(c) and not record(c)]
    assert any(turn(c) for c in cases) and any(record(c) for c in cases) and plain
    for c in cases:
        for group in ([c], [*plain, c], [c, *plain], plain):
            assert has_turns(group) is any(turn(x) for x in group)
            assert credits_any(group) is any(record(x) for x in group)


@pytest.mark.parametrize("seed", range(8))
def test_fused_scores_looked_up_are_those_computed_anew(seed: int) -> None:
    """fusion looks up each rrf's normalised and rounded scores in a table of those computed
    before (``fusion._scored``): whether computed now or looked up, every candidate holds
    rrf / best and round(x, 12) of both, bit for bit, as the very objects the breakdown
    tests (``fused``). Fails if a looked-up entry is not the one for that rrf and best."""
    rng = random.Random(seed)
    pool = [fake_mem(f"m{i}", f"text {i}", day=i % 3) for i in range(40)]
    fusion._SCORED.clear()
    for _ in range(6):  # the same ranks recur: later rounds look most scores up
        names = ["vector", "bm25", "mq_1"][: rng.choice([1, 2, 2, 3])]
        lanes = [(n, [Hit(m, rng.random()) for m in rng.sample(pool, 25)]) for n in names]
        weights = {n: rng.choice([1.0, 0.5, 2.0]) for n in names}
        k = rng.choice([60, 1, 3])
        best = sum(weights[n] for n in names) / (k + 1)
        for c in fuse(as_lanes(lanes), k, weights=weights):
            assert c.rrf_norm.hex() == (c.rrf / best).hex()
            assert c.relevance.hex() == round(c.rrf / best + 0.0, 12).hex()
            rrf, norm, rrf_12, norm_12 = c.fused
            assert rrf is c.rrf and rrf_12.hex() == round(c.rrf, 12).hex()
            assert norm is c.rrf_norm and norm_12 is c.relevance
    assert any(len(table) > 1 for table in fusion._SCORED.values())


def test_a_breakdown_rounds_rrf_and_rrf_norm_changed_after_fusion() -> None:
    """``results`` takes fusion's rounded rrf and rrf_norm (``fused``) only while the
    candidate still holds those very objects: an rrf or rrf_norm set since (a step, a
    caller) is rounded anew. Fails if either identity test is dropped."""
    pool = [fake_mem(f"m{i}", f"text {i}", day=i % 3) for i in range(4)]
    cands = fuse(as_lanes([("bm25", [Hit(m, 1.0) for m in pool])]), 60)
    kept, changed_norm, changed_rrf = cands[0], cands[1], cands[2]
    changed_norm.rrf_norm = 0.1 + 0.2
    changed_rrf.rrf = 1 / 3
    got = candidate_results(list(cands[:3]), [1, 1, 1], 0)
    assert (got[0].breakdown.rrf, got[0].breakdown.rrf_norm) == kept.fused[2:]
    assert got[1].breakdown.rrf_norm == round(0.1 + 0.2, 12) != changed_norm.fused[3]
    assert got[1].breakdown.rrf == changed_norm.fused[2]
    assert got[2].breakdown.rrf == round(1 / 3, 12) != changed_rrf.fused[2]
    assert got[2].breakdown.rrf_norm == changed_rrf.fused[3]


def test_fused_scores_table_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """the table of fused scores is cleared when full, and the scores are still right."""
    monkeypatch.setattr(fusion, "_SCORED_MAX", 5)
    fusion._SCORED.clear()
    pool = [fake_mem(f"m{i}", f"text {i}", day=i % 3) for i in range(30)]
    for k in range(1, 8):  # seven bests: never more than four tables
        hits = [Hit(m, 1.0) for m in pool]
        best = 1.0 / (k + 1)
        for c in fuse(as_lanes([("bm25", hits)]), k):
            assert c.relevance.hex() == round(c.rrf / best + 0.0, 12).hex()
        assert len(fusion._SCORED) <= 4
        assert all(len(table) <= 5 for table in fusion._SCORED.values())


@pytest.mark.parametrize("seed", range(4))
def test_fused_rrf_from_shares_made_once_is_the_sum_of_each_hits_share(seed: int) -> None:
    """fusion takes a hit's ``w / (rrf_k + rank)`` from a list made once per weight and
    rrf_k (``fusion._shares``): each candidate's rrf is the sum of its hits' shares from 0.0,
    computed hit by hit, bit for bit: over lanes longer and shorter than a list made before,
    weights and rrf_k that change, and a lane naming a memory twice (counted once)."""
    rng = random.Random(seed)
    memories = [fake_mem(f"m{i:03d}") for i in range(300)]
    for _ in range(8):
        lanes = []
        for name in rng.sample(["vector", "bm25", "mq_1"], rng.randint(1, 3)):
            picked = rng.sample(memories, rng.randint(1, 300))
            picked.insert(rng.randrange(len(picked)), picked[0])  # named again: no rank
            lanes.append((name, [Hit(m, rng.random()) for m in picked]))
        # a weight of -0.0: its shares are -0.0, and the sum from 0.0 is 0.0 (fusion keeps
        # each share as 0.0 + it)
        weights = {name: rng.choice([1.0, 0.5, 0.3, 2.0, -0.0]) for name, _ in lanes}
        rrf_k = rng.choice([1, 7, 60])
        want: dict[str, float] = {}
        ordered = sorted(lanes) if len(lanes) == 2 else lanes  # two fuse in name order
        for name, hits in ordered:
            seen: set[str] = set()
            for hit in hits:
                if hit.memory.id in seen:
                    continue
                seen.add(hit.memory.id)
                want[hit.memory.id] = want.get(hit.memory.id, 0.0) + weights[name] / (
                    rrf_k + len(seen)
                )
        got = {c.id: c.rrf for c in fuse(as_lanes(lanes), rrf_k, weights=weights)}
        assert {k: v.hex() for k, v in got.items()} == {k: v.hex() for k, v in want.items()}


def test_fused_times_of_a_memory_said_as_written_are_its_own() -> None:
    """A memory whose event time is its write time (one datetime object, as ``add`` without
    a valid_from stores it) gets its microseconds read once: the candidate's times are the
    memory's, as for one with two equal datetimes and one with two different ones."""
    m = fake_mem("m1", day=2.0)
    one = m.model_copy(update={"valid_from": m.t_created})
    assert one.valid_from is one.t_created and m.valid_from is not m.t_created
    later = fake_mem("m2", day=1.5, created_day=3.0)
    hits = [Hit(x, 1.0) for x in (one, m.model_copy(update={"id": "m3"}), later)]
    for c in fuse(as_lanes([("vector", hits)]), 60):
        memory = c.memory
        assert (c.t_created, c.valid_from) == (us_of(memory.t_created), us_of(memory.valid_from))
        assert type(c.valid_from) is int
