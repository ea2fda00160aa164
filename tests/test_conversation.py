"""Conversation turns through add_turns: speaker, session, time, reply links, neighbour recall."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from attestor_arango.clock import ManualClock, TickClock
from attestor_arango.config import load_config
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.runtime import Runtime
from attestor_arango.core.writes import Writer
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import QuotaExceededError, ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.ingest.conversation import add_turns
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import RetrievalConfig
from attestor_arango.retrieval.neighbours import ends_asking
from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded.store import SQLiteStore

T0 = datetime(2025, 5, 8, 13, 56, tzinfo=UTC)


def store_turns(mem: AgentMemory, turns: list[dict[str, object]]) -> list:
    return mem.add_turns(turns)  # fmt: skip


def chat(session: str, start: datetime, lines: list[tuple[str, str]]) -> list[dict[str, object]]:
    return [
        {"speaker": who, "text": text, "session_id": session,
         "timestamp": start + timedelta(seconds=30 * i)}
        for i, (who, text) in enumerate(lines)
    ]  # fmt: skip


def test_each_turn_keeps_speaker_session_time_and_the_turn_it_replies_to(
    mem: AgentMemory,
) -> None:
    lines = [("Melanie", "How was the support group?"), ("Caroline", "So powerful, I cried.")]
    first, second = store_turns(mem, chat("S1", T0, lines))
    assert (first.entity, second.entity) == ("Melanie", "Caroline")
    assert second.provenance.session_id == "S1"
    assert second.valid_from == T0 + timedelta(seconds=30)
    assert second.metadata["turn"]["replies_to"] == first.id
    assert first.metadata["turn"]["replies_to"] is None
    assert "replying to Melanie: How was the support group?" in second.content
    assert "verbatim" in second.tags
    # a later call continues the same session: the link crosses calls
    (third,) = store_turns(mem, chat("S1", T0 + timedelta(minutes=5), [("Melanie", "Hugs!")]))
    assert third.metadata["turn"]["replies_to"] == second.id
    assert third.metadata["turn"]["index"] == 2
    # a new session starts unlinked
    (other,) = store_turns(mem, chat("S2", T0 + timedelta(days=3), [("Caroline", "Hi again")]))
    assert other.metadata["turn"]["replies_to"] is None


def test_speakers_become_linked_entities(mem: AgentMemory) -> None:
    store_turns(mem, chat("S1", T0, [("Melanie", "Hi"), ("Caroline", "Hey"), ("Melanie", "Yo")]))
    scope = mem.default_context.scope
    keys = {e.key for e in mem.store.list_entities(scope)}
    assert {"melanie", "caroline"} <= keys
    rels = mem.store.relations_touching(scope, ["melanie"], TemporalView(mem.clock.now_us()))
    assert [(r.source, r.relation, r.target) for r in rels] == [
        ("caroline", "talks_with", "melanie")
    ]


def test_a_bad_turn_rejects_the_whole_call(mem: AgentMemory) -> None:
    turns = chat("S1", T0, [("Melanie", "Hi"), ("Caroline", "Hey")])
    turns.append({"speaker": "", "text": "who am I"})
    with pytest.raises(ValidationError):
        store_turns(mem, turns)
    with pytest.raises(ValidationError):
        store_turns(mem, [{"speaker": "A", "text": "x", "mood": "extra field"}])
    with pytest.raises(ValidationError):
        store_turns(mem, "Melanie: hi")  # type: ignore[arg-type]
    assert mem.list() == []


def test_the_per_agent_write_limit_counts_every_turn(mem: AgentMemory) -> None:
    ctx = replace(mem.default_context, max_writes_per_agent=2)  # contexts are frozen
    with pytest.raises(QuotaExceededError):
        mem.add_turns(chat("S1", T0, [("A", "one"), ("B", "two"), ("A", "three")]), context=ctx)
    assert ctx.writes_made == 0 and mem.list() == []  # refused whole: nothing stored or spent
    mem.add_turns(chat("S1", T0, [("A", "one"), ("B", "two")]), context=ctx)
    assert ctx.writes_made == 2
    with pytest.raises(QuotaExceededError):
        mem.add_turns(chat("S1", T0 + timedelta(minutes=1), [("A", "three")]), context=ctx)


def test_a_reply_lifts_the_turn_it_answers(mem: AgentMemory) -> None:
    """The question turn holds none of the query's words; its answer does."""
    lines = [
        ("Melanie", "What did you do last weekend?"),
        ("Caroline", "I painted a sunset over the lake with my kids."),
        ("Melanie", "The weather was awful here."),
        ("Caroline", "We bought a new sofa for the lounge."),
    ]
    turns = store_turns(mem, chat("S1", T0, lines))
    (alone,) = store_turns(mem, chat("S2", T0 + timedelta(days=2), [("Caroline", "Lake day!")]))
    query = "sunset painting lake"
    mem.retrieval_config = RetrievalConfig(asking_weight=0.0)  # the support alone
    on = {r.memory.id: r.breakdown for r in mem.recall(query).results}
    assert on[turns[0].id].session > 0  # what it was asked by gains from the answer
    assert on[turns[2].id].session > 0  # and what answered it
    assert on[alone.id].session == 0  # no neighbour: nothing to gain
    mem.retrieval_config = RetrievalConfig(neighbour_weight=0.0, asking_weight=0.0)
    off = {r.memory.id: r.breakdown for r in mem.recall(query).results}
    assert all(b.session == 0 for b in off.values())


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("What did you cook for the party?", True),
        ("Wow, that looks great! How long did it take?", True),
        ('He said "are you sure?"', True),  # a closing quote after the mark
        ("Really?!", True),
        ("明天来吗？", True),  # a full-width question mark
        ("هل ستأتي غدا؟", True),
        ("Did you go? I went on Sunday, it was lovely.", False),  # it ends by telling
        ("Take a look! [shares a photo: a lake at dawn]", False),
        ("I wonder what to cook.", False),
    ],
)
def test_a_turn_ends_by_asking_when_its_last_mark_is_a_question_mark(text: str, asks: bool) -> None:
    assert ends_asking(text) is asks


