"""Dense session evidence (retrieval/sessionvec.py), expected values worked out by hand."""

from __future__ import annotations

import pytest
from retrieval_fakes import mem

from attestor_arango.errors import ValidationError
from attestor_arango.retrieval.candidates import Candidate, order
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.sessionvec import apply_session_vector, session_vector_scores


def cand(mid: str, session: str | None, cos: float | None, rrf_norm: float) -> Candidate:
    c = Candidate(memory=mem(mid, session=session))
    if cos is not None:
        c.lane_scores["vector"] = cos
    c.rrf_norm = rrf_norm
    c.compute_relevance()
    return c


def pool() -> list[Candidate]:
    # S1: one close turn (a); S2: two fairly close turns (b, c); S3: one turn that
    # starts on top (d, a chance match); e has no session and the lowest cosine 0.50
    return [
        cand("a", "S1", 0.80, 0.50),
        cand("b", "S2", 0.70, 0.55),
        cand("c", "S2", 0.66, 0.40),
        cand("d", "S3", 0.78, 0.56),
        cand("e", None, 0.50, 0.45),
    ]


def test_session_score_is_the_mean_of_its_k_best_cosines_padded_with_the_floor() -> None:
    # k = 2, floor 0.50: S1 (0.80 + 0.50) / 2, S2 (0.70 + 0.66) / 2, S3 (0.78 + 0.50) / 2
    assert session_vector_scores(pool(), 2) == pytest.approx({"S1": 0.65, "S2": 0.68, "S3": 0.64})
    # k = 1 is the session's best turn alone
    assert session_vector_scores(pool(), 1) == pytest.approx({"S1": 0.80, "S2": 0.70, "S3": 0.78})


def test_a_session_with_two_close_turns_overtakes_a_single_chance_match() -> None:
    cands = pool()
    # before: d 0.56, b 0.55, a 0.50, e 0.45, c 0.40 -> sessions first seen S3, S2, S1
    assert [c.id for c in order(cands)] == ["d", "b", "a", "e", "c"]
    apply_session_vector(cands, 0.1, 2)
    by = {c.id: c for c in cands}
    # min-max over 0.64 .. 0.68: S2 -> 1.0, S1 -> 0.25, S3 -> 0.0; times 0.1
    assert by["b"].session_vector == pytest.approx(0.1)
    assert by["c"].session_vector == pytest.approx(0.1)
    assert by["a"].session_vector == pytest.approx(0.025)
    assert by["d"].session_vector == 0.0
    assert by["e"].session_vector == 0.0  # no session, no session evidence
    # after: b 0.65, d 0.56, a 0.525, c 0.50, e 0.45 -> sessions S2, S3, S1
    assert [c.id for c in order(cands)] == ["b", "d", "a", "c", "e"]
    assert by["a"].relevance == pytest.approx(0.525)
    assert by["b"].breakdown().session_vector == pytest.approx(0.1)


def test_input_order_does_not_change_the_result() -> None:
    forward, backward = pool(), pool()[::-1]
    apply_session_vector(forward, 0.1, 2)
    apply_session_vector(backward, 0.1, 2)
    assert {c.id: c.relevance for c in forward} == {c.id: c.relevance for c in backward}


@pytest.mark.parametrize(
    "cands",
    [
        # a single session: nothing to compare it with
        [cand("a", "S1", 0.8, 0.5), cand("b", "S1", 0.6, 0.4)],
        # no session ids (stand-alone facts)
        [cand("a", None, 0.8, 0.5), cand("b", None, 0.6, 0.4)],
        # no vector lane
        [cand("a", "S1", None, 0.5), cand("b", "S2", None, 0.4)],
        # every session scores alike
        [cand("a", "S1", 0.7, 0.5), cand("b", "S2", 0.7, 0.4)],
    ],
)
def test_nothing_to_rank_changes_nothing(cands: list[Candidate]) -> None:
    before = [c.relevance for c in cands]
    apply_session_vector(cands, 0.1, 2)
    assert [c.relevance for c in cands] == before
    assert all(c.session_vector == 0.0 for c in cands)


def test_a_turn_without_a_cosine_shares_its_session_score() -> None:
    cands = [cand("a", "S1", 0.9, 0.5), cand("b", "S1", None, 0.3), cand("c", "S2", 0.5, 0.5)]
    apply_session_vector(cands, 0.1, 1)
    assert [c.session_vector for c in cands] == pytest.approx([0.1, 0.1, 0.0])


def test_settings_are_validated() -> None:
    cfg = RetrievalConfig.from_dict({"session_vector_weight": 0, "session_vector_k": 3})
    assert cfg.session_vector_weight == 0.0 and cfg.session_vector_k == 3
    with pytest.raises(ValidationError):
        RetrievalConfig(session_vector_k=0)


def test_recall_reports_session_vector_evidence_in_the_breakdown() -> None:
    from retrieval_fakes import FakeStore, view_at

    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.retrieval import recall
    from attestor_arango.scope import Scope

    emb = HashingEmbedder(64)
    store = FakeStore(emb)
    store.add(mem("t1", "we signed up for a pottery class", day=1, session="S1"))
    store.add(mem("t2", "the pottery class starts in July", day=1, session="S1"))
    store.add(mem("u1", "a pottery mug", day=2, session="S2"))
    store.add(mem("f1", "pottery is fun", day=2))
    scope = Scope("t", "ns")

    def evidence(cfg: RetrievalConfig) -> dict[str, float]:
        resp = recall(store, emb, scope, "pottery class", view_at(10), 2000, cfg)
        return {r.memory.id: r.breakdown.session_vector for r in resp.results}

    on = evidence(RetrievalConfig(session_vector_enabled=True))
    assert on["f1"] == 0.0  # no session
    assert on["t1"] == on["t2"]  # one session, one value
    # S1 has two turns on the query, S2 one (padded with the lowest cosine): S1 gets
    # the full weight, S2 none
    assert on["t1"] == pytest.approx(0.1) and on["u1"] == 0.0
    off = evidence(RetrievalConfig())  # off by default (see RetrievalConfig)
    assert set(off.values()) == {0.0}
