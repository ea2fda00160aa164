"""Rule-based extraction: speaker lock, frames, time at its original precision."""

from __future__ import annotations

import json

import pytest

from attestor_arango.clock import OPEN, iso, parse_time
from attestor_arango.ingest import LLMExtractor, RuleExtractor
from attestor_arango.ingest.frames import read_clause
from attestor_arango.ingest.model import Fact, Speaker
from attestor_arango.ingest.text import names, stem
from attestor_arango.ingest.timeexpr import find_time
from tests.support.scripted_llm import ScriptedProvider

ANCHOR = parse_time("2026-05-20T10:00:00Z")  # a Wednesday


def facts(text: str, speaker: Speaker = "user", subject: str = "user") -> list[Fact]:
    found, _ = RuleExtractor().extract(text, speaker=speaker, subject=subject, anchor_us=ANCHOR)
    return found


# --- time expressions ----------


@pytest.mark.parametrize(
    ("text", "start", "end", "precision"),
    [
        ("the first weekend of August", "2026-08-01T00:00:00Z", "2026-08-03T00:00:00Z", "weekend"),
        ("I ran 10k yesterday", "2026-05-19T00:00:00Z", "2026-05-20T00:00:00Z", "day"),
        ("It happened last month", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z", "month"),
        ("3 weeks ago I quit", "2026-04-27T00:00:00Z", "2026-05-04T00:00:00Z", "week"),
        ("last summer was hot", "2025-06-01T00:00:00Z", "2025-09-01T00:00:00Z", "season"),
        ("the exam is on June 3rd", "2026-06-03T00:00:00Z", "2026-06-04T00:00:00Z", "day"),
        ("we met in 2019", "2019-01-01T00:00:00Z", "2020-01-01T00:00:00Z", "year"),
    ],
)  # fmt: skip
def test_time_expressions_keep_their_precision(
    text: str, start: str, end: str, precision: str
) -> None:
    span = find_time(text, ANCHOR)
    assert span is not None
    assert (iso(span.start), iso(span.end), span.precision) == (start, end, precision)


def test_since_opens_the_interval_and_may_is_not_a_month() -> None:
    span = find_time("I have lived here since 2019", ANCHOR)
    assert span is not None and span.mode == "since" and span.end == OPEN
    assert find_time("I may go to the gym", ANCHOR) is None
    assert find_time("no dates here at all", ANCHOR) is None


def test_window_fact_stays_a_window_anchored_on_the_turn_time() -> None:
    [fact] = facts("We are going camping the first weekend of August.")
    assert fact.time is not None and fact.time.expression == "the first weekend of August"
    assert iso(fact.valid_from) == "2026-08-01T00:00:00Z"
    assert iso(fact.valid_until) == "2026-08-03T00:00:00Z"
    assert fact.text == "We are going camping the first weekend of August."


def test_change_of_state_opens_from_the_window_start() -> None:
    [fact] = facts("I moved to Berlin last month.")
    assert fact.attribute == "location" and fact.value == "Berlin"
    assert iso(fact.valid_from) == "2026-04-01T00:00:00Z" and fact.valid_until == OPEN


def test_no_time_expression_means_from_the_turn_time() -> None:
    [fact] = facts("I live in Paris.")
    assert fact.valid_from == ANCHOR and fact.valid_until == OPEN


# --- frames ----------


@pytest.mark.parametrize(
    ("clause", "attribute", "value", "single", "negated"),
    [
        ("I live in Paris", "location", "Paris", True, False),
        ("We moved from Paris to Berlin", "location", "Berlin", True, False),
        ("I work at Google", "employer", "Google", True, False),
        ("I am a software engineer", "job", "software engineer", True, False),
        ("I am not married anymore", "relationship_status", "married", True, True),
        ("My favorite color is blue", "favorite_color", "blue", True, False),
        ("I now have 4 cats", "num:have:cat", "4 cats", True, False),
        ("I love sushi", "likes:sushi", "sushi", False, False),
        ("I do not like sushi anymore", "likes:sushi", "sushi", False, True),
        ("I quit smoking", "does:smoke", "smoking", False, True),
        ("The server is down", "status", "down", True, False),
        ("I plan to visit Japan", "intent:visit", "visit Japan", True, False),
        ("Dune was written by Frank Herbert", "authored_by", "Frank Herbert", True, False),
    ],
)
def test_frames(clause: str, attribute: str, value: str, single: bool, negated: bool) -> None:
    r = read_clause(clause, "user")
    assert r is not None
    assert (r.attribute, r.value, r.single_valued, r.negated) == (attribute, value, single, negated)


def test_switch_names_the_replaced_value() -> None:
    r = read_clause("We switched from MySQL to Postgres", "user")
    assert r is not None and r.value == "Postgres" and r.replaces == "MySQL"


def test_names_are_never_stemmed() -> None:
    assert "Paris" in names("I flew to Paris with Tom")
    assert stem("cats") == "cat" and stem("smoking") == stem("smoke")
    [fact] = facts("I live in Paris.")
    assert "Paris" in fact.entities


# --- speaker lock ----------


def test_user_questions_requests_and_filler_are_not_facts() -> None:
    assert facts("Hi! Can you recommend a gym? Thanks. Please be brief.") == []


def test_assistant_restating_the_user_is_not_an_assistant_fact() -> None:
    said = (
        "Since you moved to Berlin, you might like McFit. You live in Berlin, right? Happy to help!"
    )
    assert facts(said, speaker="assistant", subject="Caroline") == []


def test_assistant_introduced_facts_are_kept_and_never_about_the_user() -> None:
    found = facts(
        "McFit has 200 locations in Germany. I recommend the Prenzlauer Berg branch.",
        speaker="assistant",
        subject="Caroline",
    )
    assert [f.text for f in found] == [
        "McFit has 200 locations in Germany.",
        "I recommend the Prenzlauer Berg branch.",
    ]
    assert all(f.speaker == "assistant" and f.subject != "Caroline" for f in found)


def test_user_fact_subject_is_the_user_label() -> None:
    [fact] = facts("I work at Siemens.", subject="Caroline")
    assert fact.subject == "Caroline" and fact.relations == (("Caroline", "works_at", "Siemens"),)


def test_one_sentence_with_two_attributes_gives_two_facts() -> None:
    found = facts("I moved to Berlin and started working at Siemens.")
    assert [(f.attribute, f.value) for f in found] == [
        ("location", "Berlin"),
        ("employer", "Siemens"),
    ]


# --- LLM extractor (scripted) ----------


def llm_answer(*items: dict) -> str:
    return json.dumps({"facts": list(items)})


def test_llm_extractor_maps_facts_and_rejects_ungrounded_ones() -> None:
    provider = ScriptedProvider(
        [
            llm_answer(
                {"text": "The user lives in Lisbon", "subject": "user", "attribute": "location",
                 "value": "Lisbon", "single_valued": True, "relations": [
                     {"source": "user", "relation": "lives_in", "target": "Lisbon"}]},
                {"text": "The user owns a yacht in Monaco", "subject": "user"},
            )
        ]
    )  # fmt: skip
    found, warnings = LLMExtractor(provider).extract(
        "I live in Lisbon these days.", speaker="user", subject="Ana", anchor_us=ANCHOR
    )
    assert [(f.subject, f.attribute, f.value) for f in found] == [("Ana", "location", "Lisbon")]
    assert any("not grounded" in w for w in warnings)
    assert "USER MESSAGE" in provider.calls[0]["prompt"] and provider.calls[0]["temperature"] == 0


def test_llm_extractor_rejects_assistant_facts_about_the_user() -> None:
    provider = ScriptedProvider(
        [llm_answer({"text": "Ana lives in Lisbon", "subject": "Ana"},
                    {"text": "Lisbon has seven hills", "subject": "Lisbon"})]
    )  # fmt: skip
    found, warnings = LLMExtractor(provider).extract(
        "Ana lives in Lisbon. Lisbon has seven hills.",
        speaker="assistant",
        subject="Ana",
        anchor_us=ANCHOR,
    )
    assert [f.text for f in found] == ["Lisbon has seven hills"]
    assert any("about the user" in w for w in warnings)


@pytest.mark.parametrize("step", ["not json at all", {"error": "timeout"}, '{"facts": 3}'])
def test_llm_extractor_falls_back_to_rules_never_drops(step: object) -> None:
    provider = ScriptedProvider([step])  # type: ignore[list-item]
    found, warnings = LLMExtractor(provider).extract(
        "I live in Porto.", speaker="user", subject="user", anchor_us=ANCHOR
    )
    assert [(f.attribute, f.value) for f in found] == [("location", "Porto")]
    assert warnings and "fell back to rules" in warnings[0]


def test_titles_do_not_end_a_sentence() -> None:
    found = facts("I changed doctors, my doctor is now Dr. Kim.")
    assert [f.value for f in found if f.attribute == "doctor"] == ["Dr. Kim"]


def test_reading_starts_at_an_inner_subject() -> None:
    [fact] = facts("After the diet I weigh 75 kg now.")
    assert (fact.subject, fact.attribute, fact.value) == ("user", "num:weigh:kg", "75 kg")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My dentist appointment is on March 3.", "My dentist appointment got moved to March 10."),
        ("The project deadline is Friday.", "The project deadline was pushed to next Wednesday."),
        ("Our wedding is planned for June 2027.", "We moved the wedding to September 2027."),
    ],
)
def test_a_rescheduled_thing_keeps_one_subject_and_attribute(old: str, new: str) -> None:
    [a], [b] = facts(old), facts(new)
    assert (a.subject, a.attribute) == (b.subject, b.attribute)
    assert a.attribute == "when" and a.value != b.value


