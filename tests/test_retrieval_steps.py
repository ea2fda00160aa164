"""Each pipeline step on hand-built candidate lists, expected orders worked out by hand."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from retrieval_fakes import mem, view_at

from attestor_arango.errors import ValidationError
from attestor_arango.models import Entity, Relation, ScoreBreakdown
from attestor_arango.retrieval.budget import pack
from attestor_arango.retrieval.candidates import Candidate, order
from attestor_arango.retrieval.completion import Lane
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.entities import recognize
from attestor_arango.retrieval.freshness import apply_freshness
from attestor_arango.retrieval.fusion import fuse
from attestor_arango.retrieval.graph import apply_affinity, relation_candidates, synthetic_id
from attestor_arango.retrieval.temporal import apply_decay_boost
from attestor_arango.retrieval.text_lane import pool_and_terms, rescore_pool, stored_terms
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import Hit, TextHit
from attestor_arango.text.stemming import scoring_terms
from attestor_arango.text.tokens import count_tokens
from tests.support.trace_reading import trace_text

CFG = RetrievalConfig()


def hits(*ids: str, day: float = 0) -> Lane:
    return Lane.of([Hit(mem(i, day=day), 1.0 / (n + 1)) for n, i in enumerate(ids)])


def cand(mid: str, relevance: float, *, day: float = 0, entity: str | None = None) -> Candidate:
    c = Candidate(memory=mem(mid, day=day, entity=entity))
    c.rrf_norm = relevance
    c.compute_relevance()
    return c


# -- fusion ----------------------------------------------------------------------------


def test_rrf_is_a_fused_score_not_a_rank_floor() -> None:
    # vector: a b c ; bm25: c a d  (k = 60)
    # a = 1/61 + 1/62, c = 1/63 + 1/61, b = 1/62, d = 1/63  ->  a > c > b > d
    out = fuse([("vector", hits("a", "b", "c")), ("bm25", hits("c", "a", "d"))], 60)
    assert [c.id for c in out] == ["a", "c", "b", "d"]
    a = out[0]
    assert a.rrf == pytest.approx(1 / 61 + 1 / 62)
    assert a.rrf_norm == pytest.approx((1 / 61 + 1 / 62) / (2 / 61))
    assert a.lane_ranks == {"vector": 1, "bm25": 2}
    assert out[3].lane_ranks == {"bm25": 3}


def test_rrf_normalisation_uses_lanes_that_ran() -> None:
    one = fuse([("bm25", hits("x", "y"))], 60)
    assert one[0].rrf_norm == pytest.approx(1.0)


def test_weighted_rrf() -> None:
    # vector weight 0.5: a = 0.5/61 (vector 1) ; b = 1/61 (bm25 1) -> b first
    out = fuse([("vector", hits("a")), ("bm25", hits("b"))], 60, weights={"vector": 0.5})
    assert [c.id for c in out] == ["b", "a"]
    assert out[0].rrf_norm == pytest.approx((1 / 61) / (1.5 / 61))
    assert out[1].rrf == pytest.approx(0.5 / 61)


def scored(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(mem(i), score) for i, score in pairs]


def test_recall_traces_the_lane_weights_it_fused_with(tmp_path: Path) -> None:
    from retrieval_fakes import FakeStore

    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.retrieval import recall
    from attestor_arango.retrieval.trace import Tracer

    emb = HashingEmbedder(64)
    store = FakeStore(emb)
    texts = ["violin lessons on friday", "violin", "friday market", "violin and bread", "rain"]
    for i, text in enumerate(texts):
        store.add(mem(f"m{i}", text, day=i))
    trace = tmp_path / "t.jsonl"
    for cfg in (CFG.replace(vector_weight=0.5), CFG):
        scope = Scope("t", "ns")
        recall(store, emb, scope, "violin friday", view_at(10), 2000, cfg, tracer=Tracer(trace))
    events = [json.loads(line) for line in trace_text(trace).splitlines()]
    weighted, fixed = [e["lane_weights"] for e in events if e["step"] == "fuse"]
    assert fixed == {"vector": 1.0, "bm25": 1.0}
    assert weighted == {"vector": 0.5, "bm25": 1.0}


def test_rrf_ties_break_on_t_created_desc_then_id_asc() -> None:
    # p is rank 1 in one lane, q rank 1 in the other: equal scores.
    lane1 = Lane.of([Hit(mem("p", day=1), 1.0)])
    lane2 = Lane.of([Hit(mem("q", day=2), 1.0)])
    assert [c.id for c in fuse([("vector", lane1), ("bm25", lane2)], 60)] == ["q", "p"]
    lane2 = Lane.of([Hit(mem("b", day=1), 1.0)])
    lane1 = Lane.of([Hit(mem("c", day=1), 1.0)])
    assert [c.id for c in fuse([("vector", lane1), ("bm25", lane2)], 60)] == ["b", "c"]


def test_rescoring_uses_the_terms_the_backend_held() -> None:
    """Terms a backend already had are reused, not tokenised again; the rest tokenised."""
    pool = [TextHit("a", "alpha beta", 2, 0.0), TextHit("b", "alpha", 1, 0.0)]
    assert rescore_pool(pool, "gamma") == []
    # deliberately not the content's terms: shows which are used
    held = rescore_pool(pool, "gamma alpha", held={"a": ("gamma",)})
    assert [(t.id, t.score > 0) for t in held] == [("a", True), ("b", True)]
    assert rescore_pool(pool, "gamma alpha", held={}) == rescore_pool(pool, "gamma alpha")


def test_stored_terms_asks_only_a_backend_that_keeps_them() -> None:
    class Keeps:
        def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
            return {i: ("kept",) for i in ids}

    assert stored_terms(Keeps(), Scope("t"), ["a"]) == {"a": ("kept",)}
    assert stored_terms(object(), Scope("t"), ["a"]) == {}


def test_the_pool_comes_with_the_terms_a_backend_keeps() -> None:
    pool = [TextHit("a", "alpha beta", 2, 1.0)]
    calls: list[str] = []

    class Keeps:
        def text_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
            calls.append("text_pool")
            return pool

        def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
            calls.append("scoring_terms")
            return {i: ("kept",) for i in ids}

    class PoolOnly:
        def text_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
            return pool

    view = TemporalView(as_of=10)
    keeps: Any = Keeps()
    assert pool_and_terms(keeps, Scope("t"), "alpha", 5, view) == (pool, {"a": ("kept",)})
    assert calls == ["text_pool", "scoring_terms"]
    cache: dict[str, tuple[str, ...]] = {}  # one recall's terms: those of the pool join it
    assert pool_and_terms(keeps, Scope("t"), "alpha", 5, view, cache)[1] == {"a": ("kept",)}
    assert cache == {"a": ("kept",)}
    del calls[:]
    assert pool_and_terms(keeps, Scope("t"), "alpha", 5, view, cache)[1] == {"a": ("kept",)}
    assert calls == ["text_pool"]  # the cached terms are not asked for again
    only: Any = PoolOnly()
    assert pool_and_terms(only, Scope("t"), "alpha", 5, view) == (pool, {})


def test_fused_candidates_tokenise_once() -> None:
    m = mem("a")
    plain = fuse([("vector", Lane.of([Hit(m, 0.9)]))], 60)[0]
    assert plain.terms is None
    assert plain.content_terms() == scoring_terms(m.content)
    assert plain.terms == scoring_terms(m.content)


def test_a_lane_naming_a_memory_twice_counts_it_once() -> None:
    out = fuse([("bm25", hits("a", "a", "b"))], 60)
    assert [(c.id, c.lane_ranks["bm25"]) for c in out] == [("a", 1), ("b", 2)]


# -- entities ----------------------------------------------------------------------------


def ent(key: str, name: str, aliases: tuple[str, ...] = ()) -> Entity:
    return Entity(tenant="t", namespace="ns", key=key, name=name, aliases=aliases)


def test_entity_names_keep_their_trailing_s() -> None:
    known = [ent("paris", "Paris"), ent("pari", "Pari"), ent("james", "James")]
    assert recognize("Flights to Paris for James", known) == ["james", "paris"]
    assert recognize("What did James's sister say about Paris's museums?", known) == [
        "james",
        "paris",
    ]


def test_entity_matching_is_on_whole_words_and_longest_first() -> None:
    known = [ent("new york city", "New York City"), ent("york", "York"), ent("ann", "Ann")]
    assert recognize("moving to new york city soon", known) == ["new york city"]
    assert recognize("York minster", known) == ["york"]
    assert recognize("Annual report on planning", known) == []  # no substring hits


def test_entity_aliases_match() -> None:
    known = [ent("melanie", "Melanie", aliases=("Mel",))]
    assert recognize("How is mel doing?", known) == ["melanie"]
    assert recognize("", known) == []


# -- graph --------------------------------------------------------------------------------


def test_graph_affinity_bonus_by_hops() -> None:
    cands = [
        cand("m0", 0.5, entity="Alice"),
        cand("m1", 0.5, entity="Bob"),
        cand("m2", 0.5, entity="Carol"),
        cand("m9", 0.5, entity="Zed"),
        cand("mn", 0.5),
    ]
    apply_affinity(cands, {"alice": 0, "bob": 1, "carol": 2}, CFG)
    got = {c.id: (c.graph_hops, c.graph_bonus) for c in cands}
    assert got == {
        "m0": (0, 0.30),
        "m1": (1, 0.20),
        "m2": (2, 0.10),
        "m9": (None, -0.05),
        "mn": (None, 0.0),
    }
    # relevance = rrf_norm + bonus (decay 1, no boost yet)
    assert [c.id for c in order(cands)] == ["m0", "m1", "m2", "mn", "m9"]


def test_relation_candidates_have_stable_ids_and_skip_backed_memories() -> None:
    from attestor_arango.clock import from_us

    t = from_us(1_767_225_600_000_000)
    rels = [
        Relation(
            id=f"r{i}",
            tenant="t",
            namespace="ns",
            source="alice",
            relation="works_at",
            target=f"org{i}",
            memory_id=f"m{i}",
            t_created=t,
        )
        for i in range(3)
    ]
    ents = [ent("alice", "Alice"), ent("org0", "Acme")]
    cfg = CFG.replace(relation_limit=5)
    out = relation_candidates(Scope("t", "ns"), rels, ents, ["alice"], {"m1"}, cfg)
    assert [c.id for c in out] == [synthetic_id("r0"), synthetic_id("r2")]
    assert out[0].memory.content == "Alice works at Acme"
    assert out[0].synthetic and out[0].graph_hops == 0
    assert out[0].relevance == pytest.approx(cfg.relation_base + cfg.graph_bonus_0)
    again = relation_candidates(Scope("t", "ns"), rels, ents, ["alice"], {"m1"}, cfg)
    assert [c.id for c in again] == [c.id for c in out]
    limited = relation_candidates(
        Scope("t", "ns"), rels, ents, ["alice"], set(), cfg.replace(relation_limit=1)
    )
    assert len(limited) == 1


# -- decay, boost, freshness ------------------------------------------------------------


def test_decay_and_boost_against_the_view_not_the_clock() -> None:
    old = cand("old", 1.0, day=0)
    new = cand("new", 1.0, day=365)
    half = Candidate(memory=mem("half", day=365, confidence=0.5))
    half.rrf_norm = 1.0
    cfg = CFG.replace(decay_floor=0.7, recency_boost=0.05)
    apply_decay_boost([old, new, half], view_at(365).as_of, cfg)
    # age 365 d, half-life 365 d: 0.7 + 0.3 * 0.5 = 0.85 ; boost 0.05 * e^(-365/30)
    assert old.decay == pytest.approx(0.85)
    assert old.boost == pytest.approx(0.05 * math.exp(-365 / 30))
    assert new.decay == pytest.approx(1.0) and new.boost == pytest.approx(0.05)
    assert half.decay == pytest.approx(0.85)
    assert new.relevance == pytest.approx(1.05)
    # a fact dated after as_of has age 0
    future = cand("future", 1.0, day=400)
    apply_decay_boost([future], view_at(365).as_of, cfg)
    assert future.decay == pytest.approx(1.0)


def test_freshness_demotes_the_older_of_two_restatements() -> None:
    a = cand("a", 1.0, day=1, entity="salary")
    b = cand("b", 0.95, day=5, entity="salary")
    c = cand("c", 0.9, day=9, entity="other")  # same text, other entity: untouched
    vecs = {"a": np.array([1.0, 0.1]), "b": np.array([1.0, 0.0]), "c": np.array([1.0, 0.0])}
    apply_freshness([a, b, c], vecs, CFG)
    # a loses 0.15; b is lifted to just above a's former relevance: 1.0 - 0.95 + 0.001
    assert (a.freshness, c.freshness) == (-0.15, 0.0)
    assert b.freshness == pytest.approx(0.051)
    assert (a.relevance, b.relevance) == (pytest.approx(0.85), pytest.approx(1.001))
    assert [x.id for x in order([a, b, c])] == ["b", "c", "a"]


def test_freshness_ignores_same_session_and_uses_change_cues() -> None:
    from attestor_arango.retrieval.freshness import announces_change
    from attestor_arango.text.stemming import scoring_terms

    assert announces_change(scoring_terms("I moved to Berlin last month"))
    assert announces_change(scoring_terms("I'm going to do a half marathon instead"))
    assert not announces_change(scoring_terms("I live in Paris"))
    # cosine 0.4: below freshness_similarity, above the cue threshold
    vecs = {"old": np.array([1.0, 0.0]), "new": np.array([0.4, math.sqrt(1 - 0.16)])}
    old, new = cand("old", 0.8, day=1), cand("new", 0.5, day=9)
    new.memory = new.memory.model_copy(update={"content": "I moved to Berlin"})
    apply_freshness([old, new], vecs, CFG)
    assert old.freshness == -0.15 and new.relevance > old.relevance
    plain_old, plain_new = cand("old", 0.8, day=1), cand("new", 0.5, day=9)
    plain_new.memory = plain_new.memory.model_copy(update={"content": "I live in Berlin"})
    apply_freshness([plain_old, plain_new], vecs, CFG)  # no cue, low similarity: untouched
    assert (plain_old.freshness, plain_new.freshness) == (0.0, 0.0)
    # ... unless, with a third candidate to compare with, the two are each other's nearest
    third = cand("third", 0.6, day=5)
    far = {**vecs, "third": np.array([-1.0, 0.0])}
    apply_freshness([plain_old, plain_new, third], far, CFG)
    assert plain_old.freshness == -0.15 and plain_new.relevance > plain_old.relevance
    # an earlier third candidate (about another entity) nearer to the new one than the old
    # one is: no update
    near_old, near_new = cand("old", 0.8, day=1), cand("new", 0.5, day=9)
    near_new.memory = near_new.memory.model_copy(update={"content": "I live in Berlin"})
    near = {**vecs, "third": np.array([0.9, math.sqrt(1 - 0.81)])}
    apply_freshness([near_old, near_new, cand("third", 0.3, day=0, entity="x")], near, CFG)
    assert near_new.freshness == 0.0 and near_old.relevance > near_new.relevance
    # ... but when the old one updated that third one (a chain of one subject), the new one
    # nearest to the third updates the old one too
    c_old, c_new = cand("old", 0.8, day=1), cand("new", 0.5, day=9)
    c_new.memory = c_new.memory.model_copy(update={"content": "I live in Berlin"})
    c_third = cand("third", 0.3, day=0)
    apply_freshness([c_old, c_new, c_third], near, CFG)
    assert c_third.freshness == c_old.freshness == -0.15
    assert c_new.relevance > c_old.relevance > c_third.relevance
    s1 = Candidate(memory=mem("s1", "painting sunsets", day=1, session="S1"))
    s2 = Candidate(memory=mem("s2", "painting sunsets", day=2, session="S1"))
    same = {"s1": np.array([1.0, 0.0]), "s2": np.array([1.0, 0.0])}
    apply_freshness([s1, s2], same, CFG)
    assert (s1.freshness, s2.freshness) == (0.0, 0.0)


def _scand(mid: str, relevance: float, day: float, session: str, created: float) -> Candidate:
    c = Candidate(memory=mem(mid, f"statement {mid}", day=day, session=session,
                             created_day=created))  # fmt: skip
    c.rrf_norm = relevance
    c.compute_relevance()
    return c


def test_an_update_is_found_past_a_twin_said_in_the_same_session() -> None:
    # an ingest round keeps a fact and, beside it, the round's verbatim record: two near-equal
    # statements of one session. The twin must not hide the update from the nearest test:
    # old fact "i" (S1) with its twin "i2"; the update "j" (S2) shares no cue word
    vecs = {
        "i": np.array([1.0, 0.0, 0.0]),
        "i2": np.array([0.99, math.sqrt(1 - 0.99**2), 0.0]),
        "j": np.array([0.5, 0.0, math.sqrt(0.75)]),
        "far": np.array([-1.0, 0.0, 0.0]),
    }
    i, i2 = _scand("i", 0.8, 1, "S1", 1.0), _scand("i2", 0.7, 1, "S1", 1.001)
    j, far = _scand("j", 0.5, 9, "S2", 9.0), _scand("far", 0.3, 5, "S3", 5.0)
    apply_freshness([i, i2, j, far], vecs, CFG)
    assert i.freshness == -0.15 and j.relevance > i.relevance
    # ... and the same on the new side: the update "n" (S2) and its twin "n2", which is
    # nearer to the old fact but whose nearest earlier statement is "n" of its own session
    vecs = {
        "o": np.array([1.0, 0.0, 0.0]),
        "n": np.array([0.45, 0.0, math.sqrt(1 - 0.45**2)]),
        "n2": np.array([0.5, 0.1, math.sqrt(1 - 0.25 - 0.01)]),
        "far": np.array([-1.0, 0.0, 0.0]),
    }
    o, far = _scand("o", 0.8, 1, "S1", 1.0), _scand("far", 0.3, 5, "S3", 5.0)
    n, n2 = _scand("n", 0.5, 9, "S2", 9.0), _scand("n2", 0.45, 9, "S2", 9.001)
    apply_freshness([o, n, n2, far], vecs, CFG)
    assert o.freshness == -0.15 and n2.relevance > o.relevance


def test_freshness_needs_an_update_that_answers_the_query() -> None:
    # b restates a (cosine 1) and is newer, but four candidates answer the query better
    # than b: with freshness_update_rank 5 it is the 6th, so a keeps its rank
    a = cand("a", 1.0, day=1)
    others = [cand(f"o{i}", 0.9 - i * 0.01, day=0) for i in range(4)]
    b = cand("b", 0.5, day=9)
    vecs = {"a": np.array([1.0, 0.0]), "b": np.array([1.0, 0.0])}
    vecs |= {o.id: np.array([0.0, 1.0]) for o in others}
    apply_freshness([a, *others, b], vecs, CFG.replace(freshness_update_rank=5))
    assert (a.freshness, b.freshness) == (0.0, 0.0)
    apply_freshness([a, *others, b], vecs, CFG.replace(freshness_update_rank=6))
    assert a.freshness == -0.15 and b.relevance > a.relevance


def test_past_tense_questions_skip_freshness() -> None:
    from attestor_arango.retrieval.freshness import asks_past

    for q in (
        "What did Melanie paint?",
        "Where was the party?",
        "Which car did I use to drive?",
        "What was my salary originally?",
        "Where didn’t they go?",
        # the perfect asks for the events up to now, every one of them
        "What books has Melanie read?",
        "Which cities has Jon visited?",
        "What events have you attended?",
    ):
        assert asks_past(q), q
    for q in (
        "Where do I work?",
        "What is my diet?",
        "Which car do I have?",
        "Who is Ida marrying?",
        # possession, a state, or a perfect that announces a change: what holds now
        "What car have I got?",
        "How long has Melanie been practicing art?",
        "Where have I moved to?",
        "Which phone have I switched to?",
    ):
        assert not asks_past(q), q


# -- budget -------------------------------------------------------------------------------


def test_budget_pack_keeps_order_and_skips_what_does_not_fit() -> None:
    big = Candidate(memory=mem("big", "word " * 50))
    s1 = Candidate(memory=mem("s1", "short one"))
    s2 = Candidate(memory=mem("s2", "short two"))
    budget = count_tokens("short one") + count_tokens("short two") + 1
    kept, counts, used = pack([s2, big, s1], budget)
    assert [c.id for c in kept] == ["s2", "s1"]
    assert counts == [count_tokens("short two"), count_tokens("short one")]
    assert used == count_tokens("short one") + count_tokens("short two") <= budget
    assert pack([s1], 0) == ([], [], 0)


# -- config --------------------------------------------------------------------------------


def test_config_rejects_unknown_and_mistyped_settings() -> None:
    with pytest.raises(ValidationError, match="unknown retrieval settings"):
        RetrievalConfig.from_dict({"decay_floorr": 0.5})
    with pytest.raises(ValidationError, match="must be an integer"):
        RetrievalConfig.from_dict({"vector_k": "50"})
    with pytest.raises(ValidationError, match="true or false"):
        RetrievalConfig.from_dict({"decay_enabled": "yes"})
    with pytest.raises(ValidationError, match="between 0 and 1"):
        RetrievalConfig.from_dict({"decay_floor": 1.5})
    for gone in (
        "llm_temperature",
        "prf_enabled",
        "adaptive_weights",
        "session_vector_k",
        "freshness_min_ratio",
        "mmr_enabled",  # the MMR rerank, deleted in session 8 (docs/configuration.md)
        "mmr_lambda",
    ):
        with pytest.raises(ValidationError, match="unknown retrieval settings"):
            RetrievalConfig.from_dict({gone: 1})
    assert "mmr" not in ScoreBreakdown.model_fields  # no score of a step that no longer runs
    cfg = RetrievalConfig.from_dict({"decay_floor": 1, "vector_k": 10})
    assert cfg.decay_floor == 1.0 and isinstance(cfg.decay_floor, float) and cfg.vector_k == 10
    assert RetrievalConfig.from_dict(None) == RetrievalConfig()
    assert RetrievalConfig.from_dict({"freshness_exempt_tags": ["a"]}).freshness_exempt_tags == (
        "a",
    )
    with pytest.raises(ValidationError, match="list of strings"):
        RetrievalConfig.from_dict({"freshness_exempt_tags": "verbatim"})


def test_freshness_leaves_verbatim_records_alone() -> None:
    a = Candidate(
        memory=mem("a", "I paint sunsets", day=1).model_copy(update={"tags": ("verbatim",)})
    )
    b = Candidate(
        memory=mem("b", "I now paint sunsets", day=9).model_copy(update={"tags": ("verbatim",)})
    )
    vecs = {"a": np.array([1.0, 0.0]), "b": np.array([1.0, 0.0])}
    apply_freshness([a, b], vecs, CFG)
    assert (a.freshness, b.freshness) == (0.0, 0.0)
    apply_freshness([a, b], vecs, CFG.replace(freshness_exempt_tags=()))
    assert a.freshness == -0.15
