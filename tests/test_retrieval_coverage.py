"""Query-term coverage (retrieval/coverage.py), expected values worked out by hand."""

from __future__ import annotations

import math

import pytest
from retrieval_fakes import mem

from attestor_arango.retrieval.candidates import Candidate, order
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.coverage import apply_coverage, query_weights

QUERY = "pottery class in July?"
CFG = RetrievalConfig()


def cand(
    mid: str, content: str, rrf_norm: float, session: str | None, tags: tuple[str, ...] = ("turn",)
) -> Candidate:
    """A conversation turn (tagged like add_turns' turns) unless ``tags`` say otherwise."""
    c = Candidate(memory=mem(mid, content, session=session).model_copy(
        update={"tags": ("verbatim", *tags) if tags == ("turn",) else tags}))  # fmt: skip
    c.rrf_norm = rrf_norm
    c.compute_relevance()
    return c


def pool(b_rrf: float = 0.5) -> list[Candidate]:
    # query terms (stemmed, stop words dropped): potteri, class, juli
    # a: potteri class (S1) | b: juli (S1) | c: potteri (S2) | d: none (no session)
    return [
        cand("a", "pottery class", 0.5, "S1"),
        cand("b", "July plans", b_rrf, "S1"),
        cand("c", "pottery", 0.5, "S2"),
        cand("d", "unrelated words", 0.5, None),
    ]


# idf = ln(1 + (n - df + 0.5) / (df + 0.5)) with n = 4 candidates
IDF_POTTERY = math.log(1 + 2.5 / 2.5)  # df 2 (a, c)
IDF_RARE = math.log(1 + 3.5 / 1.5)  # df 1: class (a), july (b)
TOTAL = IDF_POTTERY + 2 * IDF_RARE


def test_query_weights_are_idf_over_the_candidates() -> None:
    w = query_weights(QUERY, pool())
    assert sorted(w) == ["class", "juli", "potteri"]
    assert w["potteri"] == pytest.approx(IDF_POTTERY)
    assert w["class"] == pytest.approx(IDF_RARE)
    assert w["juli"] == pytest.approx(IDF_RARE)


def test_session_coverage_lifts_a_turn_whose_session_covers_the_query() -> None:
    # b alone matches one rare term and starts below c; its session S1 (a + b) holds
    # every query term (coverage 1.0) while c's session S2 holds only "pottery"
    cands = pool(b_rrf=0.45)
    assert [c.id for c in order(cands)][-1] == "b"
    apply_coverage(cands, QUERY, 0.1)
    by = {c.id: c for c in cands}
    assert by["a"].coverage == pytest.approx(0.1)
    assert by["b"].coverage == pytest.approx(0.1)  # b: 0.45 + 0.1 = 0.55
    assert by["c"].coverage == pytest.approx(0.1 * IDF_POTTERY / TOTAL)  # c: 0.5 + 0.022
    assert by["d"].coverage == 0.0  # no session, no session coverage
    assert [c.id for c in order(cands)] == ["a", "b", "c", "d"]


def test_a_query_of_stop_words_changes_nothing() -> None:
    cands = pool()
    before = [c.relevance for c in cands]
    apply_coverage(cands, "what is the", 0.1)
    assert [c.relevance for c in cands] == before
    assert all(c.coverage == 0.0 for c in cands)


def test_coverage_weights_are_retrieval_settings() -> None:
    cfg = RetrievalConfig.from_dict({"session_coverage_weight": 0})
    assert cfg.session_coverage_weight == 0.0


def test_defaults_lift_by_session_only_and_leave_sessionless_facts_alone() -> None:
    # knowledge-update shape: stand-alone facts, no session ids -> no change at all
    facts = [
        cand("old", "I run about 10 kilometres each week", 1.0, None),
        cand("new", "These days I run 25 kilometres a week", 0.98, None),
    ]
    apply_coverage(facts, "How far do I run each week?", CFG.session_coverage_weight)
    assert [c.coverage for c in facts] == [0.0, 0.0]
    assert [c.relevance for c in facts] == [1.0, 0.98]
    # with sessions, the default lifts S1's turns by 0.3 * 1.0 and S2's by 0.3 * share
    cands = pool()
    apply_coverage(cands, QUERY, CFG.session_coverage_weight)
    by = {c.id: c.coverage for c in cands}
    assert by["a"] == pytest.approx(0.3)
    assert by["b"] == pytest.approx(0.3)
    assert by["c"] == pytest.approx(0.3 * IDF_POTTERY / TOTAL)
    assert by["d"] == 0.0