def test_a_turn_that_asks_yields_to_the_turn_that_answers(mem: AgentMemory) -> None:
    """The asking turn holds the query's words; the answer holds the fact."""
    lines = [
        ("Marta", "I heard there was a party at your place. What did you cook for the party?"),
        ("Jonas", "A big spinach lasagna, and everyone took seconds."),
        ("Marta", "Sounds lovely. My week was quiet."),
        ("Jonas", "Quiet weeks are good too."),
    ]
    asked, answer = store_turns(mem, chat("S1", T0, lines))[:2]

    def first(query: str) -> str:
        return next(r.memory.id for r in mem.recall(query).results if not r.breakdown.synthetic)

    assert first("What was cooked for the party?") == answer.id
    # a query about what was asked is answered by the asking turn itself
    assert first("What did Marta ask about the party?") == asked.id
    mem.retrieval_config = RetrievalConfig(asking_weight=0.0)
    assert first("What was cooked for the party?") == asked.id


def test_the_same_words_said_again_later_are_news_again(mem: AgentMemory) -> None:
    """A -> B -> A: the restated A is the newest statement, the old A stays in history."""
    t = datetime(2025, 1, 1, tzinfo=UTC)
    first = mem.add("I work from home.", valid_from=t)
    mem.add("I work at the office every day.", valid_from=t + timedelta(days=30))
    again = mem.add("I work from home.", valid_from=t + timedelta(days=60))
    assert again.id != first.id and again.valid_from == t + timedelta(days=60)
    assert again.supersedes == first.id
    assert mem.get(first.id).superseded_by == again.id
    assert [m.id for m in mem.list(status="all")].count(first.id) == 1
    # without a later event time it is the same memory, as before
    assert mem.add("I work from home.").id == again.id
    assert mem.add("I work from home.", valid_from=t).id == again.id


def test_the_service_needs_only_the_runtime_and_the_writer(
    tmp_path: Path, clock: ManualClock
) -> None:
    """add_turns is a service like the others: no facade, no callback into it."""
    config = load_config(path=str(tmp_path / "svc.db"))
    store = SQLiteStore(str(tmp_path / "svc.db"))
    rt = Runtime(
        config=config,
        store=store,
        embedder=HashingEmbedder(64),
        clock=TickClock(clock),
        ids=SeededIdSource(3),
        signer=None,
        retrieval_config=RetrievalConfig(),
    )
    writer = Writer(rt, Auditor(rt))
    ctx = AgentContext(tenant="t1", agent_id="a1")
    try:
        first, second = add_turns(
            rt, writer, ctx, chat("S1", T0, [("Ana", "Moving to Lyon"), ("Bo", "When?")])
        )
        assert second.metadata["turn"]["replies_to"] == first.id
        assert [e.action for e in store.read_audit(ctx.scope, 100)][-2:] == ["add", "add"]
    finally:
        store.close()
