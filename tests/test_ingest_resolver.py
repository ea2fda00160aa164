"""The four-decision resolver, rule-based and through a scripted LLM provider."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from attestor_arango.clock import parse_time
from attestor_arango.ingest import Action, LLMResolver, RuleExtractor, RuleResolver
from attestor_arango.ingest.model import Fact, Speaker
from attestor_arango.llm import RetryPolicy
from attestor_arango.models import Memory, Provenance, content_hash
from tests.support.scripted_llm import ScriptedProvider

ANCHOR = parse_time("2026-03-01T12:00:00Z")
T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)  # stored earlier the same day: a repeat is no news
LATER = datetime(2026, 4, 1, 9, tzinfo=UTC)


def fact_of(text: str, speaker: Speaker = "user") -> Fact:
    found, _ = RuleExtractor().extract(text, speaker=speaker, subject="user", anchor_us=ANCHOR)
    assert found, f"no fact in {text!r}"
    return found[0]


def stored(text: str, mid: str, speaker: Speaker | None = "user", at: datetime = T0) -> Memory:
    """A memory as ingest writes it (structured reading in metadata), or as add() writes it."""
    metadata = {} if speaker is None else {"ingest": fact_of(text, speaker).describe()}
    return Memory(
        id=mid,
        tenant="t",
        namespace="n",
        content=text,
        entity="user",
        valid_from=at,
        t_created=at,
        provenance=Provenance(agent_id="a", role="executor"),
        content_hash=content_hash(text),
        metadata=metadata,
    )


# (name, stored statements, new statement, expected action, expected target)
CASES = [
    ("add", ["I live in Paris."], "I love sushi.", Action.ADD, None),
    ("update", ["I work at Google."], "I work at Google Zurich.", Action.UPDATE, "m0"),
    ("invalidate", ["I live in Paris."], "I moved to Berlin.", Action.INVALIDATE, "m0"),
    ("noop", ["I work at Google."], "I currently work at Google.", Action.NOOP, "m0"),
    ("noop-verbatim", ["I love sushi."], "I love sushi!", Action.NOOP, "m0"),
    ("polarity", ["I love sushi."], "I do not like sushi anymore.", Action.INVALIDATE, "m0"),
    ("number", ["I have 3 cats."], "I now have 4 cats.", Action.INVALIDATE, "m0"),
    ("switch", ["We use MySQL.", "We use Redis."], "We switched from MySQL to Postgres.",
     Action.INVALIDATE, "m0"),
    ("multi-valued", ["I love sushi."], "I love ramen.", Action.ADD, None),
    ("other-subject", ["My sister lives in Rome."], "I live in Madrid.", Action.ADD, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "old", "new", "action", "target"), CASES, ids=[c[0] for c in CASES]
)
def test_rule_resolver(
    name: str, old: list[str], new: str, action: Action, target: str | None
) -> None:
    candidates = [stored(text, f"m{i}") for i, text in enumerate(old)]
    d = RuleResolver().decide(fact_of(new), candidates, "ep-1")
    assert (d.action, d.target_id) == (action, target), d.reason
    assert d.evidence_episode_id == "ep-1" and d.decided_by == "rules"


def test_rule_resolver_reads_memories_written_without_ingest_metadata() -> None:
    d = RuleResolver().decide(
        fact_of("I moved to Lyon."), [stored("I live in Paris.", "m0", None)], "e"
    )
    assert (d.action, d.target_id) == (Action.INVALIDATE, "m0")


def test_the_same_claim_said_again_in_a_later_month_is_news_again() -> None:
    # "by train" -> "by car" -> "by train": the third statement must become the current
    # version (the write path treats the same words at a later event time the same way)
    train = stored("I commute by train.", "m0", at=datetime(2026, 1, 5, tzinfo=UTC))
    car = stored("I commute by car.", "m1", at=datetime(2026, 2, 5, tzinfo=UTC))
    d = RuleResolver().decide(fact_of("I commute by train."), [train, car], "e")
    assert (d.action, d.target_id) == (Action.UPDATE, "m0"), d.reason
    again = RuleResolver().decide(fact_of("I'm employed at the council again."),
                                  [stored("I'm employed at the council.", "m0",
                                          at=datetime(2026, 1, 5, tzinfo=UTC))], "e")  # fmt: skip
    assert (again.action, again.target_id) == (Action.UPDATE, "m0"), again.reason


def test_an_assistant_report_of_a_change_acts_on_the_users_memory() -> None:
    mine = stored("My flight is in economy.", "m0")
    said = "You've been upgraded: your flight is now in business class."
    found, _ = RuleExtractor().extract(said, speaker="assistant", subject="user", anchor_us=ANCHOR)
    [report] = [f for f in found if f.attribute == "flight"]
    assert report.speaker == "assistant" and report.owner == "user"
    d = RuleResolver().decide(report, [mine], "e")
    assert (d.action, d.target_id) == (Action.INVALIDATE, "m0"), d.reason
    # and the user's later word acts on the assistant's report in turn
    reported = Memory(**{**mine.model_dump(), "id": "m1", "content": report.text,
                         "metadata": {"ingest": report.describe()}})  # fmt: skip
    d = RuleResolver().decide(fact_of("My flight is in premium economy."), [reported], "e")
    assert d.target_id == "m1" and d.action in {Action.INVALIDATE, Action.UPDATE}, d.reason


def test_a_trade_replaces_what_was_owned() -> None:
    yaris = stored("I bought a Toyota Yaris.", "m0")
    d = RuleResolver().decide(fact_of("I traded the Yaris for a Kia EV6."), [yaris], "e")
    assert (d.action, d.target_id) == (Action.INVALIDATE, "m0"), d.reason
    bike = stored("I bought a road bike.", "m1")
    d = RuleResolver().decide(fact_of("I traded the Yaris for a Kia EV6."), [bike], "e")
    assert d.action is Action.ADD  # another thing owned is not what was traded


def test_a_change_the_assistant_relays_acts_on_the_users_memory_of_that_subject() -> None:
    plumber = stored("The plumber is coming in the morning.", "m0")
    pets = stored("My neighbour has three parrots.", "m1")
    relay = fact_of("The plumber rescheduled for the afternoon.", "assistant")
    d = RuleResolver().decide(relay, [pets, plumber], "e")
    assert (d.action, d.target_id) == (Action.INVALIDATE, "m0"), d.reason
    # a news marker announces the change too
    venue = stored("The wedding reception is in the ballroom.", "m2")
    news = fact_of("Good news from the hotel: the reception will be held in the orangery.",
                   "assistant")  # fmt: skip
    d = RuleResolver().decide(news, [pets, venue], "e")
    assert (d.action, d.target_id) == (Action.INVALIDATE, "m2"), d.reason
    # a plain assistant fact (no change relayed) stays on its own side
    plain = fact_of("The plumber is a friendly man.", "assistant")
    assert RuleResolver().decide(plain, [plumber], "e").action is Action.ADD
    # and a relayed change about another subject touches nothing of the user's
    other = fact_of("The bakery moved to the high street.", "assistant")
    assert RuleResolver().decide(other, [plumber, pets], "e").action is Action.ADD


def test_an_assistant_restating_or_guessing_about_the_user_states_nothing() -> None:
    for said in (
        "You live in Munich.",
        "Your flight might be moved to business class.",
        "Is your flight now in business class?",
        "If you want, I can switch your flight to business class.",
    ):
        found, _ = RuleExtractor().extract(said, speaker="assistant", subject="user",
                                           anchor_us=ANCHOR)  # fmt: skip
        assert found == [], said


def test_user_fact_never_acts_on_an_assistant_memory() -> None:
    assistant_said = stored("The office is in Paris.", "m0", "assistant")
    d = RuleResolver().decide(fact_of("The office is in Paris."), [assistant_said], "e")
    assert d.action is Action.ADD


def test_assistant_fact_never_acts_on_a_user_memory() -> None:
    user_said = stored("Postgres is slow.", "m0", "user")
    d = RuleResolver().decide(fact_of("Postgres is slow.", "assistant"), [user_said], "e")
    assert d.action is Action.ADD


# --- the same cases through a scripted LLM ----------------------------------------------------


def answer(action: str, target: str | None) -> str:
    return json.dumps({"action": action, "target_id": target, "reason": "scripted"})


@pytest.mark.parametrize(
    ("name", "old", "new", "action", "target"),
    [c for c in CASES if c[1]],
    ids=[c[0] for c in CASES if c[1]],
)
def test_llm_resolver_applies_each_decision(
    name: str, old: list[str], new: str, action: Action, target: str | None
) -> None:
    provider = ScriptedProvider([{"response": answer(action.value, target), "expect": new}])
    candidates = [stored(text, f"m{i}") for i, text in enumerate(old)]
    d = LLMResolver(provider).decide(fact_of(new), candidates, "ep-9")
    assert (d.action, d.target_id, d.decided_by) == (action, target, "llm")
    assert d.evidence_episode_id == "ep-9"
    prompt = provider.calls[0]["prompt"]
    assert all(f"m{i} | {text}" in prompt for i, text in enumerate(old))
    assert provider.calls[0]["temperature"] == 0


@pytest.mark.parametrize(
    "raw",
    [
        "I think you should INVALIDATE it",
        "{not json}",
        '{"action": "MERGE", "target_id": "m0"}',
        '{"action": "INVALIDATE", "target_id": "m-unknown"}',
        '{"action": "UPDATE"}',
        "[1, 2]",
        "",
    ],
)
def test_llm_malformed_decision_becomes_add_never_a_drop(raw: str) -> None:
    provider = ScriptedProvider([raw])
    d = LLMResolver(provider).decide(
        fact_of("I moved to Berlin."), [stored("I live in Paris.", "m0")], "e"
    )
    assert d.action is Action.ADD and d.target_id is None
    assert d.decided_by == "fallback" and d.reason.startswith("unparseable decision")


def test_llm_answer_in_a_code_fence_is_parsed() -> None:
    provider = ScriptedProvider(["```json\n" + answer("NOOP", "m0") + "\n```"])
    d = LLMResolver(provider).decide(
        fact_of("I live in Paris."), [stored("I live in Paris.", "m0")], "e"
    )
    assert (d.action, d.target_id) == (Action.NOOP, "m0")


def test_llm_timeout_falls_back_to_the_rules_after_retries() -> None:
    sleeps: list[float] = []
    provider = ScriptedProvider(
        [{"error": "timeout"}, {"error": "timeout"}],
        retry=RetryPolicy(attempts=2),
        sleep=sleeps.append,
    )
    d = LLMResolver(provider).decide(
        fact_of("I moved to Berlin."), [stored("I live in Paris.", "m0")], "e"
    )
    assert (d.action, d.target_id, d.decided_by) == (Action.INVALIDATE, "m0", "fallback")
    assert "llm_timeout" in d.reason and len(provider.calls) == 2 and sleeps == [0.5]


def test_llm_is_not_asked_without_candidates_and_never_sees_other_speakers() -> None:
    provider = ScriptedProvider([])
    d = LLMResolver(provider).decide(
        fact_of("The office is in Paris."),
        [stored("The office is in Paris.", "m0", "assistant")],
        "e",
    )
    assert d.action is Action.ADD and provider.calls == []


def test_plans_coexist_unless_the_speaker_says_they_changed() -> None:
    old = [stored("I want to help people through it.", "m0")]
    same_verb = RuleResolver().decide(fact_of("I want to help make that happen."), old, "e")
    assert same_verb.action is Action.ADD
    changed = RuleResolver().decide(fact_of("I want to help animals instead."), old, "e")
    assert (changed.action, changed.target_id) == (Action.INVALIDATE, "m0")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I weigh 82 kilograms.", "I'm down to 76 kilograms now."),
        ("The product launch is planned for September.", "The launch was pushed back to November."),
        ("I'm a smoker.", "I quit smoking three months ago."),
        ("I plan to buy a house next year.", "I decided not to buy a house."),
        ("I'm vegetarian.", "I've gone fully vegan now."),
    ],
)
def test_updates_phrased_differently_still_invalidate(old: str, new: str) -> None:
    d = RuleResolver().decide(fact_of(new), [stored(old, "m0")], "e")
    assert (d.action, d.target_id) == (Action.INVALIDATE, "m0"), d.reason


def test_a_head_noun_alone_does_not_make_two_subjects_equal() -> None:
    d = RuleResolver().decide(
        fact_of("My sister lives in Rome."), [stored("My brother lives in Oslo.", "m0")], "e"
    )
    assert d.action is Action.ADD


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The invoice from Globex is unpaid.", "We paid the Globex invoice yesterday."),
        ("My car insurance is active.", "I cancelled my car insurance."),
        ("The feature flag for dark mode is off.", "We turned the dark mode feature flag on."),
        ("My monthly rent is $1,400.", "The landlord raised my rent to $1,650 a month."),
        ("The team budget for the project is 40,000 euros.",
         "The project budget was cut to 28,000 euros."),
    ],
)  # fmt: skip
def test_things_named_two_ways_are_one_subject(old: str, new: str) -> None:
    d = RuleResolver().decide(fact_of(new), [stored(old, "m0")], "e")
    assert (d.action, d.target_id) == (Action.INVALIDATE, "m0"), d.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Losing my job was hard, but I'm living my dream.", "Losing my job was tough."),
        ("That sounds great!", "I am so excited."),
        ("I want to help people through it.", "I want to help make that happen."),
    ],
)
def test_restatements_from_real_chat_never_invalidate(old: str, new: str) -> None:
    candidates = [stored(old, "m0")]
    found, _ = RuleExtractor().extract(new, speaker="user", subject="user", anchor_us=ANCHOR)
    for fact in found:
        assert RuleResolver().decide(fact, candidates, "e").action is not Action.INVALIDATE
