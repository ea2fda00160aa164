"""One way to say what is wrong with a refused request or record.

The REST layer's 422 (``codec.call_kwargs``) and the records' refusals (a turn, an API key
entry, a retention policy, an export row: ``validation.model_problems``) each turned
pydantic's errors into sentences, differently: the API named each top-level field once
and counted the rest as "and N more problems"; the records named every nested location
("tags.1", a union branch's name) and said "and N more". Now both say it through
``validation.problem_sentences``, in the form the API's error bodies already had.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.auth import parse_keys
from attestor_arango.interfaces.api.codec import call_kwargs, params_model
from attestor_arango.validation import MAX_PROBLEMS, model_problems


def _target(a: int, tags: list[int], note: str | None = None) -> None:
    """A signature to validate arguments against."""


RAW = {"a": "x", "tags": ["y", "z"]}  # three errors: fewer than either limit


def test_a_request_and_a_record_with_the_same_problems_are_told_them_alike() -> None:
    with pytest.raises(ValidationError) as api:
        call_kwargs(_target, "TargetParams", RAW, strict=True)
    with pytest.raises(PydanticValidationError) as record:
        params_model(_target, "TargetParams", True).model_validate(RAW)
    said = model_problems(record.value)
    assert api.value.message == f"invalid arguments for TargetParams: {said}"
    assert said.count("tags:") == 1 and "tags.1" not in said and "a:" in said


def test_a_record_with_many_problems_names_the_first_and_counts_the_rest() -> None:
    entry = {"id": 1, "sha256": 2, "tenant": 3, "roles": 4, "agent_ids": 5, "namespaces": 6,
             "read_only": "maybe", "token_budget": "x", "bogus": 1}  # fmt: skip
    with pytest.raises(ValidationError) as info:
        parse_keys([entry], source="keys.yaml")
    message = info.value.message
    assert "invalid API key entry: id: " in message
    assert message.endswith(" more problems"), message
    assert message.count(": ") == MAX_PROBLEMS + 2  # the source, the prefix, a field each
