"""The JSON span of a model's answer: the span the old pattern matched, found by two scans."""

from __future__ import annotations

import random
import re

import pytest

from attestor_arango.ingest.model import Action, Fact
from attestor_arango.ingest.resolve import parse_decision
from attestor_arango.llm import json_object_text

OLD = re.compile(r"\{.*\}", re.S)


@pytest.mark.parametrize(
    "answer, span",
    [
        ("", None),
        ("no braces", None),
        ("}{", None),
        ("{", None),
        ("}", None),
        ("{}", "{}"),
        ('```json\n{"a": {"b": 1}}\n```', '{"a": {"b": 1}}'),
        ('x {"a": 1} y {"b": 2} z', '{"a": 1} y {"b": 2}'),
        ("{{{{", None),
        ("a}{b}", "{b}"),
    ],
)
def test_the_span_runs_from_the_first_open_brace_to_the_last_close(
    answer: str, span: str | None
) -> None:
    assert json_object_text(answer) == span


def test_the_span_is_the_one_the_old_pattern_matched_on_random_answers() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        answer = "".join(rng.choice("{}a \n") for _ in range(rng.randrange(0, 24)))
        old = OLD.search(answer)
        assert json_object_text(answer) == (old.group(0) if old else None), answer


def test_an_answer_of_only_open_braces_is_read_as_no_object() -> None:
    # 400,000 braces: the old pattern's backtracking needed ~100 s for this (measured 0.95 s at
    # 40,000, quadratic); the two scans read it twice.
    fact = Fact(text="Alice lives in Paris", speaker="user", subject="Alice")
    decision = parse_decision("{" * 400_000, fact=fact, episode_id="e", allowed=set())
    assert decision.action is Action.ADD and "no JSON object" in decision.reason