def test_states_read_alike_whichever_frame_finds_them() -> None:
    [a], [b] = facts("My account is active."), facts("My account got suspended.")
    assert (a.subject, a.attribute, a.value) == ("user's account", "status", "active")
    assert (b.subject, b.attribute, b.value) == ("user's account", "status", "suspended")
    [c] = facts("The production server is back up.")
    assert (c.attribute, c.value) == ("status", "up")


def test_small_talk_is_dropped_but_news_after_an_interjection_is_kept() -> None:
    assert facts("That's awesome, Melanie! Sounds fun! Wow, looks great! Thanks!") == []
    [fact] = facts("Great, I moved to Berlin!")
    assert (fact.attribute, fact.value) == ("location", "Berlin")


def test_feelings_are_not_tracked_as_states() -> None:
    found = facts("I am so excited. I am retired.")
    assert [(f.attribute, f.value) for f in found if f.attribute == "status"] == [
        ("status", "retired")
    ]


def test_a_clause_without_its_own_subject_borrows_one_only_for_a_verb() -> None:
    found = facts("I love art and mental health work matters.")
    assert [f.attribute for f in found] == ["likes:art"]


@pytest.mark.parametrize(
    ("text", "subject", "attribute", "value", "negated"),
    [
        ("My rent is $1,200.", "user", "rent", "$1,200", False),
        ("I'm down to 76 kilograms now.", "user", "num:*:kilogram", "76 kilograms", False),
        ("I've gone fully vegan now.", "user", "diet", "vegan", False),
        ("I am not vegetarian anymore.", "user", "diet", "vegetarian", True),
        ("I'm a smoker.", "user", "does:smoke", "smoke", False),
        ("I decided not to buy a house.", "user", "intent:bui", "buy a house", True),
        ("The launch got postponed to November.", "launch", "when", "November", False),
        ("I extended my lease until June 2026.", "lease", "when", "June 2026", False),
        ("My lease ends in June 2025.", "lease", "when", "in June 2025", False),
    ],
)
def test_more_frames(text: str, subject: str, attribute: str, value: str, negated: bool) -> None:
    [fact] = facts(text)
    assert (fact.subject, fact.attribute, fact.value, fact.negated) == (
        subject, attribute, value, negated,
    )  # fmt: skip


def test_overlapping_time_expressions_keep_the_longer_one() -> None:
    span = find_time("My lease ends in June 2025.", ANCHOR)
    assert span is not None and span.expression == "June 2025" and span.precision == "month"
    assert iso(span.start) == "2025-06-01T00:00:00Z"
