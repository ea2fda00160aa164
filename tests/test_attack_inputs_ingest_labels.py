"""Adversarial finding: names an extractor produced reached the store unchecked.

``add`` refuses a name (entity, category) with a control character, a lone UTF-16
surrogate or over 256 characters; ``ingest_round`` wrote the names its extractor found
(a model's answer, or the rules reading the user's own words: "I live in Par\\x1b[2Jis")
to the memory, the graph's entities and relations as they came. A surrogate failed the
user's whole round, an escape sequence was stored for every terminal showing the graph
to obey, and a model's reason holding a surrogate made the memory unreadable over REST.
Now each fact is held to ``add``'s checks (``ingest/labels.py``): what fails is dropped
on its own with a warning in the round's result and the round is kept; the resolver's
reason is kept only as valid text. A turn's text with a lone surrogate is refused
before anything is stored, naming it, and a turn's metadata can no longer replace the
checked ``user_name`` that consolidation reads.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored

from attestor_arango.errors import ValidationError
from attestor_arango.ingest import LLMExtractor, LLMResolver, RuleExtractor, RuleResolver
from attestor_arango.ingest.model import Fact, Speaker
from attestor_arango.ingest.pipeline import Backends
from attestor_arango.memory import AgentMemory
from tests.support.scripted_llm import ScriptedProvider

ROUND = {"user": "I live in Paris.", "assistant": "Noted, Paris it is."}


class FakeExtractor:
    """Answers every call with the facts it was given, for the speaker asked."""

    name = "fake"

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def extract(
        self, text: str, *, speaker: Speaker, subject: str, anchor_us: int
    ) -> tuple[list[Fact], list[str]]:
        if speaker != "user":
            return [], []
        base: dict[str, Any] = {
            "text": "I live in Paris.",
            "speaker": speaker,
            "subject": subject,
            "attribute": "location",
            "value": "Paris",
            "single_valued": True,
            "entities": (subject, "Paris"),
            "relations": ((subject, "lives_in", "Paris"),),
            "valid_from": anchor_us,
        }
        return [Fact(**{**base, **self.fields})], []


def _graph(mem: AgentMemory) -> list[str]:
    """Every entity name and relation field stored, in order."""
    db = sqlite3.connect(Path(mem.store.path))  # type: ignore[attr-defined]
    try:
        names = [row[0] for row in db.execute("SELECT name FROM entities ORDER BY key")]
        for row in db.execute("SELECT source, relation, target FROM relations ORDER BY id"):
            names += list(row)
        return names
    finally:
        db.close()


def _clean(names: list[str]) -> bool:
    """No control character, no lone surrogate (neither is printable), no over-long name."""
    return all(name.isprintable() and len(name) <= 256 for name in names)


BAD_LABELS: dict[str, tuple[dict[str, Any], str, bool]] = {
    # fields of the fact, the warning's start, whether the fact is still written
    "escape in an entity": ({"entities": ("user", "Par\x1b[2Jis")}, "dropped an entity", True),
    "surrogate in an entity": ({"entities": ("user", "Par\ud800is")}, "dropped an entity", True),
    "long entity": ({"entities": ("user", "P" * 300)}, "dropped an entity", True),
    "bell in a relation's target": (
        {"relations": (("user", "lives_in", "Paris\x07"),)},
        "dropped a relation",
        True,
    ),
    "NUL in a relation": (
        {"relations": (("user", "lives\x00in", "Paris"),)},
        "dropped a relation",
        True,
    ),
    "surrogate in a relation's source": (
        {"relations": (("us\udc00er", "lives_in", "Paris"),)},
        "dropped a relation",
        True,
    ),
    "escape in the category": ({"attribute": "loc\x1bation"}, "kept a user fact without", True),
    "surrogate in the value": ({"value": "Par\ud800is"}, "kept a user fact without", True),
    "escape in the subject": ({"subject": "Ann\x1b[31m"}, "dropped a user fact", False),
    "long subject": ({"subject": "A" * 300}, "dropped a user fact", False),
    "surrogate in the owner": ({"owner": "An\ud800n"}, "dropped a user fact", False),
    "surrogate in the words": ({"text": "I live in Par\ud800is."}, "dropped a user fact", False),
    "words over the limit": ({"text": "I live " + "x" * 40_000}, "dropped a user fact", False),
}


@pytest.mark.parametrize("case", list(BAD_LABELS))
def test_a_bad_extracted_label_is_dropped_and_the_round_kept(tmp_path: Path, case: str) -> None:
    mem, _, _ = seeded(tmp_path)
    fields, warning, written = BAD_LABELS[case]
    mem.ingest_backends = Backends(FakeExtractor(**fields), RuleResolver())  # type: ignore[arg-type]
    result = mem.ingest_round(ROUND, context=CTX)
    assert any(w.startswith(warning) for w in result.warnings), result.warnings
    assert mem.get_episode(result.episode.id, context=CTX) is not None  # the round is kept
    facts = [m for m in result.memories if m.content == "I live in Paris."]
    assert bool(facts) == written, result.memories
    if not written:  # its words are still found: in the round's verbatim memory
        assert result.verbatim is not None
    for memory in facts:
        assert memory.entity == "user"
        assert memory.category in {"location", None}
    assert _clean(_graph(mem)), _graph(mem)
    mem.close()


def test_a_clean_fact_is_written_whole(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    mem.ingest_backends = Backends(FakeExtractor(), RuleResolver())  # type: ignore[arg-type]
    result = mem.ingest_round(ROUND, context=CTX)
    assert result.warnings == ()
    (fact,) = [m for m in result.memories if m.content == "I live in Paris."]
    assert (fact.entity, fact.category) == ("user", "location")
    assert {"Paris", "user", "lives_in", "paris"} <= set(_graph(mem))
    mem.close()


def test_the_rules_drop_an_escape_sequence_read_from_the_users_words(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    mem.ingest_backends = Backends(RuleExtractor(), RuleResolver())
    result = mem.ingest_round({"user": "I live in Par\x1b[2Jis."}, context=CTX)
    assert any(w.startswith("dropped an entity") for w in result.warnings), result.warnings
    assert result.memories and _clean(_graph(mem)), _graph(mem)
    mem.close()


def test_a_models_bad_labels_are_dropped_from_its_facts(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    answer = {
        "facts": [
            {
                "text": "I live in Paris",
                "subject": "user",
                "attribute": "location",
                "value": "Paris",
                "single_valued": True,
                "entities": ["Paris\x1b]0;owned\x07", "Par\ud800is", "Paris"],
                "relations": [{"source": "user", "relation": "lives_in", "target": "\x1b[2J"}],
            },
            {"text": "I live in Paris", "subject": "\x1b[31mAnn"},
        ]
    }
    provider = ScriptedProvider([json.dumps(answer), json.dumps({"facts": []})])
    mem.ingest_backends = Backends(LLMExtractor(provider), RuleResolver())
    result = mem.ingest_round(ROUND, context=CTX)
    assert sum(w.startswith("dropped an entity") for w in result.warnings) == 2
    assert sum(w.startswith("dropped a relation") for w in result.warnings) == 1
    assert sum(w.startswith("dropped a user fact") for w in result.warnings) == 1
    (fact,) = [m for m in result.memories if m.content == "I live in Paris"]
    assert (fact.entity, fact.category) == ("user", "location")
    assert _clean(_graph(mem)) and "Paris" in _graph(mem), _graph(mem)
    mem.close()


def test_a_models_reason_that_is_no_text_is_not_kept(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    mem.ingest_round({"user": "I live in Paris."}, context=CTX)
    answer = json.dumps({"action": "ADD", "reason": "new \ud800"})  # an escaped lone surrogate
    mem.ingest_backends = Backends(RuleExtractor(), LLMResolver(ScriptedProvider([answer] * 4)))
    result = mem.ingest_round({"user": "I live in Paris now, near the river."}, context=CTX)
    (written,) = result.memories
    reason = mem.get(written.id, context=CTX).metadata["ingest"]["reason"]
    assert reason.encode("utf-8") and "not valid text" in reason
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")  # REST can answer it
    mem.close()


def test_a_turn_with_a_lone_surrogate_is_refused_naming_it(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    with pytest.raises(ValidationError, match="turn text holds a lone UTF-16 surrogate"):
        mem.ingest_round({"user": "I live in Par\ud800is."}, context=CTX)
    assert stored(mem) == before
    mem.close()


def test_turn_metadata_cannot_replace_the_checked_user_name(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    mem.ingest_backends = Backends.rules()
    turn = {"user": "I live in Paris.", "user_name": "Ann", "metadata": {"user_name": "\x1b[2J"}}
    result = mem.ingest_round(turn, context=CTX)
    assert result.episode.metadata["user_name"] == "Ann"
    stored_episode = mem.get_episode(result.episode.id, context=CTX)
    assert stored_episode is not None and stored_episode.metadata["user_name"] == "Ann"
    mem.close()
