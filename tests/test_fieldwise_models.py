"""Models built field by field (``models.trusted_fieldwise``) are the validated ones.

``candidates.results`` builds each recall's breakdowns and results as a blank model whose
fields are set one by one, in declaration order, before it is given its class. These
tests compare such models with validated ones and with the dict-built ``trusted`` ones,
read them many times (the interpreter specialises attribute reads: a read after the class
change must find the instance's own values), and check what cannot be built so.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.clock import from_us
from attestor_arango.models import (
    Memory,
    Provenance,
    RecallResponse,
    RecallResult,
    ScoreBreakdown,
    trusted,
    trusted_fieldwise,
)
from tests.test_trusted_models import T0, a_memory, same


def fieldwise(cls: type[BaseModel], values: dict[str, Any]) -> Any:
    """``cls`` built as ``trusted_fieldwise`` says: every field set in the given order."""
    blank, fields = trusted_fieldwise(cls)
    m: Any = blank()
    for name, value in values.items():
        setattr(m, name, value)
    m.__pydantic_fields_set__ = fields
    m.__pydantic_extra__ = None
    m.__pydantic_private__ = None
    m.__class__ = cls
    return m


def samples() -> list[tuple[type[BaseModel], dict[str, Any]]]:
    plain = a_memory(tags=("x",))
    breakdown = ScoreBreakdown(rrf=0.25, rrf_norm=-0.0, lanes={"bm25": 1}, synthetic=True)
    result = {"memory": plain, "score": 0.5, "tokens": 3, "breakdown": breakdown}
    response = RecallResponse(
        query="q",
        as_of=from_us(T0),
        results=(RecallResult(**result),),
        tokens_used=3,
        token_budget=10,
    )
    return [
        (Memory, dict(plain)),
        (Provenance, dict(plain.provenance)),
        (ScoreBreakdown, dict(breakdown)),
        (RecallResult, result),
        (RecallResponse, dict(response.__dict__)),  # not dict(): it iterates its results
    ]


def test_a_model_built_field_by_field_is_the_validated_one_and_the_dict_built_one() -> None:
    for cls, values in samples():
        made, validated = fieldwise(cls, dict(values)), cls(**values)
        same(made, validated)
        same(made, trusted(cls, dict(values)))
        assert made.__dict__ == values and made.model_fields_set == set(cls.model_fields)
        with pytest.raises(PydanticValidationError):  # frozen, as the class is
            made.__setattr__(next(iter(values)), None)
    provenance = dict(a_memory().provenance)
    assert hash(fieldwise(Provenance, provenance)) == hash(Provenance(**provenance))


def test_the_fields_come_in_the_order_they_were_set() -> None:
    """Why ``results`` sets every field in declaration order: the instance's dict keeps
    the order its fields were set in, and that order is the model's repr and JSON."""
    values = dict(ScoreBreakdown(rrf=0.5))
    swapped = dict(reversed(list(values.items())))
    made = fieldwise(ScoreBreakdown, swapped)
    assert list(made.__dict__) == list(swapped) != list(ScoreBreakdown.model_fields)
    assert made.model_dump_json() != ScoreBreakdown(**values).model_dump_json()


def test_reads_after_the_class_change_find_each_instance_own_values() -> None:
    """Models of one class made three ways (field by field, from a dict, validated), read
    in one loop often enough for the interpreter to specialise the reads: each read is
    the instance's own value. Fails if a field-by-field model were read through its blank
    class's table of names instead of its own dict."""
    made = []
    for i in range(12):
        values = dict(ScoreBreakdown(rrf=i / 8, decay=1 - i / 16, lanes={"bm25": i}))
        made += [
            fieldwise(ScoreBreakdown, dict(values)),
            trusted(ScoreBreakdown, dict(values)),
            ScoreBreakdown(**values),
        ]
    for _ in range(40):
        for b in made:
            assert (b.rrf, b.decay, b.lanes, b.final) == (
                b.__dict__["rrf"],
                b.__dict__["decay"],
                b.__dict__["lanes"],
                0.0,
            )
    assert [b.lanes["bm25"] for b in made] == [i for i in range(12) for _ in range(3)]


def test_each_class_has_one_blank_of_its_own() -> None:
    breakdown, result = trusted_fieldwise(ScoreBreakdown), trusted_fieldwise(RecallResult)
    assert trusted_fieldwise(ScoreBreakdown)[0] is breakdown[0]
    assert breakdown[0] is not result[0]
    assert breakdown[1] == set(ScoreBreakdown.model_fields)
    assert result[1] == set(RecallResult.model_fields)


def test_a_model_the_blank_cannot_build_is_refused() -> None:
    class Open(BaseModel):  # not frozen: its field set may change
        a: int = 0

    class Slotted(BaseModel):  # a slot of its own: not the blank model's layout
        model_config = ConfigDict(frozen=True)
        __slots__ = ("cache",)
        a: int = 0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of the shadowed property

        class Shadowing(BaseModel):  # a field named as a property of every model
            model_config = ConfigDict(frozen=True)
            model_fields_set: int = 0

    for cls, name in ((Open, "Open"), (Slotted, "Slotted"), (Shadowing, "model_fields_set")):
        with pytest.raises(TypeError, match=name):
            trusted_fieldwise(cls)
