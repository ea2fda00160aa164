"""Shortcuts of the recall steps after fusion give what the plain code gives (issue 21).

Each test runs the step both ways, or the shortcut against the plain function it stands
in for, on inputs where the shortcut could differ; each fails when its shortcut is broken.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from retrieval_fakes import T0, FakeStore, mem, view_at

from attestor_arango.models import Entity
from attestor_arango.retrieval import pipeline, timecue
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.freshness_search import known_terms
from attestor_arango.retrieval.trace import RecallTrace
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import KnownEntities
from attestor_arango.text.stemming import scoring_terms


class _AskedNames:
    """An entity name index that records the texts it is asked about."""

    def __init__(self, names: Any) -> None:
        self.names, self.asked = names, []

    def find(self, text: str) -> list[str]:
        self.asked.append(text)
        found: list[str] = self.names.find(text)
        return found


class _Store(FakeStore):
    def known_entities(self, scope: Scope) -> KnownEntities:
        known = super().known_entities(scope)
        self.index = _AskedNames(known.names)
        return KnownEntities(known.entities, self.index)  # type: ignore[arg-type]


def _graph(store: _Store, query: str) -> tuple[list[Candidate], list[str]]:
    cands = [Candidate(memory=mem("m1", "Alice moved to Paris", entity="alice"))]
    return pipeline._graph(
        store,
        Scope("t", "ns"),
        query,
        view_at(9),
        RetrievalConfig(),
        cands,
        {},
        RecallTrace(None, "r", "t"),
    )


def test_graph_step_asks_no_name_index_of_a_scope_without_entities() -> None:
    """A scope that knows no entity: no name is looked for in the query (its words are not
    even split); one that knows some: they are looked for and found."""
    store = _Store()
    cands, keys = _graph(store, "Where did Alice move to?")
    assert keys == [] and store.index.asked == [] and cands[0].graph_bonus == 0.0
    store.entities = [Entity(tenant="t", namespace="ns", key="alice", name="Alice")]
    cands, keys = _graph(store, "Where did Alice move to?")
    assert keys == ["alice"] and store.index.asked == ["Where did Alice move to?"]
    assert cands[0].graph_bonus > 0.0


def test_known_terms_are_the_candidates_content_terms() -> None:
    """``known_terms``: a text the memo holds is read from its dict, one it does not is
    tokenised (and then held); terms a step attached are taken as they are; each is the
    very tuple ``content_terms`` gives, and stays on the candidate."""
    scoring_terms.clear()
    texts = ["Alice moved to Paris", "Bob sold his car, then bought a bike", "a the of"]
    for text in texts:
        for warm in (False, True):
            if warm:
                scoring_terms(text)
            else:
                scoring_terms.clear()
            c, plain = (Candidate(memory=mem("m", text)) for _ in range(2))
            got = known_terms(c)
            assert got == plain.content_terms() == scoring_terms(text)
            assert c.terms is got and known_terms(c) is got
    attached = Candidate(memory=mem("m", "Alice moved to Paris"))
    attached.terms = ("held",)
    assert known_terms(attached) == ("held",)


def test_time_cue_of_one_text_at_two_dates_is_each_dates_own() -> None:
    """The time-cue memo is keyed by the text and its datetime: one text said in its own
    month carries no time reference, said in another it does, whichever came first."""
    june = T0.replace(month=6, day=10)
    for first, then in ((0, 40), (40, 0)):
        timecue._carries.clear()
        cands = []
        for shift in (first, then):
            m = mem(f"m{shift}", "Melanie: we went camping in June")
            m = m.model_copy(update={"valid_from": june + timedelta(days=shift)})
            cands.append(Candidate(memory=m))
        timecue.apply_time_cue(cands, "When did Melanie go camping?", 0.1, 0.0)
        for c in cands:
            when = c.memory.valid_from
            want = 0.1 if timecue.carries_time(c.memory.content, when.year, when.month) else 0.0
            assert c.time_cue == want
        assert {c.time_cue for c in cands} == {0.0, 0.1}
