"""Knowledge updates through ingest_round, and the round verbatim where recall finds it.

Everything goes through the public API (``ingest_round``, ``recall``, ``timeline``,
``current_facts``) with the rule-based extractor and no entity or category given.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from attestor_arango.clock import ManualClock, iso
from attestor_arango.memory import AgentMemory

DAY0 = datetime(2025, 3, 3, 9, tzinfo=UTC)


def say(mem: AgentMemory, clock: ManualClock, day: int, **turn: str) -> object:
    at = DAY0 + timedelta(days=day)
    clock.set(at)
    return mem.ingest_round({**turn, "timestamp": at.isoformat(), "session_id": f"s{day}"})


def first_content(mem: AgentMemory, question: str) -> str:
    results = [r for r in mem.recall(question).results if r.memory.category != "relation"]
    return results[0].memory.content


def test_a_question_in_a_round_is_found_by_recall_verbatim(
    mem: AgentMemory, clock: ManualClock
) -> None:
    result = say(
        mem,
        clock,
        0,
        user="Can you find me a quiet campsite near Loch Ness for the Easter weekend?",
        assistant="Sure, I will look for campsites around Loch Ness.",
    )
    verbatim = result.verbatim  # type: ignore[attr-defined]
    assert verbatim is not None and verbatim.category == "episode"
    assert verbatim.provenance.source_episode_id == result.episode.id  # type: ignore[attr-defined]
    found = mem.recall("which campsite did I ask about?")
    assert found.results and found.results[0].memory.id == verbatim.id
    episode = mem.get_episode(found.results[0].memory.provenance.source_episode_id or "")
    assert "Loch Ness" in episode.user_text
    # a record, not a fact
    assert all(m.category != "episode" for m in mem.current_facts())


def test_a_round_its_facts_already_say_gets_no_second_copy(
    mem: AgentMemory, clock: ManualClock
) -> None:
    result = say(mem, clock, 0, user="I live in Paris.", assistant="Nice!")
    assert result.verbatim is None  # type: ignore[attr-defined]
    contents = [r.memory.content for r in mem.recall("where do I live?").results]
    assert contents.count("I live in Paris.") == 1 and not any("user:" in c for c in contents)


def test_an_update_the_assistant_reports_outranks_the_users_old_fact(
    mem: AgentMemory, clock: ManualClock
) -> None:
    say(mem, clock, 0, user="My delivery address is 4 Mill Lane.")
    say(mem, clock, 1, user="I keep bees on my allotment.")
    said = say(
        mem,
        clock,
        30,
        user="Any news on that?",
        assistant="I've changed your delivery address to 27 Harbour Street.",
    )
    clock.set(DAY0 + timedelta(days=40))
    assert "27 Harbour Street" in first_content(mem, "Where do my deliveries go?")
    # the report is the assistant's statement, kept on the user's side
    [report] = said.memories  # type: ignore[attr-defined]
    assert report.metadata["ingest"]["speaker"] == "assistant"
    assert report.entity == "user" and "speaker:assistant" in report.tags
    # the old address is history, never deleted: timeline and as_of still show it
    history = [m.content for m in mem.timeline("user")]
    assert "My delivery address is 4 Mill Lane." in history
    before = iso(int((DAY0 + timedelta(days=10)).timestamp() * 1_000_000))
    old = [m.content for m in mem.current_facts(entity="user", as_of=before)]
    assert "My delivery address is 4 Mill Lane." in old
    assert not any("Mill Lane" in m.content for m in mem.current_facts(entity="user"))


def test_a_reversal_makes_the_restated_value_current(mem: AgentMemory, clock: ManualClock) -> None:
    say(mem, clock, 0, user="I commute by train.")
    say(mem, clock, 30, user="I commute by car.")
    third = say(mem, clock, 60, user="I commute by train.")
    clock.set(DAY0 + timedelta(days=70))
    top = mem.recall("How do I commute?").results[0].memory
    assert top.content == "I commute by train."
    assert top.provenance.source_episode_id == third.episode.id  # type: ignore[attr-defined]
    assert len([m for m in mem.timeline("user") if m.content == "I commute by train."]) == 2