def test_facts_read_from_a_conversation_take_no_session_coverage() -> None:
    # ingest_round's facts carry their round's session id, but they are stand-alone
    # statements: the old fact's session must not credit it for the question's words
    # ("drink" is in the old session only); the round's verbatim record (tag episode) is
    # a conversation record and does take part
    q = "What do I drink in the morning?"
    old = cand("old", "I drink black coffee every morning", 1.0, "S1", ("ingest",))
    new = cand("new", "I switched to green tea in the mornings", 0.98, "S2", ("ingest",))
    rec = cand("rec", "user: I drink tea now. Any tips?", 0.5, "S3", ("ingest", "episode"))
    apply_coverage([old, new, rec], q, CFG.session_coverage_weight)
    assert (old.coverage, new.coverage) == (0.0, 0.0)
    assert [c.id for c in order([old, new])] == ["old", "new"]  # as the lanes had them
    assert rec.coverage > 0.0


def test_recall_reports_session_coverage_in_the_breakdown() -> None:
    from retrieval_fakes import FakeStore, view_at

    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.retrieval import recall
    from attestor_arango.scope import Scope

    emb = HashingEmbedder(64)
    store = FakeStore(emb)
    # S1 covers both query terms across two turns; the loose fact has no session
    turn = {"tags": ("verbatim", "turn")}
    store.add(mem("t1", "we signed up for a pottery class", day=1, session="S1").model_copy(
        update=turn))  # fmt: skip
    store.add(mem("t2", "it starts in July", day=1, session="S1").model_copy(update=turn))
    store.add(mem("f1", "pottery is fun", day=2))
    scope = Scope("t", "ns")

    def coverage(cfg: RetrievalConfig) -> dict[str, float]:
        resp = recall(store, emb, scope, "pottery July", view_at(10), 2000, cfg)
        return {r.memory.id: r.breakdown.coverage for r in resp.results}

    on = coverage(RetrievalConfig())
    assert on["t1"] == pytest.approx(0.3) and on["t2"] == pytest.approx(0.3)
    assert on["f1"] == 0.0
    off = coverage(RetrievalConfig(coverage_enabled=False))
    assert set(off.values()) == {0.0}


class _NoSessionRead:
    """A provenance whose session must not be read (a plain memory's, under credits_any)."""

    @property
    def session_id(self) -> str:
        raise AssertionError("the session of a memory that is no record was read")


def test_credits_any_is_the_session_test_of_every_candidate_and_skips_plain_memories() -> None:
    """``credits_any`` (``_session`` inline, the tags tested first) answers as ``_session``
    over the candidates: a record with a session credits, a record without one or a plain
    memory with a session does not; and the session of a plain memory (no record tag) is
    never read, since most recalls over plain adds scan every candidate for nothing."""
    from attestor_arango.retrieval.coverage import _session, credits_any

    record = cand("a", "pottery class", 0.5, "S1")
    record_without = cand("b", "July plans", 0.5, None)
    plain_with = cand("c", "pottery", 0.5, "S2", tags=("note",))
    episode = cand("d", "a round", 0.5, "S3", tags=("episode",))
    for given, want in [
        ([record], True),
        ([record_without, plain_with], False),
        ([plain_with, record_without, episode], True),
        ([], False),
    ]:
        assert credits_any(given) is want
        assert credits_any(given) is any(_session(c) is not None for c in given)
    assert [_session(c) for c in (record, record_without, plain_with, episode)] == [
        "S1",
        None,
        None,
        "S3",
    ]
    plain = cand("e", "unrelated words", 0.5, "S4", tags=())
    plain.fields = {**plain.fields, "provenance": _NoSessionRead()}
    assert credits_any([plain, plain_with]) is False
    assert _session(plain) is None
